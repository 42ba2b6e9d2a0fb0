"""Labelled sequences of different lengths for classification (the ``SequenceClasses`` layer).

Splits: with ``X_TRAIN.ts`` and ``X_TEST.ts`` side by side, the TEST file is the test split;
otherwise ``test_fraction`` of the sequences, drawn per class with a fixed seed (the same for
every run, so runs compare). ``val_fraction`` of the training sequences validate, drawn the
same way; or, with ``folds`` of 2 or more, the training sequences are dealt into that many
folds per class and fold ``fold`` (1 to ``folds``) validates: cross-validation, as a search
scores a design. Every batch is padded after each sequence's end to the longest sequence of the file,
so batches keep one shape (CUDA graphs can replay them).

Batches: ``data`` (T, N, F) float32, ``lengths`` (N,) int64, ``label`` (N,) int64 class ids.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from designer.graph.layers.sequences import paired_test_file, sort_classes

from designer.training.data.augment import Augmentation
from designer.training.data.base import Source, check_eval_count
from designer.training.data.cursors import SPLITS, ShuffledSplits
from designer.training.data.errors import DataError
from designer.training.data.labelled import Sequences
from designer.training.data.normalise import (check_normalisable, finite_columns, moments,
                                              normalised, peaks)
from designer.training.data.sequence_files import read_sequences

SPLIT_SEED = 0x53455143  # fixed: which sequences validate and test must not follow the seed


class ClassesSource(ShuffledSplits, Source):
    """Padded batches of labelled sequences.

    Parameters
    ----------
    path : Path
        The ``.ts`` or long-format CSV file.
    params : dict
        The ``SequenceClasses`` layer's effective parameters.
    seed : int
        Seeds the order of the training sequences.
    meta : dict, optional
        A run's ``run_meta()``: its classes and statistics are used instead of the file's.
    whole : bool
        Serve every sequence of the file as the ``test`` split (scoring another file).

    In a data-parallel run each batch is drawn for N x processes sequences (the same shuffled
    order on every rank) and shared out, so the ranks train on different sequences and
    together on what one process with that batch would; validation is shared out the same way.
    """

    kind = "classes"
    shardable = True

    def __init__(self, path: Path, params: dict, seed: int = 0, meta: dict | None = None,
                 whole: bool = False, labelled: bool = True):
        super().__init__(path, 0, 0, params["batch_size"], seed)
        layout = params.get("layout", "auto")
        main = read_sequences(self.path, params.get("label_column", ""), labelled, layout)
        self.notes.extend(main.notes)
        self.features = main.features
        test = None if whole else paired_test_file(self.path)
        self.test_path = test or self.path  # where the test split comes from
        parts: dict[str, list[int]]
        if whole:
            seqs, parts = main, {"train": [], "val": [], "test": list(range(len(main.series)))}
        elif test is not None:
            other = read_sequences(test, params.get("label_column", ""), True, layout)
            self.notes.extend(other.notes)
            _check_channels(main, other)
            seqs = _join(main, other)
            first = len(main.series)
            train, val = _validating(main, list(range(first)), params)
            parts = {"train": train, "val": val,
                     "test": list(range(first, len(seqs.series)))}
            self.notes.append(f"the {len(other.series):,} sequences of {test.name} are the "
                              f"test split")
        else:
            seqs = main
            rest, held = _stratified(main.labels, list(range(len(main.series))),
                                     params["test_fraction"])
            train, val = _validating(main, rest, params)
            parts = {"train": train, "val": val, "test": held}
        self.seqs = seqs
        if meta and len(meta.get("features", self.features)) != len(self.features):
            raise DataError(f"{self.path} holds {len(self.features)} features a step, but the "
                            f"model was trained on {len(meta['features'])}")
        if labelled and not whole:
            _check_two_classes(main, parts["train"])
        self.classes = list(meta["classes"]) if meta else _classes(seqs, parts, labelled)
        self.num_classes = len(self.classes)
        if labelled and not whole and not meta:
            taught = {seqs.labels[i] for i in parts["train"]}
            idle = [c for c in self.classes if c not in taught]
            if idle:
                it = "it" if len(idle) == 1 else "them"
                self.notes.append(f"{self.path.name}: no training series is of class "
                                  f"{', '.join(repr(c) for c in idle[:12])}; the net keeps an "
                                  f"output for {it} but cannot learn {it}")
        index = {c: i for i, c in enumerate(self.classes)}
        for i, lab in enumerate(seqs.labels):
            if lab is not None and lab not in index and labelled:
                file = test if test is not None and i >= len(main.series) else seqs.path
                reason = "which the model was not trained on" if meta else \
                    "which no training sequence has"
                raise DataError(f"{file}: line {seqs.lines[i]} holds the class '{lab}', "
                                f"{reason} (the classes are {', '.join(self.classes[:12])})")
        self.label_ids = np.array([index.get(lab, -1) if lab is not None else -1
                                   for lab in seqs.labels], np.int64)
        self.parts = {s: np.asarray(v, np.int64) for s, v in parts.items()}
        self.splits = tuple(s for s in SPLITS if len(self.parts[s]))
        self.frame = int(params.get("frame", 1))
        self.fold = (int(params.get("fold", 1)), int(params.get("folds", 1)))
        steps = np.array([len(s) for s in seqs.series], np.int64)
        if steps.min() < 1:
            raise DataError(f"{self.path} holds an empty sequence")
        self.steps = steps                                 # each sequence's own steps
        self.lengths = -(-steps // self.frame)             # frames, the last one padded
        self.seq_len = int(self.lengths.max())
        self.stats = meta["stats"] if meta else self._own_stats(params["normalize"])
        mean = np.asarray(self.stats["mean"], np.float64)
        std = np.asarray(self.stats["std"], np.float64)
        f = len(self.features)
        padded = np.zeros((len(seqs.series), self.seq_len * self.frame, f), np.float32)
        for i, s in enumerate(seqs.series):
            padded[i, :len(s)] = normalised(s, mean, std)
        first = len(main.series)
        noun = "column" if main.kind == "long" else "channel"
        for file, lo, hi in ((self.path, 0, first), (test, first, len(seqs.series))):
            if hi > lo:  # each file named for its own values
                check_normalisable(file, self.features, _peaks(seqs.series[lo:hi]),
                                   self.stats["mean"], self.stats["std"],
                                   finite_columns(padded[lo:hi]), params["normalize"],
                                   "the training sequences", bool(meta), noun)
        self._padded = padded.reshape(len(seqs.series), self.seq_len, self.frame * f)
        if not whole and len(self.parts["train"]) == 0:
            raise DataError(f"{self.path} leaves no sequence for training; lower val_fraction "
                            "or test_fraction")
        self.augmentation = Augmentation(params, seed)
        if self.augmentation.active and not whole:
            self.notes.append(f"training sequences are varied at random "
                              f"({self.augmentation.describe()})")
        self._reset_cursors()

    def _sharded(self) -> None:
        self._check_rows_for_ranks("sequences")
        self._reset_cursors()

    def _own_stats(self, normalize: bool) -> dict:
        f = len(self.features)
        if not normalize:
            return {"mean": [0.0] * f, "std": [1.0] * f}
        steps = np.concatenate([self.seqs.series[i] for i in self.parts["train"]], 0)
        mean, std = moments(steps)  # in float64: float32 squares overflow from 1.8e19
        return {"mean": mean.tolist(), "std": std.tolist()}

    # ------------------------------------------------------------------------- queries --
    def split_size(self, split: str = "train") -> int:
        return len(self.parts.get(split, ()))

    def describe(self) -> str:
        steps = [len(s) for s in self.seqs.series]
        parts = ", ".join(f"{self.split_size(s):,} {s}" for s in SPLITS if self.split_size(s))
        f = len(self.features)
        framed = f" (read in frames of {self.frame})" if self.frame > 1 else ""
        fold = (f" (fold {self.fold[0]} of {self.fold[1]} validates)"
                if self.fold[1] >= 2 and self.split_size("val") else "")
        return (f"{self.path}: {len(steps):,} sequences of {f} feature{'s' if f > 1 else ''}, "
                f"lengths {min(steps)} to {max(steps)}{framed}, {self.num_classes} classes; "
                f"{parts}{fold}")

    def run_meta(self) -> dict:
        return {"classes": self.classes, "stats": self.stats, "features": self.features,
                "frame": self.frame,
                "split": {s: self.split_size(s) for s in ("train", "val", "test")}}

    def indices(self, split: str) -> np.ndarray:
        self._check_split(split)
        return self.parts[split]

    # ------------------------------------------------------------------------- batches --
    def batch(self, index) -> dict[str, torch.Tensor]:
        """``data`` (T, N, F), ``lengths`` (N,) and ``label`` (N,) of these sequences."""
        index = np.asarray(index, np.int64)
        data = np.ascontiguousarray(self._padded[index].transpose(1, 0, 2))
        return {"data": torch.from_numpy(data),
                "lengths": torch.from_numpy(self.lengths[index].copy()),
                "label": torch.from_numpy(self.label_ids[index].copy())}

    def next_batch(self, split: str = "train") -> dict[str, torch.Tensor]:
        """N sequences of ``split`` in an order shuffled anew every pass."""
        self._check_split(split)
        cur, members = self._cursors[split], self.parts[split]
        n = min(self.global_batch_size, len(members))
        if cur["order"] is None or cur["position"] + n > len(members):
            cur["pass_state"] = cur["generator"].get_state()
            cur["order"] = torch.randperm(len(members), generator=cur["generator"])
            cur["position"] = 0
        pick = self._mine(cur["order"][cur["position"]:cur["position"] + n]).numpy()
        cur["position"] += n
        cur["drawn"] += 1
        batch = self.batch(members[pick])
        if split == "train" and self.augmentation.active:
            batch["data"] = self._augmented(batch["data"], members[pick], n)
        return batch

    def _augmented(self, data: torch.Tensor, index: np.ndarray, rows: int) -> torch.Tensor:
        """``data`` varied step by step (not frame by frame): the frames are opened into
        their steps, varied over each sequence's own steps, and closed again."""
        t, n, width = data.shape
        k, f = self.frame, width // self.frame
        steps = data.reshape(t, n, k, f).permute(0, 2, 1, 3).reshape(t * k, n, f)
        varied = self.augmentation.apply(steps, torch.from_numpy(self.steps[index]), rows,
                                         self._mine)
        return varied.reshape(t, k, n, f).permute(0, 2, 1, 3).reshape(t, n, width).contiguous()

    def eval_chunks(self, n: int | None = None, split: str = "val") -> list[np.ndarray]:
        self._check_split(split)
        check_eval_count(n)
        members, size = self.parts[split], self.global_batch_size
        chunks = [self._mine(members[i:i + size]) for i in range(0, len(members), size)]
        return chunks if n is None else chunks[:n]

    def eval_batches(self, n: int | None = None, split: str = "val") -> Iterator[dict]:
        """Every sequence of ``split`` in file order, N at a time (``n`` caps the batches)."""
        for chunk in self.eval_chunks(n, split):
            yield self.batch(chunk)

    def eval_size(self, n: int | None = None, split: str = "val") -> int:
        return len(self.eval_chunks(n, split))

    # --------------------------------------------------------------------------- state --
    def _fingerprint(self) -> dict:
        return {"batch_size": self.batch_size, "sequences": int(len(self.lengths)),
                "train_sequences": self.split_size("train"), "classes": len(self.classes)}



