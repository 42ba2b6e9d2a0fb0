"""Shuffled passes over fixed train/val/test splits, and their place saved in a checkpoint: what
the window sources (time-series windows, labelled sequences) share."""
from __future__ import annotations

import torch

from designer.training.data.base import STATE_VERSION, byte_state, split_generator

SPLITS = ("train", "val", "test")


class ShuffledSplits:
    """A mixin for a `Source` whose batches are drawn from its splits in shuffled passes:
    one cursor per split (a generator, the pass's order and the position in it), saved and
    restored with the source's ``_fingerprint()`` and counted in epochs of the train split,
    whose size is the subclass's ``split_size``."""

    @property
    def batches_per_epoch(self) -> int:
        return max(1, self.split_size("train") // self.global_batch_size)

    @property
    def epoch(self) -> float:
        return self._cursors["train"]["drawn"] / self.batches_per_epoch

    def _reset_cursors(self) -> None:
        self._cursors = {s: {"generator": split_generator(self.seed, s), "order": None,
                             "pass_state": None, "position": 0, "drawn": 0} for s in SPLITS}
        augmentation = getattr(self, "augmentation", None)
        if augmentation is not None:
            augmentation.restart()

    def state_dict(self) -> dict:
        state = {"version": STATE_VERSION, "kind": self.kind, **self._fingerprint(),
                 "splits": {}}
        for split, cur in self._cursors.items():
            state["splits"][split] = cursor_state(cur)
        augmentation = getattr(self, "augmentation", None)
        if augmentation is not None and augmentation.active:
            state["augment"] = augmentation.state_dict()
        return state

    def load_state_dict(self, state: dict) -> None:
        self._check_state(state, self._fingerprint())
        self._reset_cursors()
        restore_cursors(self._cursors, state, self.split_size)
        augmentation = getattr(self, "augmentation", None)
        if augmentation is not None:
            augmentation.load_state_dict(state.get("augment"))


def cursor_state(cur: dict, extra: tuple = ()) -> dict:
    """A shuffling cursor as saved: its generator, place and pass (and the ``extra`` keys)."""
    saved = {"generator": cur["generator"].get_state(), "position": cur["position"],
             "drawn": cur["drawn"], **{k: cur[k] for k in extra}}
    if cur["pass_state"] is not None:
        saved["pass_state"] = cur["pass_state"]
    return saved


def restore_cursors(cursors: dict, state: dict, size) -> None:
    """Put saved shuffling cursors back (the pass's order is redrawn from its saved state)."""
    for split, saved in state.get("splits", {}).items():
        if split not in cursors:
            continue
        cur = cursors[split]
        if "pass_state" in saved:
            cur["pass_state"] = byte_state(saved["pass_state"])
            cur["generator"].set_state(byte_state(saved["pass_state"]))
            cur["order"] = torch.randperm(size(split), generator=cur["generator"])
        cur["generator"].set_state(byte_state(saved["generator"]))
        cur["position"], cur["drawn"] = int(saved["position"]), int(saved["drawn"])
