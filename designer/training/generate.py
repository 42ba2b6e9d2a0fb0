"""Text and audio from a trained run (``rnn-designer generate`` and the output window)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from designer.engines.build import BuildError, Net
from designer.graph import project as P

from . import checkpoint as C
from .sampling import Sampler, score


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


def load_trained(run_dir: str | Path, which: str = "best", device: str = "cpu") -> TrainedModel:
    """Build the run's net from its checkpoint (its own copy of the project, not the file)."""
    ck = C.load(run_dir, which, with_state=False)
    dev = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                       ("cpu" if device == "auto" else device))
    net = net_for(ck.meta, ck.weights, ck.path)
    return TrainedModel(net.to(dev).eval(), ck.meta, ck.path, dev)


def net_for(meta: dict, weights: dict, where: Path | str) -> Net:
    """The net a run trained, built from its ``meta`` (the project, the number of classes, the
    engines: a checkpoint's, or a live run's) and loaded with ``weights``.

    Raises ``GenerateError`` naming ``where`` when the project or the weights do not fit.
    """
    try:
        project = P.from_dict(meta["project"], file=Path(where) / "meta.json")
    except (P.ProjectError, KeyError) as e:
        raise GenerateError(f"{where}/meta.json holds no usable project ({e})") from None
    graph = project.graph
    data = meta.get("data", {})
    if data.get("num_classes") is not None:
        graph.pin_dims({"V": int(data["num_classes"])})
    for name, engine in meta.get("engines", {}).items():
        if name in graph and graph.layer(name).type in ("LSTM", "GRU", "RNN"):
            graph.set_param(name, "engine", engine)
    try:
        net = Net(graph)
        net.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
    except (BuildError, RuntimeError) as e:
        raise GenerateError(f"{where} cannot be loaded into its own net "
                            f"({str(e).splitlines()[0]})") from None
    return net.eval()


def generate_text(model: TrainedModel, prime: str, n: int, temperature: float = 1.0,
                  top_k: int = 0, seed: int | None = None,
                  on_text: Callable[[str], object] | None = None,
                  stop: Callable[[], bool] | None = None,
                  on_scored: Callable[[str, float, list], object] | None = None) -> str:
    """``n`` characters after ``prime`` (a newline when empty), streamed to ``on_text``.

    ``on_scored(char, surprise, top)`` gets, before ``on_text``, how surprising the model
    found each character it wrote (nats, at temperature 1) and its top five guesses there as
    ``[(char, p), ...]``."""
    if model.kind != "text":
        raise GenerateError(f"{model.path} was trained on {model.kind} data, not text")
    ids = model.encode(prime or ("\n" if "\n" in model.vocab else model.vocab[0]))
    vocab = model.vocab

    def scored(i: int, logits) -> None:
        nats, top = score(logits, i)
        on_scored(vocab[i], nats, [(vocab[j], p) for j, p in top])

    out = Sampler(model.net, model.device).sample(
        ids, n, temperature, top_k, seed,
        on_symbol=(lambda i: on_text(vocab[i])) if on_text else None, stop=stop,
        on_logits=scored if on_scored else None)
    return model.decode(out)


def generate_audio(model: TrainedModel, seconds: float, path: str | Path,
                   temperature: float = 1.0, top_k: int = 0, seed: int | None = None,
                   progress: Callable[[int, int], object] | None = None) -> tuple[Path, np.ndarray]:
    """``seconds`` of audio written to ``path`` as a WAV; returns the path and the samples."""
    from .data.audio import codec_to_wav
    from .data.quantize import Quantizer
    if model.kind != "audio":
        raise GenerateError(f"{model.path} was trained on {model.kind} data, not audio")
    codec = model.meta["data"]["codec"]
    quantizer = Quantizer.from_dict(codec["quantizer"])
    n = max(1, int(round(seconds * codec["sample_rate"])))
    silence = int(quantizer.encode(np.zeros(1))[0])
    done = [0]

    def tick(_):
        done[0] += 1
        if progress and done[0] % 500 == 0:
            progress(done[0], n)

    classes = Sampler(model.net, model.device).sample([silence], n, temperature, top_k, seed,
                                                      on_symbol=tick)
    written = codec_to_wav(classes, path, codec)
    return written, quantizer.decode(np.asarray(classes))


def generate_from_run(args) -> int:
    """The ``generate`` command."""
    if args.n < 0:
        raise GenerateError("-n must be 0 or more")
    if args.temperature < 0:
        raise GenerateError("--temperature must be 0 (most likely symbol) or more")
    model = load_trained(args.run_dir, args.checkpoint, args.device)
    if model.kind == "text":
        if args.wav:
            raise GenerateError(f"{model.path} is a text model; --wav is for audio runs")
        sys.stdout.write(args.prime)
        sys.stdout.flush()

        def emit(ch: str) -> None:
            sys.stdout.write(ch)
            sys.stdout.flush()

        generate_text(model, args.prime, args.n, args.temperature, args.top_k, args.seed,
                      on_text=emit)
        sys.stdout.write("\n")
        return 0
    if model.kind == "audio":
        if not args.wav:
            raise GenerateError(f"{model.path} is an audio model: give --wav OUT.wav (and "
                                "--seconds)")
        seconds = args.seconds if args.seconds else args.n / model.meta["data"]["codec"][
            "sample_rate"]
        from tqdm import tqdm
        bar = tqdm(total=int(round(seconds * model.meta["data"]["codec"]["sample_rate"])),
                   unit="sample", file=sys.stderr, dynamic_ncols=True)
        path, _ = generate_audio(model, seconds, args.wav, args.temperature, args.top_k,
                                 args.seed, progress=lambda d, t: bar.update(d - bar.n))
        bar.close()
        print(f"wrote {seconds:.2f} s of audio to {path}")
        return 0
    raise GenerateError(f"{model.path} was trained on {model.kind} data; generation is for text "
                        "and audio runs")
