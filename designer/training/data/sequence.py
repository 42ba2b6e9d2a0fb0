"""Batches of symbol sequences, shared by text and audio.

The symbol sequence is split as char-rnn does: the last ``val_fraction`` of it, contiguous, is
held out for validation. Training batches come in one of two ways (the layer's ``batching``):

``random`` (MyCaffe)
    each batch holds N independent windows of T + 1 symbols, drawn at random from the
    training split; the recurrent state is reset every batch (``cont[0] = 0``).
``stream`` (Karpathy's char-rnn)
    the training split is cut into N contiguous streams; successive batches walk along them
    T symbols at a time, and the trainer carries the state across batches (truncated
    backprop). ``cont`` is 1 everywhere but on the first step of each pass over the data.

Every batch is ``{"data": (T, N) int64, "cont": (T, N) float32, "label": (T, N) int64}``;
``label`` is ``data`` shifted one symbol on.

In a data-parallel run (``shard``) the windows or streams are laid out for the global batch of
N x processes, and each rank takes its own block of them: its own windows, or its own N
contiguous streams, whose state it carries.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from designer.training.data.base import (STATE_VERSION, Source, byte_state, check_eval_count,
                                          split_generator)
from designer.training.data.errors import DataError


class SequenceSource(Source):
    """A sequence of class ids cut into train/val and served in (T, N) batches.

    Parameters
    ----------
    path : Path
        The file the symbols came from (named in messages).
    symbols : numpy.ndarray
        The whole sequence as integer ids in ``[0, num_classes)``.
    num_classes : int
        V.
    params : dict
        The data layer's effective parameters (``seq_len``, ``batch_size``, ``batching``,
        ``val_fraction``).
    seed : int
        Seeds the random windows (each split its own generator).
    unit : str
        What a symbol is called in messages ("characters", "samples").
    """

    def __init__(self, path: Path, symbols: np.ndarray, num_classes: int, params: dict,
                 seed: int = 0, unit: str = "symbols", vocab=None, notes=()):
        super().__init__(path, num_classes, params["seq_len"], params["batch_size"], seed,
                         vocab, notes)
        self.unit = unit
        self.batching = params.get("batching", "random")
        if self.batching not in ("random", "stream"):
            raise ValueError(f"unknown batching {self.batching!r}")
        self.val_fraction = float(params.get("val_fraction", 0.0))
        dtype = np.uint8 if num_classes <= 256 else np.int32
        symbols = np.ascontiguousarray(symbols, dtype=dtype)
        total = len(symbols)
        n_val = int(round(total * self.val_fraction))
        if self.val_fraction > 0:
            n_val = max(n_val, 1)
        self.total = total
        self._data = {"train": torch.from_numpy(symbols[:total - n_val])}
        if n_val:
            self._data["val"] = torch.from_numpy(symbols[total - n_val:])
        self.splits = tuple(self._data)
        self._check_lengths()
        self._reset_cursors()

    shardable = True

    def _sharded(self) -> None:
        self._check_lengths()
        self._reset_cursors()

    # ------------------------------------------------------------------------ properties --
    @property
    def carries_state(self) -> bool:  # type: ignore[override]
        return self.batching == "stream"

    def split_size(self, split: str = "train") -> int:
        """How many symbols ``split`` holds (0 for a split that is not there)."""
        data = self._data.get(split)
        return 0 if data is None else len(data)

    def symbols(self, split: str = "val") -> torch.Tensor:
        """The whole of ``split`` as ids, in order (a view: do not change it)."""
        self._check_split(split)
        return self._data[split]

    @property
    def batches_per_epoch(self) -> int:
        """Training batches in one pass over the training split."""
        if self.batching == "stream":
            return self._streams("train")[1]
        return max(1, self.split_size("train") // (self.seq_len * self.global_batch_size))

    @property
    def epoch(self) -> float:
        """How many passes over the training split the training batches drawn so far make."""
        cur = self._cursors["train"]
        if self.batching == "stream":
            return cur["epoch"] + cur["position"] / self._streams("train")[1]
        return cur["windows"] * self.seq_len / self.split_size("train")

    def split_text(self) -> str:
        text = f"{self.split_size('train'):,} for training"
        if "val" in self._data:
            text += f", {self.split_size('val'):,} for validation"
        return text

    # --------------------------------------------------------------------------- batches --
    def next_batch(self, split: str = "train") -> dict[str, torch.Tensor]:
        """The next batch of ``split`` (see the module's docstring for the two ways)."""
        self._check_split(split)
        data, cur = self._data[split], self._cursors[split]
        if self.batching == "random":
            starts = torch.randint(0, len(data) - self.seq_len, (self.global_batch_size,),
                                   generator=cur["generator"])
            reset = True
        else:
            length, per_pass = self._streams(split)
            starts = (torch.arange(self.global_batch_size) * length
                      + cur["position"] * self.seq_len)
            reset = cur["position"] == 0 or cur.pop("restart", False)
            cur["position"] += 1
            if cur["position"] == per_pass:
                cur["position"], cur["epoch"] = 0, cur["epoch"] + 1
        cur["drawn"] += 1
        cur["windows"] += self.global_batch_size
        return self._batch(data, self._mine(starts), reset)

    def eval_batches(self, n: int | None = None, split: str = "val") -> Iterator[dict]:
        """A fixed set of batches spread over the whole of ``split``, the same every call.

        In ``stream`` batching they walk the split's N streams from their start (``cont[0] =
        0`` on the first batch only; carry the state across them, starting from zeros); there
        are at most as many as the split has whole steps. In ``random`` batching they are
        independent windows at evenly spaced places (``cont[0] = 0`` in every batch), not
        overlapping while the split has room; ``n=None`` gives one batch per N such windows.
        """
        self._check_split(split)
        check_eval_count(n)
        return self._eval(self._data[split], n, split)

    def _eval(self, data: torch.Tensor, n: int | None, split: str) -> Iterator[dict]:
        if self.batching == "stream":
            length, per_pass = self._streams(split)
            count = per_pass if n is None else min(n, per_pass)
            for p in range(count):
                starts = torch.arange(self.global_batch_size) * length + p * self.seq_len
                yield self._batch(data, self._mine(starts), p == 0)
            return
        last = len(data) - self.seq_len - 1
        size = self.global_batch_size
        if n is None:
            n = max(1, (last // self.seq_len + 1) // size)
        starts = torch.from_numpy(np.linspace(0, last, n * size).round().astype(np.int64))
        for b in range(n):
            yield self._batch(data, self._mine(starts[b * size:(b + 1) * size]), True)

    def eval_size(self, n: int | None = None, split: str = "val") -> int:
        self._check_split(split)
        check_eval_count(n)
        if self.batching == "stream":
            per_pass = self._streams(split)[1]
            return per_pass if n is None else min(n, per_pass)
        if n is None:
            last = self.split_size(split) - self.seq_len - 1
            return max(1, (last // self.seq_len + 1) // self.global_batch_size)
        return n

    def _batch(self, data: torch.Tensor, starts: torch.Tensor, reset: bool) -> dict:
        steps = torch.arange(self.seq_len + 1).unsqueeze(1)
        window = data[steps + starts.unsqueeze(0)].long()          # (T + 1, N)
        cont = torch.ones(self.seq_len, len(starts), dtype=torch.float32)
        if reset:
            cont[0] = 0.0
        return {"data": window[:-1].contiguous(), "cont": cont,
                "label": window[1:].contiguous()}

    def _streams(self, split: str, world: int | None = None) -> tuple[int, int]:
        """(symbols per stream, batches per pass) of a split cut into the global batch's
        streams (``world`` defaults to this run's)."""
        length = (self.split_size(split) - 1) // (self.batch_size * (world or self.world))
        return length, length // self.seq_len

    # ----------------------------------------------------------------------- statistics --
    def class_histogram_entropy(self, split: str = "train") -> float:
        """The entropy, in nats, of the class histogram of ``split``.

        A model that ignores the context can do no better than this cross-entropy; a model
        that learned something beats it.
        """
        self._check_split(split)
        counts = torch.bincount(self._data[split].long(), minlength=self.num_classes)
        p = counts[counts > 0].double() / counts.sum()
        return float(-(p * p.log()).sum())

    # ---------------------------------------------------------------------------- state --
    def _fingerprint(self) -> dict:
        return {"batching": self.batching, "seq_len": self.seq_len,
                "batch_size": self.batch_size, "symbols": self.total,
                "train_symbols": self.split_size("train"), "num_classes": self.num_classes}

    def _reset_cursors(self) -> None:
        self._cursors = {
            split: {"generator": split_generator(self.seed, split), "position": 0, "epoch": 0,
                    "drawn": 0, "windows": 0}
            for split in self.splits
        }

    def state_dict(self) -> dict:
        state = {"version": STATE_VERSION, "kind": self.kind, **self._fingerprint(),
                 "world": self.world, "splits": {}}
        for split, cur in self._cursors.items():
            state["splits"][split] = {"generator": cur["generator"].get_state(),
                                      "position": cur["position"], "epoch": cur["epoch"],
                                      "drawn": cur["drawn"], "windows": cur["windows"]}
        return state

    def load_state_dict(self, state: dict) -> None:
        self._check_state(state, self._fingerprint())
        self._reset_cursors()
        for split, saved in state.get("splits", {}).items():
            if split not in self._cursors:
                continue
            cur = self._cursors[split]
            cur["generator"].set_state(byte_state(saved["generator"]))
            cur["position"], cur["epoch"] = int(saved["position"]), int(saved["epoch"])
            cur["drawn"] = int(saved["drawn"])
            cur["windows"] = int(saved.get("windows", cur["drawn"] * self.batch_size))
            world = int(state.get("world", 1))
            if world != self.world and self.batching == "stream":
                # the streams are cut anew for this many processes: go on from the same share
                # of the pass, each stream starting afresh (cont 0, a zero state)
                per_pass_then = self._streams(split, world)[1]
                per_pass = self._streams(split)[1]
                cur["position"] = min(per_pass - 1,
                                      cur["position"] * per_pass // max(per_pass_then, 1))
                cur["restart"] = True

    # ------------------------------------------------------------------------- checking --
    def _check_lengths(self) -> None:
        t, n = self.seq_len, self.global_batch_size
        train, val = self.split_size("train"), self.split_size("val")
        unit = self.unit
        if train < t + 1:
            raise DataError(f"{self.path} is too short for seq_len {t}: its training split "
                            f"holds {train:,} {unit}, but one sequence needs {t + 1:,}")
        if "val" in self._data and val < t + 1:
            raise DataError(f"{self.path} is too short for seq_len {t}: its validation split "
                            f"(the last {self.val_fraction:.0%}) holds {val:,} {unit}, but one "
                            f"sequence needs {t + 1:,}; raise val_fraction or lower seq_len")
        if self.batching != "stream":
            return
        need = n * t + 1
        streams = f"{n} streams" if self.world == 1 else \
            f"{n} streams ({self.batch_size} on each of {self.world} processes)"
        for split, have in (("training", train), ("validation", val)):
            if have and have < need:
                raise DataError(
                    f"{self.path} is too short for stream batching: its {split} split holds "
                    f"{have:,} {unit}, but {streams} of {t} need at least {need:,}; lower "
                    f"batch_size or seq_len, or use random batching"
                )


