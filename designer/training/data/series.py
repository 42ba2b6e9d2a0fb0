"""Forecasting windows over a table of measurements (the ``TimeSeries`` data layer).

The rows are time steps. A window at *origin* ``t`` holds the input columns of rows
``t - T + 1 .. t`` as ``data`` (T, N, F) and the target columns of rows ``t + 1 .. t + horizon``
as ``label`` (N, horizon, targets). The series is split in time (train, then val, then test by
the layer's fractions) and a window belongs to the split its forecast rows fall in; its inputs
may reach back into the splits before (history is known when one forecasts).

With ``normalize``, every column is z-scored with the mean and deviation of the training rows
only; with ``predict = change`` the label is each future value minus the window's last value
of that target (in deviations), and the targets' own history in ``data`` is told relative to
that last value too, so a series that trends out of the range it trained on still looks
familiar to the net. ``to_units`` undoes both, so evaluation speaks in the target's own units.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from designer.graph import headers
from designer.graph.datasets import DataProblem

from designer.training.data.augment import Augmentation
from designer.training.data.base import Source, check_eval_count
from designer.training.data.cursors import SPLITS, ShuffledSplits
from designer.training.data.errors import DataError
from designer.training.data.normalise import (check_normalisable, finite_columns,
                                              finite_normalised, moments, normalised, peaks)
from designer.training.data.table import detect_period, header_of, read_table


class SeriesSource(ShuffledSplits, Source):
    """Windows of a table for forecasting.

    Parameters
    ----------
    path : Path
        The CSV or ``.npy`` file.
    params : dict
        The ``TimeSeries`` layer's effective parameters.
    seed : int
        Seeds the order of the training windows.
    stats : dict, optional
        Normalisation statistics from a run (``run_meta()["stats"]``): used instead of the
        file's own, so a trained net sees what it saw in training.
    whole : bool
        Serve every window of the file as the ``test`` split (scoring another file).
    forecast : bool
        Only forecast from the file's end: it needs ``seq_len`` rows, no whole window.
    period : int
        The season a run found (when the layer's ``season`` is 0): new data keeps it.

    In a data-parallel run each batch is drawn for N x processes windows (the same shuffled
    order on every rank) and shared out, so the ranks train on different windows and together
    on what one process with that batch would; validation windows are shared out the same way.
    """

    kind = "series"
    shardable = True

    def __init__(self, path: Path, params: dict, seed: int = 0, stats: dict | None = None,
                 whole: bool = False, forecast: bool = False, period: int = 0):
        self.horizon = int(params["horizon"])
        super().__init__(path, 0, params["seq_len"], params["batch_size"], seed)
        header = header_of(self.path)
        try:
            time_col, inputs, targets = headers.choose_columns(
                header, params["inputs"], params["target"], params["time_column"])
        except DataProblem as e:
            raise DataError(str(e)) from None
        self.time_column, self.inputs, self.targets = time_col, inputs, targets
        self.predict = params.get("predict", "change")
        columns = list(dict.fromkeys(inputs + targets))  # the inputs first: x is a view
        table = read_table(self.path, columns, params["missing"], time_col)
        self.table = table
        self.x = table.values[:, :len(inputs)]
        self.y = _columns(table.values, [columns.index(c) for c in targets])
        self.y_missing = table.missing[:, [columns.index(c) for c in targets]]
        self.times = table.times
        rows = len(self.x)
        self.period = int(params.get("season", 0)) or period or detect_period(table.times)
        if self.predict == "season" and not self.period:
            raise DataError(f"{self.path} has no season that rnn-designer can find (no dated "
                            "time column), so predict = season has nothing to go on; set the "
                            "data layer's season or use predict = change")
        self.lead = self.period if self.predict == "season" else 0  # history before a window
        if forecast and rows < self.seq_len + self.lead:
            raise DataError(f"{self.path} holds {rows:,} rows, but the net forecasts from the "
                            f"last {self.seq_len + self.lead}")
        whole = whole or forecast
        if whole:
            self.bounds = {"train": (0, 0), "val": (0, 0),
                           "test": (self.seq_len + self.lead, rows)}
        else:
            n_test = int(round(rows * params["test_fraction"]))
            n_val = int(round(rows * params["val_fraction"]))
            n_train = rows - n_val - n_test
            self.bounds = {"train": (0, n_train), "val": (n_train, n_train + n_val),
                           "test": (n_train + n_val, rows)}
        self.stats = stats or self._own_stats(params["normalize"])
        self._check_scale(params["normalize"], trained=bool(stats))
        # in change mode the targets' own history is told relative to its last value too
        self._relative = [inputs.index(t) for t in targets if t in inputs] \
            if self.predict != "level" else []
        self._origins = {s: self._split_origins(s, int(params.get("stride", 1)))
                         for s in SPLITS}
        self.splits = tuple(s for s in SPLITS if len(self._origins[s]))
        if not forecast:
            self._check_sizes(rows, whole)
        if table.filled and params["missing"] == "interpolate":
            self.notes.append(f"{_count(table.filled, 'empty cell')} filled in linearly; "
                              "forecasts are not scored on them")
        if table.dropped:
            self.notes.append(f"{_count(table.dropped, 'row')} with empty cells dropped")
        self.augmentation = Augmentation(params, seed, anchor_end=True)
        if self.augmentation.active and not whole:
            self.notes.append(f"training windows are varied at random "
                              f"({self.augmentation.describe()})")
        self._reset_cursors()

    def _sharded(self) -> None:
        self._check_rows_for_ranks("windows")
        self._reset_cursors()

    # ------------------------------------------------------------------------- set-up --
    def _own_stats(self, normalize: bool) -> dict:
        lo, hi = self.bounds["train"]
        fit = slice(lo, hi) if hi - lo > 1 else slice(None)
        if not normalize:
            return {"x_mean": [0.0] * self.x.shape[1], "x_std": [1.0] * self.x.shape[1],
                    "y_mean": [0.0] * self.y.shape[1], "y_std": [1.0] * self.y.shape[1]}

        (xm, xs), (ym, ys) = moments(self.x[fit]), moments(self.y[fit])
        return {"x_mean": xm.tolist(), "x_std": xs.tolist(),
                "y_mean": ym.tolist(), "y_std": ys.tolist()}

    def _check_scale(self, normalize: bool, trained: bool) -> None:
        """Refuse columns too large to normalise (their statistics or z-scores overflow)."""
        check_normalisable(self.path, self.inputs, peaks(self.x), self.stats["x_mean"],
                           self.stats["x_std"], finite_normalised(self.x, self.stats["x_mean"],
                                                                  self.stats["x_std"]),
                           normalize, trained=trained)
        yn = normalised(self.y, self.stats["y_mean"], self.stats["y_std"])
        check_normalisable(self.path, self.targets, peaks(self.y), self.stats["y_mean"],
                           self.stats["y_std"], finite_columns(yn), normalize, trained=trained)

    def _split_origins(self, split: str, stride: int) -> np.ndarray:
        lo, hi = self.bounds[split]
        first = max(self.seq_len - 1 + self.lead, lo - 1)
        origins = np.arange(first, hi - self.horizon, dtype=np.int64)
        return origins[::stride] if split == "train" else origins

    def _check_sizes(self, rows: int, whole: bool) -> None:
        t, h = self.seq_len, self.horizon
        if whole:
            if not len(self._origins["test"]):
                raise DataError(f"{self.path} holds {rows:,} rows, but one window of seq_len "
                                f"{t} and horizon {h} needs {t + h:,}")
            return
        lo, hi = self.bounds["train"]
        if len(self._origins["train"]) < 1:
            raise DataError(f"{self.path} holds {rows:,} rows, of which {hi - lo:,} train, but "
                            f"one window of seq_len {t} plus horizon {h} needs {t + h:,}; lower "
                            "seq_len or horizon, or val_fraction and test_fraction")
        for split in ("val", "test"):
            lo, hi = self.bounds[split]
            if hi > lo and not len(self._origins[split]):
                raise DataError(f"{self.path}: its {split} split holds {hi - lo:,} rows, fewer "
                                f"than the horizon {h} it must forecast; raise {split}_fraction "
                                "or lower horizon")

    # -------------------------------------------------------------------------- queries --
    @property
    def num_targets(self) -> int:
        return len(self.targets)

    @property
    def target_scale(self) -> torch.Tensor:
        """Each target's deviation: a label step of 1.0 is this many of its units."""
        return torch.tensor(self.stats["y_std"], dtype=torch.float32)

    def origins(self, split: str) -> np.ndarray:
        self._check_split(split)
        return self._origins[split]

    def split_size(self, split: str = "train") -> int:
        return len(self._origins.get(split, ()))

    def describe(self) -> str:
        rows = len(self.x)
        parts = ", ".join(f"{self.split_size(s):,} {s}" for s in SPLITS if self.split_size(s))
        return (f"{self.path}: {rows:,} rows; inputs {', '.join(self.inputs)}; forecasting "
                f"{', '.join(self.targets)} {self.horizon} step{'s' if self.horizon > 1 else ''} "
                f"ahead from {self.seq_len} steps; windows: {parts}")

    def run_meta(self) -> dict:
        """What a run keeps to read new data the same way (columns, statistics, period)."""
        return {"inputs": self.inputs, "targets": self.targets, "time_column": self.time_column,
                "stats": self.stats, "predict": self.predict, "horizon": self.horizon,
                "seq_len": self.seq_len, "period": self.period}

    # -------------------------------------------------------------------------- batches --
    def window_batch(self, origins) -> dict[str, torch.Tensor]:
        """``data`` (T, N, F) and ``label`` (N, horizon, targets) for these origins."""
        origins = np.asarray(origins, dtype=np.int64)
        steps = np.arange(-self.seq_len + 1, 1)
        data = self._normal(origins[None, :] + steps[:, None])             # (T, N, F)
        if self._relative and self.predict == "change":
            data[:, :, self._relative] -= data[-1:, :, self._relative]
        elif self._relative:  # season: each step's change from one season before
            back = self._normal(origins[None, :] + steps[:, None] - self.lead)
            data[:, :, self._relative] -= back[:, :, self._relative]
        ahead = origins[:, None] + np.arange(1, self.horizon + 1)[None, :]
        future = self.y[np.minimum(ahead, len(self.y) - 1)]                 # (N, h, targets)
        return {"data": torch.from_numpy(np.ascontiguousarray(data)),
                "label": torch.from_numpy(self.encode(future, origins))}

    def _normal(self, rows: np.ndarray) -> np.ndarray:
        """The inputs of these rows (an array of row numbers of any shape), z-scored as
        float32: worked out per batch, so that a table of millions of rows is not held
        twice."""
        return normalised(self.x[rows], self.stats["x_mean"], self.stats["x_std"])

    def encode(self, future: np.ndarray, origins: np.ndarray) -> np.ndarray:
        """Values in units -> what the net is trained to output."""
        std = np.asarray(self.stats["y_std"])
        return ((future - self._base(origins)) / std).astype(np.float32)

    def _base(self, origins: np.ndarray) -> np.ndarray:
        """What the net's output is added to: the training mean (level), the last value seen
        (change) or the value one season before each step (season)."""
        if self.predict == "change":
            return self.y[origins][:, None, :]
        if self.predict == "season":
            return self.baseline(origins, "seasonal_naive")
        return np.asarray(self.stats["y_mean"])

    def to_units(self, output: np.ndarray, origins) -> np.ndarray:
        """The net's output, (N, horizon, targets) or (N, horizon * targets), in units."""
        origins = np.asarray(origins, dtype=np.int64)
        out = np.asarray(output, dtype=np.float64).reshape(len(origins), self.horizon, -1)
        return out * np.asarray(self.stats["y_std"]) + self._base(origins)

    def with_values(self, x: np.ndarray, y: np.ndarray) -> "SeriesSource":
        """The same source (columns, statistics, season, windows) reading other values: ``x``
        (rows, inputs) and ``y`` (rows, targets) in units, as long as the file's or longer. A
        roll-out writes its forecasts there and reads them back as history."""
        other = copy.copy(self)
        other.x = np.asarray(x, dtype=np.float64)
        other.y = np.asarray(y, dtype=np.float64)
        other.y_missing = np.zeros(other.y.shape, bool)
        return other

    def truth(self, origins) -> tuple[np.ndarray, np.ndarray]:
        """The true future values (N, horizon, targets) in units, and where they were read
        from the file (False where an empty cell was filled in)."""
        ahead = np.asarray(origins)[:, None] + np.arange(1, self.horizon + 1)[None, :]
        return self.y[ahead], ~self.y_missing[ahead]

    def baseline(self, origins, name: str) -> np.ndarray:
        """``persistence`` (the last value seen) or ``seasonal_naive`` (the value one period
        before each forecast step) forecasts, (N, horizon, targets), in units."""
        origins = np.asarray(origins, dtype=np.int64)
        k = np.arange(1, self.horizon + 1)
        if name == "persistence":
            back = origins[:, None] + 0 * k[None, :]
        else:
            m = self.period
            back = origins[:, None] + k[None, :] - m * np.ceil(k / m).astype(np.int64)[None, :]
        return self.y[np.maximum(back, 0)]

    def next_batch(self, split: str = "train") -> dict[str, torch.Tensor]:
        """N windows of ``split`` in an order shuffled anew every pass (whole batches: a pass
        ends when fewer than N windows are left)."""
        self._check_split(split)
        cur, origins = self._cursors[split], self._origins[split]
        n = min(self.global_batch_size, len(origins))
        if cur["order"] is None or cur["position"] + n > len(origins):
            cur["pass_state"] = cur["generator"].get_state()
            cur["order"] = torch.randperm(len(origins), generator=cur["generator"])
            cur["position"] = 0
        index = self._mine(cur["order"][cur["position"]:cur["position"] + n]).numpy()
        cur["position"] += n
        cur["drawn"] += 1
        batch = self.window_batch(origins[index])
        if split == "train" and self.augmentation.active:
            full = torch.full((len(index),), self.seq_len, dtype=torch.int64)
            batch["data"] = self.augmentation.apply(batch["data"], full, n, self._mine)
        return batch

    def eval_batches(self, n: int | None = None, split: str = "val") -> Iterator[dict]:
        """Every window of ``split`` in time order, N at a time (``n`` caps the batches)."""
        for chunk in self.eval_chunks(n, split):
            yield self.window_batch(chunk)

    def eval_chunks(self, n: int | None = None, split: str = "val") -> list[np.ndarray]:
        """The origins ``eval_batches`` serves, batch by batch."""
        self._check_split(split)
        check_eval_count(n)
        origins, size = self._origins[split], self.global_batch_size
        chunks = [self._mine(origins[i:i + size]) for i in range(0, len(origins), size)]
        return chunks if n is None else chunks[:n]

    def eval_size(self, n: int | None = None, split: str = "val") -> int:
        return len(self.eval_chunks(n, split))

    # ---------------------------------------------------------------------------- state --
    def _fingerprint(self) -> dict:
        return {"batch_size": self.batch_size, "seq_len": self.seq_len,
                "horizon": self.horizon, "rows": int(len(self.x)),
                "train_windows": self.split_size("train")}



def _columns(values: np.ndarray, index: list[int]) -> np.ndarray:
    """These columns of ``values``: a view when they lie side by side, else a copy."""
    if index == list(range(index[0], index[0] + len(index))):
        return values[:, index[0]:index[0] + len(index)]
    return values[:, index]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' if n != 1 else ''}"
