"""The curves of one run on the charts, and the axis labels they use.

`RunCurves` makes a run's plot items once and hands them the run's numpy buffers on each
redraw; `CompactAxis` labels ticks briefly (150k, 1.2M, 2e-4) so small plots stay readable.
"""
from __future__ import annotations

import math
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from designer.ui.runs.run import Run

SYMBOLS_BELOW = 60           # draw point markers while a curve is this short
DENSE_ABOVE = 400            # and draw it with a 1-pixel line past this many points
DOWNSAMPLE_FACTOR = 1.5      # points kept per pixel of width when a curve is downsampled
WIDTHS = {"loss": 2, "accuracy": 2, "rmse": 2, "lr": 1.5, "tokens_per_s": 1.5}

PLOT_OF = {"loss_raw": "loss", "loss": "loss", "val_loss": "loss", "accuracy": "accuracy",
           "val_accuracy": "accuracy", "rmse": "rmse", "val_rmse": "rmse", "lr": "lr",
           "tokens_per_s": "tokens"}


class CompactAxis(pg.AxisItem):
    """Tick labels that fit a small plot: 150k, 1.2M, 2e-4."""

    def tickStrings(self, values, scale, spacing):
        if self.logMode or not len(values):
            return super().tickStrings(values, scale, spacing)
        tiny = max(abs(v * scale) for v in values) < 1e-3  # one style for the whole axis
        return [compact(v * scale, spacing * scale, tiny) for v in values]


def compact(value: float, spacing: float, tiny: bool | None = None) -> str:
    """A short label for a tick at ``value`` with ticks ``spacing`` apart (``tiny``: write
    it as ``2e-4``; by default when the value is below 0.001)."""
    a = abs(value)
    if a < 1e-12:
        return "0"
    if tiny is None:
        tiny = a < 1e-3
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= limit and spacing >= limit / 100:
            return f"{value / limit:.{_decimals(spacing / limit)}f}{suffix}"
    if tiny:
        exponent = math.floor(math.log10(a))
        digits = _decimals(spacing / 10 ** exponent)
        return f"{value:.{min(digits, 2)}e}".replace("e-0", "e-")
    return f"{value:.{_decimals(spacing)}f}"


def _decimals(step: float) -> int:
    """The decimals that show ticks ``step`` apart exactly (at most 6)."""
    for d in range(7):
        scaled = step * 10 ** d
        if abs(scaled - round(scaled)) < 1e-6 * max(1.0, scaled):
            return d
    return 6


