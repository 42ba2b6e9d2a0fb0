"""Ranges that move in steps, so a live chart's axes rarely change.

pyqtgraph's auto-range fits the data exactly, so every new point changes the range and
every axis (ticks, labels, grid) is laid out and drawn again: about 5 ms a plot here, most of
a redraw's cost. `RangeKeeper` instead leaves room: the x range grows 30 % past the data,
the y range keeps a margin and grows by a quarter when the data leaves it, so most redraws
paint only the curves (a redraw of four plots drops from ~25 ms to ~2 ms).

Zooming or panning with the mouse hands the plot to the user; :meth:`RangeKeeper.fit`
(the charts' Fit button, or a double-click) gives it back.
"""
from __future__ import annotations

import math

X_ROOM = 0.3     # the x range reaches this share of the data's span past its end (and 3 %
                 # before its start, so the first point's marker shows whole)
Y_MARGIN = 0.06  # the y range keeps this share of its height above and below the data
Y_GROW = 0.25    # and grows by this share of the data's height when the data leaves it
Y_SHRINK = 0.5   # it is fitted again when the data fills less than this share of it


def _span(lo: float, hi: float) -> float:
    return hi - lo if hi > lo else max(abs(hi) * 0.1, 1e-9)


def plan_x(data: tuple[float, float], view: tuple[float, float] | None
           ) -> tuple[float, float] | None:
    """The new x range for data spanning ``data`` (None: keep ``view``)."""
    lo, hi = data
    if view is not None:
        v0, v1 = view
        if v0 <= lo and hi <= v1 and (hi - lo) >= 0.5 * (v1 - v0) / (1 + X_ROOM):
            return None
    span = _span(lo, hi)
    return lo - 0.03 * span, hi + X_ROOM * span


def plan_y(data: tuple[float, float], view: tuple[float, float] | None
           ) -> tuple[float, float] | None:
    """The new y range for data spanning ``data`` (None: keep ``view``)."""
    lo, hi = data
    span = _span(lo, hi)
    if view is not None:
        v0, v1 = view
        if v0 <= lo and hi <= v1 and span >= Y_SHRINK * (v1 - v0):
            return None
        if span >= Y_SHRINK * (v1 - v0) * 0.8:  # data left the range: grow it that way
            return (lo - Y_GROW * span if lo < v0 else v0,
                    hi + Y_GROW * span if hi > v1 else v1)
    return lo - Y_MARGIN * span, hi + Y_MARGIN * span


class RangeKeeper:
    """Keeps one plot's range around its data, changing it as seldom as it can."""

    def __init__(self, plot) -> None:
        self.plot = plot
        self.vb = plot.getViewBox()
        self.auto = True
        self.view: tuple | None = None
        self.bounds: tuple | None = None
        plot.disableAutoRange()
        self.vb.sigRangeChangedManually.connect(self._manual)

    def _manual(self, *_) -> None:
        self.auto = False

    def fit(self) -> None:
        """Follow the data again (after the user zoomed or panned, or the axes changed)."""
        self.auto = True
        self.view = None
        self.update()

    def update(self, bounds: tuple | None = None) -> bool:
        """Move the range if the data, spanning ``bounds`` ((x0, x1), (y0, y1)) in data
        coordinates, needs it; True when it moved."""
        if bounds is not None:
            self.bounds = bounds
        if not self.auto or self.bounds is None:
            return False
        (x0, x1), (y0, y1) = self.bounds
        if self.plot.ctrl.logXCheck.isChecked():  # the view works in log10 x
            if x1 <= 0:
                return False
            x0, x1 = math.log10(max(x0, x1 * 1e-9, 1e-300)), math.log10(x1)
        old = self.view
        nx = plan_x((x0, x1), old[0] if old else None)
        ny = plan_y((y0, y1), old[1] if old else None)
        if nx is None and ny is None:
            return False
        new = (nx or old[0], ny or old[1])
        self.view = new
        self.vb.setRange(xRange=new[0], yRange=new[1], padding=0, update=True)
        return True