def _stratified(labels: list, members: list[int], fraction: float) -> tuple[list, list]:
    """``(kept, held)``: about ``fraction`` of each class's members held out, chosen with a
    fixed seed; at least one per class when the class has two or more."""
    if fraction <= 0 or not members:
        return list(members), []
    rng = np.random.default_rng(SPLIT_SEED)
    by_class: dict = {}
    for i in members:
        by_class.setdefault(labels[i], []).append(i)
    held = []
    for _, group in sorted(by_class.items(), key=lambda kv: str(kv[0])):
        take = int(round(len(group) * fraction))
        take = min(max(take, 1 if len(group) > 1 else 0), len(group) - 1)
        held.extend(rng.permutation(group)[:take].tolist())
    held_set = set(held)
    return [i for i in members if i not in held_set], sorted(held)


def _validating(seqs: Sequences, members: list[int], params: dict) -> tuple[list, list]:
    """``(train, val)`` of the training ``members``: ``val_fraction`` of them validating, or
    with ``folds`` of 2 or more, fold ``fold`` of `deal_folds`."""
    folds = int(params.get("folds", 1))
    if folds < 2:
        return _stratified(seqs.labels, members, params["val_fraction"])
    fold = int(params.get("fold", 1))
    if folds > len(members):
        raise DataError(f"{seqs.path}: {folds} folds need at least {folds} training "
                        f"sequences, and it has {len(members)}; lower folds")
    dealt = deal_folds(seqs.labels, members, folds)
    held = set(dealt[fold - 1])
    return [i for i in members if i not in held], sorted(held)


