"""MNIST digits read row by row: 28 steps of 28 pixels, with the digit as the label.

Which images train, which choose the best checkpoint (validation) and which score it (test):

* with the train files present, ``holdout`` of the 60,000 train images validate, the rest
  train, and the 10,000 t10k images are the test set;
* with only one set present (the shared data has only t10k), ``holdout`` images are held out
  and split evenly: half validate, half test (8,000 / 1,000 / 1,000 by default), and a note
  says so.

The held-out images are chosen by a fixed permutation (the same for every run and seed, so runs
compare), and the test images are never looked at while training: the checkpoint kept as best
is chosen on other digits than those it is scored on.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from designer.training.data.base import STATE_VERSION, Source, check_eval_count, split_generator
from designer.training.data.cursors import cursor_state, restore_cursors
from designer.training.data.errors import DataError
from designer.training.data.idx import IMAGES, LABELS, read_idx

SPLIT_SEED = 0x4D4E4953  # fixed: the held-out images must not depend on the run's seed
SIDE = 28


def find_files(folder: Path, prefix: str) -> tuple[Path | None, Path | None]:
    """The images and labels files of one set (``train`` or ``t10k``), each or ``None``."""
    found = []
    for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
        names = [f"{prefix}-{kind}", f"{prefix}-{kind.replace('-idx', '.idx')}"]
        hit = None
        for name in names:
            for ext in ("", ".gz"):
                if (folder / (name + ext)).is_file():
                    hit = hit or folder / (name + ext)
        found.append(hit)
    return found[0], found[1]


def load_set(images_path: Path, labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Read and cross-check one set's images (n, 28, 28) and labels (n,)."""
    images = read_idx(images_path, IMAGES)
    if images.ndim != 3 or images.shape[1:] != (SIDE, SIDE):
        raise DataError(f"{images_path} holds images of "
                        f"{' x '.join(str(d) for d in images.shape[1:])} pixels, but MNIST "
                        f"rows need 28 x 28")
    labels = read_idx(labels_path, LABELS)
    if labels.ndim != 1:
        raise DataError(f"{labels_path} is not a list of labels (it has {labels.ndim} "
                        f"dimensions)")
    if len(images) != len(labels):
        raise DataError(f"{images_path} holds {len(images):,} images but {labels_path} holds "
                        f"{len(labels):,} labels")
    if len(labels) and labels.max() > 9:
        raise DataError(f"{labels_path} holds the label {int(labels.max())}; MNIST labels are "
                        f"0 to 9")
    if len(images) == 0:
        raise DataError(f"{images_path} holds no images")
    return images, labels