class RunCurves:
    """The curves one run owns on each plot (made once; fed with setData)."""

    def __init__(self, charts, run: Run, color: str) -> None:
        """``charts`` is the `ChartsPanel` the curves are drawn on."""
        self.run = run
        self.color = QColor(color)
        c = self.color
        faint = QColor(c)
        faint.setAlpha(70)
        self.drawn_version = -1
        self.items = {
            "loss_raw": charts.loss.plot(pen=pg.mkPen(faint, width=1)),
            "loss": charts.loss.plot(pen=pg.mkPen(c, width=2)),
            "val_loss": charts.loss.plot(pen=pg.mkPen(c, width=1.5, style=Qt.DashLine),
                                         symbol="o", symbolSize=7, symbolBrush=c,
                                         symbolPen=pg.mkPen(c)),
            "accuracy": charts.accuracy.plot(pen=pg.mkPen(c, width=2)),
            "val_accuracy": charts.accuracy.plot(pen=pg.mkPen(c, width=1.5, style=Qt.DashLine),
                                                 symbol="o", symbolSize=6, symbolBrush=c,
                                                 symbolPen=pg.mkPen(c)),
            "rmse": charts.rmse.plot(pen=pg.mkPen(c, width=2)),
            "val_rmse": charts.rmse.plot(pen=pg.mkPen(c, width=1.5, style=Qt.DashLine),
                                         symbol="o", symbolSize=6, symbolBrush=c,
                                         symbolPen=pg.mkPen(c)),
            "lr": charts.lr.plot(pen=pg.mkPen(c, width=1.5)),
            "tokens_per_s": charts.tokens.plot(pen=pg.mkPen(c, width=1.5)),
        }
        for item in self.items.values():  # about three vertices a pixel (peak mode doubles
            item.opts["autoDownsampleFactor"] = DOWNSAMPLE_FACTOR  # the buckets), not ten
        self.symbols = {}
        self.bounds: dict[str, tuple] = {}  # item name -> (x0, x1, y0, y1) of its data
        self.loss_plot = charts.loss
        self.markers: list = []  # one vertical line per event of the run (see Run.events)

    def remove(self, charts) -> None:
        for item in self.items.values():
            for plot in charts.plot_items():
                if item in plot.listDataItems():
                    plot.removeItem(item)
        for line in self.markers:
            charts.loss.removeItem(line)
        self.markers = []

    def set_visible(self, visible: bool) -> None:
        for item in list(self.items.values()) + self.markers:
            item.setVisible(visible)

    def update(self, x_key: str, smoothing: float, scale: float) -> None:
        """Hand the run's buffers to the curves (views, no copies, except scaled losses)."""
        self._mark_events(x_key)
        s = self.run.series
        for name, item in self.items.items():
            series = s["loss" if name == "loss_raw" else name]
            n = len(series)
            if n == 0 or (name == "loss_raw" and smoothing == 0):
                item.setData([], [])
                self.bounds.pop(name, None)
                continue
            x = series.column(x_key)
            if name in ("loss", "accuracy", "rmse"):
                y = series.smoothed(smoothing)
            else:
                y = series.column("value")
            if name in ("loss", "loss_raw", "val_loss") and scale != 1.0:
                y = y * scale
            item.setData(x, y)
            self.bounds[name] = _bounds(x, y)
            if name in WIDTHS:
                self._style(name, item, n)

    def _mark_events(self, x_key: str) -> None:
        """A dashed vertical line on the loss chart where the run diverged or was stopped by
        a non-finite loss, labelled, with the message as its tool-tip."""
        events = self.run.events
        while len(self.markers) < len(events):
            kind, _, _, message = events[len(self.markers)]
            style = Qt.DashLine if kind == "diverging" else Qt.SolidLine
            line = pg.InfiniteLine(angle=90, movable=False,
                                   pen=pg.mkPen(self.color, width=1.5, style=style),
                                   label="loss diverging" if kind == "diverging"
                                   else "stopped: NaN",
                                   labelOpts={"position": 0.92, "color": self.color,
                                              "anchors": [(1, 0), (1, 0)]})
            line.setToolTip(message)
            line.setZValue(-5)
            line.setVisible(self.run.visible)
            self.loss_plot.addItem(line, ignoreBounds=True)
            self.markers.append(line)
        for line, (_, step, seconds, _) in zip(self.markers, events):
            line.setValue(step if x_key == "step" else seconds)

    def _style(self, name: str, item, n: int) -> None:
        """Markers while a curve is short; a thinner line once it is dense (a wide
        antialiased line costs five to ten times as much to draw, per redraw)."""
        style = "sparse" if n < SYMBOLS_BELOW else ("dense" if n > DENSE_ABOVE else "plain")
        if self.symbols.get(name) == style:
            return
        self.symbols[name] = style
        if style == "sparse":
            item.setSymbol("o")
            item.setSymbolSize(5)
            item.setSymbolBrush(self.color)
            item.setSymbolPen(pg.mkPen(self.color))
        else:
            item.setSymbol(None)
        item.setPen(pg.mkPen(self.color, width=1 if style == "dense" else WIDTHS[name]))


def _bounds(x, y) -> tuple | None:
    import numpy as np
    finite = y[np.isfinite(y)]
    if not len(finite):
        return None
    return float(x.min()), float(x.max()), float(finite.min()), float(finite.max())
