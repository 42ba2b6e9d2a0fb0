"""What a net is inspected on: one sequence, in the form its data layer feeds it.

A `Probe` is plain data (numpy and lists), so it crosses threads and goes into records as
``to_dict()``. Text runs read characters (typed, or a fixed snippet of the held-out text),
audio runs a stretch of held-out samples as classes, MNIST runs one held-out digit row by row.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

KINDS = ("text", "audio", "mnist")
DEFAULT_STEPS = 100
MAX_STEPS = 2000


class ProbeError(Exception):
    """An input the net cannot be inspected on; ``str()`` is one sentence."""


@dataclass
class Probe:
    """One input sequence for :func:`designer.training.readout.inspect.inspect`.

    Attributes
    ----------
    kind : str
        ``text``, ``audio`` or ``mnist``.
    data : ndarray
        Text and audio: ``(T,)`` class ids; MNIST: ``(T, F)`` float rows in [0, 1].
    labels : list of str
        What each step reads (a character, a class, a row number), for the x axis.
    target : int or None
        MNIST: the digit, the class the loss is measured against.
    batch_first : bool
        Whether the data layer feeds (N, T, ...) instead of (T, N, ...).
    origin : str
        Where the input came from, in words ("typed text", "held-out text of ...").
    """

    kind: str
    data: np.ndarray
    labels: list = field(default_factory=list)
    target: int | None = None
    batch_first: bool = False
    origin: str = ""

    @property
    def steps(self) -> int:
        return len(self.data)

    @property
    def text(self) -> str | None:
        """The characters read, for text probes."""
        return "".join(self.labels) if self.kind == "text" else None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "data": self.data.tolist(), "labels": list(self.labels),
                "target": self.target, "batch_first": self.batch_first, "origin": self.origin}

    @classmethod
    def from_dict(cls, d: dict) -> "Probe":
        dtype = np.float32 if d["kind"] == "mnist" else np.int64
        return cls(d["kind"], np.asarray(d["data"], dtype=dtype), list(d["labels"]),
                   d.get("target"), bool(d.get("batch_first")), d.get("origin", ""))

    def feeds(self, data_layer: str, device) -> dict:
        """What ``Net.forward`` takes: the data (one sequence) and its continuation flags."""
        if self.kind == "mnist":
            x = torch.as_tensor(self.data, dtype=torch.float32, device=device)
            x = x.unsqueeze(0) if self.batch_first else x.unsqueeze(1)
            return {f"{data_layer}.data": x}
        x = torch.as_tensor(self.data, dtype=torch.long, device=device).view(-1, 1)
        cont = torch.ones(x.shape, dtype=torch.float32, device=device)
        cont[0] = 0.0
        return {f"{data_layer}.data": x, f"{data_layer}.cont": cont}


def text_probe(text: str, vocab: list[str], origin: str = "typed text") -> Probe:
    """The characters of ``text`` over a run's vocabulary.

    Raises
    ------
    ProbeError
        The text is empty, too long, or holds characters the model never saw.
    """
    if len(text) < 2:
        raise ProbeError("the text to inspect needs at least 2 characters (the net predicts "
                         "each from those before it)")
    if len(text) > MAX_STEPS:
        raise ProbeError(f"the text to inspect has {len(text):,} characters; at most "
                         f"{MAX_STEPS:,} can be shown")
    index = {c: i for i, c in enumerate(vocab)}
    missing = sorted({c for c in text if c not in index})
    if missing:
        shown = ", ".join(repr(c) for c in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise ProbeError(f"the text holds {shown}, which the model never saw (its vocabulary "
                         f"has {len(vocab)} characters)")
    return Probe("text", np.array([index[c] for c in text], dtype=np.int64), list(text),
                 origin=origin)


def held_out_probe(source, steps: int = DEFAULT_STEPS, quiet: bool = False) -> Probe | None:
    """A fixed piece of ``source``'s held-out data (its training data when none is held out).

    Text starts at the first line after a blank line (a speaker's name, in a play) and ends at
    a line end where one is near; audio is the first ``steps`` held-out samples; MNIST the
    first held-out digit. The same source gives the same probe every time. ``quiet``: return
    ``None`` instead of raising when the source has nothing to offer.
    """
    if quiet:
        try:
            return held_out_probe(source, steps)
        except (ProbeError, ValueError, StopIteration, KeyError):
            return None
    if source.kind not in ("text", "audio", "mnist"):
        raise ProbeError(f"{Path(source.path).name} holds {source.kind} data: a held-out piece "
                         "is read from text, audio and MNIST runs")
    split = "val" if "val" in source.splits else "train"
    where = "held-out" if split == "val" else "training"
    name = Path(source.path).name
    if source.kind == "mnist":
        batch = next(iter(source.eval_batches(1, split)))
        first = bool(getattr(source, "batch_first", True))
        rows = batch["data"][0] if first else batch["data"][:, 0]
        return Probe("mnist", rows.numpy().astype(np.float32),
                     [str(r) for r in range(rows.shape[0])], int(batch["label"].reshape(-1)[0]),
                     first, f"the first {where} digit of {name}")
    ids = source.symbols(split)
    steps = max(2, min(int(steps), MAX_STEPS, len(ids)))
    start = 0
    if source.kind == "text":
        head = source.decode(ids[:4000])
        blank = head.find("\n\n")
        if 0 <= blank and blank + 2 + steps <= len(ids):
            start = blank + 2
    window = ids[start:start + steps].numpy().astype(np.int64)
    if source.kind == "text":
        text = source.decode(window)
        end = text.rfind("\n", int(0.6 * len(text)))
        if end > 0:
            window, text = window[:end + 1], text[:end + 1]
        return Probe("text", window, list(text), origin=f"{where} text of {name}")
    return Probe(source.kind, window, [str(int(v)) for v in window],
                 origin=f"the first {len(window):,} {where} samples of {name}")