class MnistSource(Source):
    """MNIST images as (N, 28, 28) (or (28, N, 28)) float rows in [0, 1], labels (N,).

    In a data-parallel run each global batch (N x processes images of the shuffled order)
    is shared out, so the ranks see different images and together one pass of them.
    """

    kind = "mnist"
    shardable = True

    def __init__(self, folder: Path, params: dict, seed: int = 0):
        super().__init__(folder, 10, SIDE, params["batch_size"], seed)
        self.batch_first = bool(params.get("batch_first", True))
        self.holdout = int(params.get("holdout", 2000))
        sets = {prefix: find_files(folder, prefix) for prefix in ("train", "t10k")}
        for prefix, (images, labels) in sets.items():
            if (images is None) != (labels is None):
                have, lack = (images, "labels-idx1-ubyte") if labels is None else \
                    (labels, "images-idx3-ubyte")
                raise DataError(f"{folder} has {have.name} but not its "
                                f"{prefix}-{lack}[.gz] file")
        present = [prefix for prefix, (images, _) in sets.items() if images is not None]
        if not present:
            raise DataError(f"{folder} holds no MNIST files (looked for "
                            f"train-images-idx3-ubyte[.gz] and t10k-images-idx3-ubyte[.gz] "
                            f"with their labels files)")
        self.files = [p for prefix in present for p in sets[prefix]]
        self._x, self._y = {}, {}
        if len(present) == 2:
            train, test = load_set(*sets["train"]), load_set(*sets["t10k"])
            self._hold_out("train", *train, validate=self.holdout, test=0)
            self._x["test"], self._y["test"] = _tensors(*test)
            self.notes.append(f"training on {self.split_size('train'):,} train images, "
                              f"validating on {self.split_size('val'):,} others; the "
                              f"{self.split_size('test'):,} t10k images are the test set")
        else:
            test = self.holdout // 2
            self._hold_out(present[0], *load_set(*sets[present[0]]),
                           validate=self.holdout - test, test=test)
            self.notes.append(f"only the {present[0]} files are present: "
                              f"{self.split_size('train'):,} images for training, "
                              f"{self.split_size('val'):,} for validation and "
                              f"{self.split_size('test'):,} for testing")
        self.splits = tuple(s for s in ("train", "val", "test") if s in self._y)
        self.total = sum(self.split_size(s) for s in self.splits)
        self._sharded()

    def _sharded(self) -> None:
        if self.split_size("train") < self.global_batch_size:
            raise DataError(f"{self.path} leaves only {self.split_size('train'):,} images for "
                            f"training, fewer than one batch of {self.global_batch_size}")
        self._reset_cursors()

    def _hold_out(self, prefix: str, images: np.ndarray, labels: np.ndarray, validate: int,
                  test: int) -> None:
        """Split one set by the fixed permutation: training, then validation, then test."""
        n, held = len(labels), validate + test
        if held >= n:
            raise DataError(f"{self.path} holds only {n:,} {prefix} images, so holding out "
                            f"{held:,} leaves none for training; lower holdout")
        order = torch.randperm(n, generator=torch.Generator().manual_seed(SPLIT_SEED)).numpy()
        images, labels = images[order], labels[order]
        cuts = {"train": (0, n - held), "val": (n - held, n - test), "test": (n - test, n)}
        for split, (a, b) in cuts.items():
            if b > a:
                self._x[split], self._y[split] = _tensors(images[a:b], labels[a:b])

    # --------------------------------------------------------------------------- queries --
    def split_size(self, split: str = "train") -> int:
        return len(self._y[split]) if split in self._y else 0

    @property
    def batches_per_epoch(self) -> int:
        return self.split_size("train") // self.global_batch_size

    @property
    def epoch(self) -> float:
        return self._cursors["train"]["images"] / self.split_size("train")

    def describe(self) -> str:
        which = ", ".join(p.name for p in self.files)
        return (f"{self.path}: {self.total:,} MNIST digits of 28 x 28 ({which}), 10 classes; "
                f"{self.split_size('train'):,} for training, {self.split_size('val'):,} for "
                f"validation, {self.split_size('test'):,} for testing; batches of "
                f"{self._batch_text()}")

    # --------------------------------------------------------------------------- batches --
    def next_batch(self, split: str = "train") -> dict[str, torch.Tensor]:
        """N images of ``split`` in a shuffled order that is new every pass (whole batches
        only: a pass ends when fewer than N images are left)."""
        self._check_split(split)
        cur, n, size = self._cursors[split], self.split_size(split), self.global_batch_size
        if n < size:
            raise DataError(f"{self.path} holds only {n:,} {split} images, fewer than one batch "
                            f"of {size}")
        if cur["order"] is None or cur["position"] + size > n:
            cur["pass_state"] = cur["generator"].get_state()
            cur["order"] = torch.randperm(n, generator=cur["generator"])
            cur["position"] = 0
        index = cur["order"][cur["position"]:cur["position"] + size]
        cur["position"] += size
        cur["drawn"] += 1
        cur["images"] += size
        return self._batch(split, self._mine(index))

    def eval_batches(self, n: int | None = None, split: str = "val") -> Iterator[dict]:
        """The held-out images in their fixed order, N at a time; the last batch is smaller
        when N does not divide them (every image counts once; a rank may get an empty one).
        ``n`` caps the batches."""
        self._check_split(split)
        check_eval_count(n)
        count = self.eval_size(n, split)
        size, step = self.split_size(split), self.global_batch_size
        for b in range(count):
            rows = torch.arange(b * step, min((b + 1) * step, size))
            yield self._batch(split, self._mine(rows))

    def eval_size(self, n: int | None = None, split: str = "val") -> int:
        self._check_split(split)
        check_eval_count(n)
        whole = -(-self.split_size(split) // self.global_batch_size)
        return whole if n is None else min(n, whole)

    def _batch(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        data = self._x[split][index].to(torch.float32).div_(255.0)
        if not self.batch_first:
            data = data.transpose(0, 1).contiguous()
        return {"data": data, "label": self._y[split][index]}

    # ----------------------------------------------------------------------------- state --
    def _fingerprint(self) -> dict:
        return {"batch_size": self.batch_size, "images": self.total,
                "train_images": self.split_size("train")}

    def _reset_cursors(self) -> None:
        self._cursors = {split: {"generator": split_generator(self.seed, split), "order": None,
                                 "pass_state": None, "position": 0, "drawn": 0, "images": 0}
                         for split in self.splits}

    def state_dict(self) -> dict:
        state = {"version": STATE_VERSION, "kind": self.kind, **self._fingerprint(),
                 "splits": {}}
        for split in self.splits:
            state["splits"][split] = cursor_state(self._cursors[split], ("images",))
        return state

    def load_state_dict(self, state: dict) -> None:
        self._check_state(state, self._fingerprint())
        self._reset_cursors()
        restore_cursors(self._cursors, state, self.split_size)
        for split, saved in state.get("splits", {}).items():
            if split in self._cursors:
                cur = self._cursors[split]
                cur["images"] = int(saved.get("images", cur["drawn"] * self.batch_size))


def _tensors(images: np.ndarray, labels: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.astype(np.int64))