def deal_folds(labels: list, members: list[int], folds: int) -> list[list[int]]:
    """``members`` dealt into ``folds`` folds: each class's members in an order drawn with a
    fixed seed, dealt in turn, the next class starting where the last one stopped (so the
    folds differ in size by one at most and each holds every class of ``folds`` or more
    members)."""
    rng = np.random.default_rng(SPLIT_SEED)
    by_class: dict = {}
    for i in members:
        by_class.setdefault(labels[i], []).append(i)
    dealt: list[list[int]] = [[] for _ in range(folds)]
    turn = 0
    for _, group in sorted(by_class.items(), key=lambda kv: str(kv[0])):
        for i in rng.permutation(group).tolist():
            dealt[turn % folds].append(i)
            turn += 1
    return dealt


def _check_two_classes(seqs: Sequences, train: list[int]) -> None:
    """Refuse a training split of one class: a net would learn to answer it every time."""
    seen = sort_classes({seqs.labels[i] for i in train if seqs.labels[i] is not None})
    if len(seen) != 1:
        return  # none at all is refused later ("leaves no sequence for training")
    listed = (f" (its header lists {', '.join(seqs.classes[:12])})"
              if seqs.declares_classes and len(seqs.classes) > 1 else "")
    raise DataError(f"{seqs.path}: every series in the training split is of class "
                    f"'{seen[0]}'{listed}; a classifier needs at least two classes")


