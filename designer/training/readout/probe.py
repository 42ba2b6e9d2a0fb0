"""What a net is inspected on: one sequence, in the form its data layer feeds it.

A `Probe` is plain data (numpy and lists), so it crosses threads and goes into records as
``to_dict()``. Text runs read characters (typed, or a fixed snippet of the held-out text),
audio runs a stretch of held-out samples as classes, MNIST runs one held-out digit row by row,
sequence classifiers one test sequence and forecasters one test window
(:func:`sequence_probe`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

KINDS = ("text", "audio", "mnist", "classes", "series")
FLOAT_KINDS = ("mnist", "classes", "series")  # the data are rows of features
DEFAULT_STEPS = 100
MAX_STEPS = 2000


class ProbeError(Exception):
    """An input the net cannot be inspected on; ``str()`` is one sentence."""


class InspectError(Exception):
    """A net or input that cannot be inspected; ``str()`` is one sentence (raised by
    :mod:`.inspect` and :mod:`.sequences`, kept here where both can reach it)."""


@dataclass
class Probe:
    """One input sequence for :func:`designer.training.readout.inspect.inspect`.

    Attributes
    ----------
    kind : str
        ``text``, ``audio``, ``mnist``, ``classes`` (a sequence to classify) or ``series`` (a
        window to forecast from).
    data : ndarray
        Text and audio: ``(T,)`` class ids; MNIST: ``(T, F)`` float rows in [0, 1]; classes
        and series: ``(T, F)`` float rows, normalised as the net was trained on them.
    labels : list of str
        What each step reads (a character, a class, a row number), for the x axis.
    target : int or None
        MNIST and classes: the class the loss is measured against (``None``: unlabelled).
    batch_first : bool
        Whether the data layer feeds (N, T, ...) instead of (T, N, ...).
    origin : str
        Where the input came from, in words ("typed text", "held-out text of ...").
    info : dict
        Plain data the kind needs besides: classes the class names, the sequence's place in
        its split; series the window in the target's units, the truth after it and how the
        net's output becomes units (see :func:`sequence_probe`).
    """

    kind: str
    data: np.ndarray
    labels: list = field(default_factory=list)
    target: int | None = None
    batch_first: bool = False
    origin: str = ""
    info: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.data)

    @property
    def text(self) -> str | None:
        """The characters read, for text probes."""
        return "".join(self.labels) if self.kind == "text" else None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "data": self.data.tolist(), "labels": list(self.labels),
                "target": self.target, "batch_first": self.batch_first, "origin": self.origin,
                "info": self.info}

    @classmethod
    def from_dict(cls, d: dict) -> "Probe":
        dtype = np.float32 if d["kind"] in FLOAT_KINDS else np.int64
        return cls(d["kind"], np.asarray(d["data"], dtype=dtype), list(d["labels"]),
                   d.get("target"), bool(d.get("batch_first")), d.get("origin", ""),
                   dict(d.get("info") or {}))

    def feeds(self, data_layer: str, device) -> dict:
        """What ``Net.forward`` takes: the data (one sequence) and its continuation flags."""
        if self.kind in FLOAT_KINDS:
            x = torch.as_tensor(self.data, dtype=torch.float32, device=device)
            x = x.unsqueeze(0) if self.batch_first else x.unsqueeze(1)
            feeds = {f"{data_layer}.data": x}
            if self.kind == "classes":
                feeds[f"{data_layer}.lengths"] = torch.tensor([self.steps], device=device)
            return feeds
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


def held_out_probe(source, steps: int = DEFAULT_STEPS, quiet: bool = False,
                   pick: str | None = None) -> Probe | None:
    """A fixed piece of ``source``'s held-out data (its training data when none is held out).

    Text starts at the first line after a blank line (a speaker's name, in a play) and ends at
    a line end where one is near; audio is the first ``steps`` held-out samples; MNIST the
    first held-out digit; a sequence classifier's or forecaster's the first test sequence or
    window, or the one ``pick`` names (:func:`sequence_probe`). The same source
    gives the same probe every time. ``quiet``: return ``None`` instead of raising when the
    source has nothing to offer.
    """
    if quiet:
        try:
            return held_out_probe(source, steps, pick=pick)
        except (ProbeError, ValueError, StopIteration, KeyError, IndexError):
            return None
    if source.kind in ("classes", "series"):
        return sequence_probe(source, pick)
    if source.kind not in ("text", "audio", "mnist"):
        raise ProbeError(f"{Path(source.path).name} holds {source.kind} data: a held-out piece "
                         "is read from text, audio, MNIST, sequence and series runs")
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


# ------------------------------------------------------------- sequences and windows --
def _split(source) -> str:
    """The split a sequence is picked from: test, else validation, else training."""
    for split in ("test", "val", "train"):
        if source.split_size(split):
            return split
    raise ProbeError(f"{Path(source.path).name} holds no sequence to inspect")


def _where(split: str) -> str:
    return {"test": "test", "val": "validation", "train": "training"}[split]


def sequence_probe(source, pick: str | None = None) -> Probe:
    """One sequence of a `ClassesSource` or one window of a `SeriesSource`, from the test
    split (the validation or training split when there is none).

    Parameters
    ----------
    pick
        ``None``: the first; a number ``k``: the k-th (from 0); ``class NAME`` (or a class name
        that is not a number): the first of that class; for a forecaster also a time stamp
        (the window whose forecast starts there).

    Raises
    ------
    ProbeError
        The pick names no sequence of the split, or the sequence is too long to show.
    """
    split = _split(source)
    count = source.split_size(split)
    pick = (pick or "").strip()
    if source.kind == "classes":
        return _classes_probe(source, split, count, pick)
    return _series_probe(source, split, count, pick)


def _index(pick: str, count: int, split: str, noun: str) -> int | None:
    if not pick.lstrip("-").isdigit():
        return None
    k = int(pick)
    if not 0 <= k < count:
        raise ProbeError(f"there is no {_where(split)} {noun} {k}: the {_where(split)} split "
                         f"holds {count:,}, numbered 0 to {count - 1:,}")
    return k


def _classes_probe(source, split: str, count: int, pick: str) -> Probe:
    members = source.indices(split)
    classes = list(source.classes)
    k = _index(pick, count, split, "sequence")
    if k is None and pick:
        name = pick[6:].strip() if pick.lower().startswith("class ") else pick
        if name not in classes:
            lowered = {c.lower(): c for c in classes}
            if name.lower() not in lowered:
                raise ProbeError(f"'{pick}' is neither a {_where(split)} sequence's number nor "
                                 f"a class (the classes are {', '.join(classes[:12])}"
                                 f"{' ...' if len(classes) > 12 else ''})")
            name = lowered[name.lower()]
        of = [j for j, i in enumerate(members) if source.label_ids[i] == classes.index(name)]
        if not of:
            raise ProbeError(f"no {_where(split)} sequence is of class '{name}'")
        k = of[0]
    k = k or 0
    i = int(members[k])
    steps = int(source.lengths[i])
    if steps > MAX_STEPS:
        raise ProbeError(f"{_where(split)} sequence {k} has {steps:,} steps; at most "
                         f"{MAX_STEPS:,} can be shown")
    data = source.batch([i])["data"][:steps, 0].numpy().astype(np.float32)
    label = int(source.label_ids[i])
    target = label if label >= 0 else None
    file = Path(getattr(source, "test_path", source.path) if split == "test"
                else source.path).name
    said = f", class {classes[label]}" if target is not None else ""
    return Probe("classes", data, [str(t) for t in range(steps)], target, False,
                 f"{_where(split)} sequence {k} of {count:,} in {file}{said}",
                 {"classes": classes, "split": split, "index": k, "count": count})


def _series_probe(source, split: str, count: int, pick: str) -> Probe:
    origins = source.origins(split)
    times = source.times
    k = _index(pick, count, split, "window")
    if k is None and pick:
        ahead = [j for j, o in enumerate(origins)
                 if times is not None and _same_time(times[o + 1], pick)]
        if not ahead:
            raise ProbeError(f"'{pick}' is neither a {_where(split)} window's number nor the "
                             f"time a {_where(split)} window's forecast starts at")
        k = ahead[0]
    k = k or 0
    o = int(origins[k])
    t_, h = source.seq_len, source.horizon
    batch = source.window_batch(np.array([o]))
    data = batch["data"][:, 0].numpy().astype(np.float32)
    truth, known = source.truth(np.array([o]))
    base = np.broadcast_to(np.asarray(source._base(np.array([o])), np.float64),
                           (1, h, source.num_targets))[0]
    rows = range(o - t_ + 1, o + 1)
    labels = [times[r] for r in rows] if times is not None else [str(r) for r in rows]
    after = [times[o + j] if times is not None else str(o + j) for j in range(1, h + 1)]
    start = f" (the forecast from {after[0]})" if times is not None else ""
    info = {"targets": list(source.targets), "split": split, "index": k, "count": count,
            "row": o, "history": source.y[o - t_ + 1:o + 1].tolist(), "ahead": after,
            "truth": truth[0].tolist(), "known": known[0].tolist(),
            "label": batch["label"][0].numpy().astype(np.float64).tolist(),
            "scale": list(source.stats["y_std"]), "base": base.tolist()}
    return Probe("series", data, labels, None, False,
                 f"{_where(split)} window {k} of {count:,} of {Path(source.path).name}{start}",
                 info)


def _same_time(stamp: str, pick: str) -> bool:
    """Whether ``stamp`` starts with ``pick``, as written or digit for digit (``1999-06``
    picks ``19990606`` and ``1999-06-06``)."""
    if stamp.startswith(pick):
        return True
    digits = re.sub(r"\D", "", pick)
    return bool(digits) and re.sub(r"\D", "", stamp).startswith(digits)
