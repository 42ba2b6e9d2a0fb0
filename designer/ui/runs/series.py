"""Chart data: points in growable numpy buffers, with a smoothed copy kept up to date.

The charts append one point per training record and redraw from a timer, so appending must be
cheap and memory must stay proportional to the points (no Python object per point). A
`Series` doubles its buffers when full (amortised O(1) appends, as in pyqtgraph's
``scrollingPlots`` example) and, past ``limit`` points, thins its older half so a run of any
length holds a bounded number of points. Plain numpy: no Qt here.
"""
from __future__ import annotations

import math

import numpy as np

COLUMNS = ("step", "time", "value")


class Series:
    """One metric of one run: (step, wall-clock seconds, value) points in append order.

    Parameters
    ----------
    capacity
        The initial buffer size (it doubles as points arrive).
    limit
        The most points kept: reaching it thins the older half to every other point, so
        memory stays flat however long a run goes on.

    Examples
    --------
    >>> s = Series()
    >>> s.append(10, 1.5, 4.2); s.append(20, 3.0, 3.9)
    >>> s.column("step").tolist(), len(s)
    ([10.0, 20.0], 2)
    """

    def __init__(self, capacity: int = 64, limit: int = 200_000) -> None:
        self._data = np.empty((3, max(4, capacity)), dtype=np.float64)
        self._smooth = np.empty(self._data.shape[1], dtype=np.float64)
        self.limit = max(16, limit)
        self.n = 0
        self.version = 0  # bumped on every change, so a chart knows when to redraw
        self._weight = 0.0
        self._ema = 0.0      # the running (biased) EMA and its debiasing factor
        self._norm = 0.0

    def __len__(self) -> int:
        return self.n

    # ---------------------------------------------------------------------------- adding --
    def append(self, step: float, time: float, value: float) -> None:
        """Add one point (``value`` may be NaN: a gap the smoothing steps over)."""
        if self.n == self._data.shape[1]:
            if self.n >= self.limit:
                self._thin()
            else:
                self._grow(min(self.limit, 2 * self.n))
        i = self.n
        self._data[0, i], self._data[1, i], self._data[2, i] = step, time, value
        self._smooth[i] = self._next_smoothed(value)
        self.n += 1
        self.version += 1

    def clear(self) -> None:
        self.n = 0
        self._ema = self._norm = 0.0
        self.version += 1

    def _grow(self, size: int) -> None:
        data = np.empty((3, size), dtype=np.float64)
        data[:, :self.n] = self._data[:, :self.n]
        smooth = np.empty(size, dtype=np.float64)
        smooth[:self.n] = self._smooth[:self.n]
        self._data, self._smooth = data, smooth

    def _thin(self) -> None:
        """Keep every other point of the older half; the newer half stays whole."""
        half = self.n // 2
        keep = np.r_[np.arange(0, half, 2), np.arange(half, self.n)]
        m = len(keep)
        self._data[:, :m] = self._data[:, keep]
        self._smooth[:m] = self._smooth[keep]
        self.n = m

    # --------------------------------------------------------------------------- reading --
    def column(self, name: str) -> np.ndarray:
        """A read-only view of ``step``, ``time`` or ``value`` (valid until the next append)."""
        view = self._data[COLUMNS.index(name), :self.n]
        view.flags.writeable = False
        return view

    def last(self, name: str = "value") -> float | None:
        return float(self._data[COLUMNS.index(name), self.n - 1]) if self.n else None

    # ------------------------------------------------------------------------- smoothing --
    @property
    def weight(self) -> float:
        return self._weight

    def smoothed(self, weight: float) -> np.ndarray:
        """The values after an exponential moving average of ``weight`` (0: none, 0.99:
        heavy), debiased at the start as TensorBoard does; kept up to date as points arrive,
        recomputed only when the weight changes."""
        weight = min(max(float(weight), 0.0), 0.999)
        if weight != self._weight:
            self._weight = weight
            self._ema = self._norm = 0.0
            values = self._data[2, :self.n]
            for i in range(self.n):
                self._smooth[i] = self._next_smoothed(values[i])
        view = self._smooth[:self.n]
        view.flags.writeable = False
        return view

    def _next_smoothed(self, value: float) -> float:
        w = self._weight
        if w == 0.0:
            return value
        if not math.isfinite(value):
            return self._ema / self._norm if self._norm else value
        self._ema = w * self._ema + (1.0 - w) * value
        self._norm = w * self._norm + (1.0 - w)
        return self._ema / self._norm

    # ---------------------------------------------------------------------------- memory --
    @property
    def nbytes(self) -> int:
        """Bytes held by the buffers (for the memory benchmark)."""
        return self._data.nbytes + self._smooth.nbytes


def median_rate(values: np.ndarray, skip_first: bool = True) -> float | None:
    """The median of a rate column, leaving out the first record (warm-up, CUDA graph
    capture, first-batch set-up) when there are others."""
    v = values[1:] if skip_first and len(values) > 1 else values
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else None
