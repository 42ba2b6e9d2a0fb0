"""Text and audio from a trained run (``rnn-designer generate`` and the output window).

>>> model = load_trained("runs/char-rnn-...")          # on the device the run trained on
>>> out = generate(model, 500, prime="ROMEO:", streams=4)
>>> out.texts[0][:20], out.per_second, out.hint
('ROMEO:\\nWhat say you', 21034.2, None)

Defaults come from the run's data layer (``LayerSpec.generation``): temperature 0.8 for text,
1.0 for audio, whose sample-level models fall silent below 1. Every result says how fast it was
written and, when the output is degenerate (near-silence, one short loop), how to do better.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from designer.engines.net.build import BuildError, Net
from designer.graph import project as P
from designer.graph import registry
from designer.graph import registry
from designer.graph.spec import GenerationDefaults

from designer.training.readout.decode import StreamDecoder
from designer.training.run import checkpoint as C
from designer.training.trained import quality

FALLBACK_DEFAULTS = GenerationDefaults(1.0, why="the model's own distribution")


class GenerateError(Exception):
    """Generation cannot start; ``str()`` says why in one sentence."""


@dataclass
class TrainedModel:
    """A run's net, loaded from a checkpoint, with what it needs to read and write symbols."""

    net: Net
    meta: dict
    path: Path
    device: torch.device

    @property
    def kind(self) -> str:
        return self.meta["data"]["kind"]

    @property
    def vocab(self) -> list[str] | None:
        return self.meta["data"].get("vocab")

    @property
    def defaults(self) -> GenerationDefaults:
        """The generation defaults of the run's data layer (its spec's ``generation``)."""
        for layer in self.meta.get("project", {}).get("graph", {}).get("layers", []):
            try:
                spec = registry.get(layer.get("type", ""))
            except Exception:  # noqa: BLE001 - an unknown type holds no defaults
                continue
            if spec.is_source and spec.generation is not None:
                return spec.generation
        return FALLBACK_DEFAULTS

    @property
    def codec(self) -> dict:
        return self.meta["data"]["codec"]

    def encode(self, text: str) -> list[int]:
        index = {c: i for i, c in enumerate(self.vocab)}
        missing = sorted({c for c in text if c not in index})
        if missing:
            shown = ", ".join(repr(c) for c in missing[:5])
            raise GenerateError(f"the prime holds {shown}, which the model never saw (its "
                                f"vocabulary has {len(index)} characters)")
        return [index[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.vocab[i] for i in ids)


def trained_dims(data: dict) -> dict:
    """The dims a run's data bound, as its checkpoint records them (so its net builds even
    where the data can no longer be read)."""
    kind = data.get("kind")
    if kind == "series":
        return {"F": len(data["inputs"])} if "inputs" in data else {}
    if kind == "classes":
        dims = {"K": len(data["classes"])} if "classes" in data else {}
        if "features" in data:
            dims["F"] = len(data["features"]) * int(data.get("frame", 1))
        return dims
    return {"V": int(data["num_classes"])} if "num_classes" in data else {}


def pick_device(wanted: str, trained_on: str | None) -> torch.device:
    """Where to generate: ``auto`` is the device the run trained on when this machine has it
    (else the CPU); ``cpu``, ``cuda`` and ``cuda:N`` are taken as asked, if present."""
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", wanted):
        raise GenerateError(f"unknown device '{wanted}' (use auto, cpu, cuda or cuda:N)")
    if wanted == "auto":
        wanted = trained_on or "cpu"
        if wanted.startswith("cuda") and not torch.cuda.is_available():
            return torch.device("cpu")
        dev = torch.device(wanted)
        if dev.type == "cuda" and dev.index is not None and \
                dev.index >= torch.cuda.device_count():
            return torch.device("cuda")
        return dev
    dev = torch.device(wanted)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise GenerateError("the CUDA device was asked for, but no CUDA GPU is available "
                                "(use --device cpu)")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise GenerateError(f"there is no GPU {dev.index}: this machine has "
                                f"{torch.cuda.device_count()}")
    return dev


def load_trained(run_dir: str | Path, which: str = "best", device: str = "auto") -> TrainedModel:
    """Build the run's net from its checkpoint (its own copy of the project, not the file), on
    ``device`` (see :func:`pick_device`)."""
    ck = C.load(run_dir, which, with_state=False)
    dev = pick_device(device, ck.meta.get("device"))
    net = net_for(ck.meta, ck.weights, ck.path)
    return TrainedModel(net.to(dev).eval(), ck.meta, ck.path, dev)


def net_for(meta: dict, weights: dict, where: Path | str) -> Net:
    """The net a run trained, built from its ``meta`` (the project, the dims its data bound,
    the engines: a checkpoint's, or a live run's) and loaded with ``weights``.

    Raises ``GenerateError`` naming ``where`` when the project or the weights do not fit.
    """
    try:
        project = P.from_dict(meta["project"], file=Path(where) / "meta.json")
    except (P.ProjectError, KeyError) as e:
        raise GenerateError(f"{where}/meta.json holds no usable project ({e})") from None
    graph = project.graph
    graph.pin_dims(trained_dims(meta.get("data", {})))
    for name, engine in meta.get("engines", {}).items():
        if name in graph and graph.layer(name).type in registry.engine_kinds():
            graph.set_param(name, "engine", engine)
    try:
        net = Net(graph)
        net.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
    except (BuildError, RuntimeError) as e:
        raise GenerateError(f"{where} cannot be loaded into its own net "
                            f"({str(e).splitlines()[0]})") from None
    return net.eval()


@dataclass
class Generated:
    """What one generation wrote, stream by stream, and how.

    Attributes
    ----------
    kind
        ``text`` or ``audio``.
    symbols
        ``(n, K)`` int64: the ids (characters, or audio classes) each stream wrote.
    texts
        Text runs: each stream's text, without the prime.
    samples
        Audio runs: each stream's samples, floats in [-1, 1], at ``rate`` per second.
    temperature, top_k
        The settings used (the data's defaults where none was given).
    device, graph_note
        Where it ran, and whether its step was captured in a CUDA graph.
    seconds
        The wall time of the writing itself (the prime included, loading not).
    stopped
        Ended early by ``stop``.
    hint
        One line on degenerate output (near-silence, one short loop), else ``None``.
    """

    kind: str
    symbols: np.ndarray
    temperature: float
    top_k: int
    device: str
    graph_note: str
    seconds: float
    stopped: bool = False
    texts: list[str] = field(default_factory=list)
    samples: list[np.ndarray] = field(default_factory=list)
    rate: int | None = None
    hint: str | None = None

    @property
    def streams(self) -> int:
        return int(self.symbols.shape[1])

    @property
    def per_second(self) -> float:
        """Symbols (characters or samples) written per second, summed over the streams."""
        return self.symbols.size / max(self.seconds, 1e-9)

    def levels(self) -> list[quality.Levels]:
        """Peak and RMS of each audio stream."""
        return [quality.levels(s) for s in self.samples]


def generate(model: TrainedModel, n: int, prime: str = "", temperature: float | None = None,
             top_k: int | None = None, seed: int | None = None, streams: int = 1,
             on_chunk: Callable[[list], object] | None = None,
             stop: Callable[[], bool] | None = None, graphs: bool = True,
             on_scored: Callable[[list], object] | None = None) -> Generated:
    """Write ``n`` symbols in each of ``streams`` streams.

    Parameters
    ----------
    model
        A loaded run (:func:`load_trained`); text or audio.
    n
        Characters (text) or samples (audio) per stream.
    prime
        Text runs: what every stream continues (a newline when empty). Audio runs continue a
        quarter second of the training audio kept with the run (``codec["prime"]``; runs from
        before it was kept start from one sample of silence); it is not part of the output.
    temperature, top_k
        ``None``: the run's data layer's defaults.
    seed
        The same seed, device and settings write the same.
    on_chunk
        Gets each new piece of every stream as it is read back: a list of ``streams`` strings
        (text) or float sample arrays (audio).
    stop
        Asked between chunks; generation ends early when it says so.
    graphs
        Capture the step in a CUDA graph on a GPU.
    on_scored
        Text runs: gets, just before ``on_chunk`` with the same piece, a list per stream of
        ``(chars, surprise, top)``: each character, how surprised the model was by it (nats,
        at temperature 1: its own belief, whatever temperature drew it) and its five
        likeliest characters there as ``[(char, p), ...]``. Scored in the step itself (on
        the device, captured with it), read back with the symbols.
    """
    if model.kind not in ("text", "audio"):
        raise GenerateError(f"{model.path} was trained on {model.kind} data; generation is "
                            "for text and audio runs")
    backwards = [n for n in model.net.recurrent
                 if getattr(model.net.layers[n], "directions", 1) == 2]
    if backwards:
        raise GenerateError(f"{backwards[0]} is bidirectional: its backward half reads each "
                            "sequence from its end, so the model cannot write one symbol after "
                            "another")
    if n < 0:
        raise GenerateError("the length must be 0 or more")
    if streams < 1:
        raise GenerateError("--streams must be at least 1")
    d = model.defaults
    temperature = d.temperature if temperature is None else float(temperature)
    top_k = d.top_k if top_k is None else int(top_k)
    if temperature < 0:
        raise GenerateError("the temperature must be 0 (most likely symbol) or more")
    if top_k < 0:
        raise GenerateError("top-k must be 0 (off) or more")
    if model.kind == "text":
        start = model.encode(prime or ("\n" if "\n" in model.vocab else model.vocab[0]))
        quantizer = None
    else:
        from designer.training.data.quantize import Quantizer
        quantizer = Quantizer.from_dict(model.codec["quantizer"])
        start = [int(c) for c in model.codec.get("prime") or []] or \
            [int(quantizer.encode(np.zeros(1))[0])]

    def pieces(ids: np.ndarray) -> list:
        if quantizer is None:
            return [model.decode(ids[:, k].tolist()) for k in range(ids.shape[1])]
        return [quantizer.decode(ids[:, k]) for k in range(ids.shape[1])]

    t0 = time.perf_counter()
    scoring = on_scored is not None and quantizer is None
    dec = StreamDecoder(model.net, streams, model.device, temperature, top_k, seed, graphs,
                        scored=scoring)
    dec.prime(start)
    held: list = []  # a chunk's scores, read back just before its symbols reach `chunk`

    def chunk(c: np.ndarray) -> None:
        if scoring:
            on_scored(scored_pieces(model.vocab, c, *held))
        if on_chunk is not None:
            on_chunk(pieces(c))

    ids = dec.run(n, chunk if on_chunk or scoring else None, stop,
                  (lambda *a: held.__setitem__(slice(None), a)) if scoring else None)
    seconds = time.perf_counter() - t0
    out = Generated(model.kind, ids, temperature, top_k, str(model.device), dec.graph_note,
                    seconds, dec.stopped)
    if quantizer is None:
        out.texts = pieces(ids)
        out.hint = quality.text_hint(out.texts, temperature, d.temperature)
    else:
        out.samples, out.rate = pieces(ids), int(model.codec["sample_rate"])
        out.hint = quality.audio_hint(out.samples, temperature, d.temperature,
                                      model.codec.get("rms"))
    return out


def scored_pieces(vocab: list, ids: np.ndarray, surprise: np.ndarray, top_i: np.ndarray,
                  top_p: np.ndarray) -> list:
    """Per stream, ``(chars, surprise, top)`` of one chunk (see :func:`generate`)."""
    out = []
    for k in range(ids.shape[1]):
        top = [[(vocab[i], p) for i, p in zip(ti, tp)]
               for ti, tp in zip(top_i[:, k].tolist(), top_p[:, k].tolist())]
        out.append(([vocab[i] for i in ids[:, k].tolist()], surprise[:, k].tolist(), top))
    return out


def generate_text(model: TrainedModel, prime: str, n: int, temperature: float | None = None,
                  top_k: int | None = None, seed: int | None = None,
                  on_text: Callable[[str], object] | None = None,
                  stop: Callable[[], bool] | None = None,
                  on_scored: Callable[[str, float, list], object] | None = None) -> str:
    """``n`` characters after ``prime`` (one stream), streamed to ``on_text`` in pieces.

    ``on_scored(char, surprise, top)`` gets, before the piece it is in reaches ``on_text``,
    how surprised the model was by each character it wrote (nats, at temperature 1) and its
    top five guesses there as ``[(char, p), ...]``."""
    if model.kind != "text":
        raise GenerateError(f"{model.path} was trained on {model.kind} data, not text")

    def scored(streams: list) -> None:
        for ch, nats, top in zip(*streams[0]):
            on_scored(ch, nats, top)

    out = generate(model, n, prime, temperature, top_k, seed, 1,
                   (lambda p: on_text(p[0])) if on_text else None, stop,
                   on_scored=scored if on_scored else None)
    return out.texts[0]


def wav_paths(path: str | Path, streams: int) -> list[Path]:
    """``OUT.wav`` for one stream; ``OUT-1.wav``, ``OUT-2.wav``... for several."""
    path = Path(path)
    if streams == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{k + 1}{path.suffix}") for k in range(streams)]


def write_wavs(out: Generated, path: str | Path) -> list[Path]:
    """Write each audio stream as a 16-bit PCM WAV (atomically); returns the files."""
    from designer.training.data.wavfile import write_wav
    return [write_wav(p, s, out.rate) for p, s in zip(wav_paths(path, out.streams), out.samples)]