def _peaks(series: list) -> np.ndarray:
    """Each feature's value of the largest magnitude over all the sequences."""
    tops = np.stack([peaks(s) for s in series])
    return peaks(tops)


def _check_channels(a: Sequences, b: Sequences) -> None:
    if len(a.features) != len(b.features):
        raise DataError(f"{b.path} holds {len(b.features)} channels a step, but {a.path.name} "
                        f"holds {len(a.features)}")


def _join(a: Sequences, b: Sequences) -> Sequences:
    classes = list(dict.fromkeys(a.classes + b.classes))
    return Sequences(a.path, a.series + b.series, a.labels + b.labels, classes,
                     a.ids + b.ids, a.features, a.notes + b.notes, a.lines + b.lines, a.kind)


def _classes(seqs: Sequences, parts: dict, labelled: bool) -> list[str]:
    """The classes the model learns: those the header declares (a .ts or .arff) or, for a
    table, those the training sequences show; a class only other splits hold is refused by the
    caller."""
    if seqs.declares_classes:
        declared = list(seqs.classes)
        seen = {seqs.labels[i] for i in parts["train"]} | {seqs.labels[i] for i in parts["val"]}
        missing = [c for c in declared if c not in seen]
        if not missing:
            return declared
        used = {seqs.labels[i] for i in parts["test"]}
        bad = [c for c in missing if c in used]
        if bad:
            return [c for c in declared if c in seen]  # the caller names the class
        return declared
    return sort_classes({seqs.labels[i] for k in ("train", "val") for i in parts[k]
                         if seqs.labels[i] is not None})
