"""Parallel coordinates and parameter importances (pyqtgraph).

Parallel coordinates: one vertical axis per searched parameter and one for the objective, each
normalised to [0, 1] (`designer.search.analysis.parallel_coordinates`); one polyline per
complete trial, coloured by its objective value (pale: worst, deep blue: better), the best
drawn on top, thick and orange as on the other charts.

Importances: Optuna's share of each parameter in the objective, as horizontal bars, largest
on top; computed with the study off the GUI thread, or a sentence saying why there are none.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication

from designer.search.analysis import fmt
from designer.search.charts import Parallel

from designer.ui.experiments.charts import BEST, ChartBox, alpha, small_font

# worst to best: pale to deep blue (readable on light and dark backgrounds alike)
COLORS = pg.ColorMap([0.0, 0.5, 1.0], ["#c9d3df", "#6f9fd8", "#1f4e9c"])


class ParallelChart(ChartBox):
    """See the module's docstring."""

    def __init__(self, parent=None) -> None:
        super().__init__("Parallel coordinates", parent)
        self.plot.showGrid(x=False, y=False)
        self.plot.hideAxis("left")
        self.plot.getAxis("bottom").setStyle(showValues=False)
        self.plot.getAxis("bottom").setPen(pg.mkPen(None))
        self.plot.setMouseEnabled(x=False, y=False)
        # the axes' names along the top, outside the lines: never cut by a short plot
        self.names = self.plot.getAxis("top")
        self.plot.showAxis("top")
        self.names.setStyle(tickFont=small_font(), tickLength=0, autoExpandTextSpace=False)
        self.names.setPen(pg.mkPen(None))
        self.names.setHeight(2 * QFontMetrics(small_font()).height() + 8)
        self.cmap = COLORS
        self.data: Parallel | None = None

    def refresh_theme(self) -> None:
        super().refresh_theme()
        names = getattr(self, "names", None)
        if names is not None:
            names.setTextPen(pg.mkPen(QApplication.palette().color(QPalette.Text)))

    def show_parallel(self, p: Parallel) -> None:
        self.plot.clear()
        self.data = p
        k = len(p.labels)
        self.names.setTicks([[(float(j), _wrap(label)) for j, label in enumerate(p.labels)]])
        if not len(p.numbers):
            self.say("Each complete trial becomes a line across the parameters' axes here.")
            return
        pal = QApplication.palette()
        text, mid = pal.color(QPalette.Text), pal.color(QPalette.Mid)
        behind = pg.mkBrush(alpha(pal.color(QPalette.Base), 190))  # ticks stay readable
        xs = np.arange(k, dtype=float)
        order = np.argsort(p.quality)  # the best last: drawn on top
        for i in order:
            q = float(p.quality[i])
            best = i == order[-1]
            color = pg.mkColor(BEST) if best else self.cmap.map(q, mode="qcolor")
            color.setAlpha(255 if best else 110 + int(120 * q))
            self.plot.addItem(pg.PlotDataItem(xs, p.lines[i], connect="finite",
                                              pen=pg.mkPen(color, width=3 if best else 1.4)))
        for j in range(k):
            self.plot.addItem(pg.InfiniteLine(pos=j, angle=90, pen=pg.mkPen(mid, width=1)))
            for pos, label in p.ticks[j]:
                tick = pg.TextItem(label, color=alpha(text, 220), anchor=(0.0, 0.5),
                                   fill=behind)
                tick.setFont(small_font())
                tick.setPos(j + 0.03, pos)
                self.plot.addItem(tick)
        self.plot.setXRange(-0.5, k - 0.55, padding=0)
        self.plot.setYRange(-0.05, 1.05, padding=0)
        best = p.numbers[int(order[-1])]
        self.say(f"{len(p.numbers)} complete trials, one line each; deeper blue: better "
                 f"{p.labels[-1].split()[0]}, orange: the best (trial {best}). Log ranges are "
                 "spaced in log scale.")


class ImportanceChart(ChartBox):
    """See the module's docstring."""

    def __init__(self, parent=None) -> None:
        self.names_axis = pg.AxisItem("left")
        super().__init__("Parameter importance", parent, left_axis=self.names_axis)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLabel("bottom", "share of the objective's variation",
                           **{"font-size": "8pt"})

    def show_importances(self, importances: dict, why: str, objective: str) -> None:
        self.plot.clear()
        if not importances:
            self.names_axis.setTicks([[]])
            self.say(why or "Importances come once the study is read.")
            return
        names = list(importances)[::-1]          # the largest on top
        values = np.array([importances[n] for n in names], dtype=float)
        ys = np.arange(len(names), dtype=float)
        bars = pg.BarGraphItem(x0=np.zeros_like(values), y=ys, height=0.6, width=values,
                               brush=pg.mkBrush(alpha("#2f7de1", 200)), pen=pg.mkPen(None))
        self.plot.addItem(bars)
        for y, v in zip(ys, values):
            label = pg.TextItem(fmt(round(float(v), 3)),
                                color=QApplication.palette().color(QPalette.Text),
                                anchor=(0.0, 0.5))
            label.setFont(small_font())
            label.setPos(float(v) + 0.01, y)
            self.plot.addItem(label)
        self.names_axis.setTicks([[(float(y), n) for y, n in zip(ys, names)]])
        self.plot.setXRange(0, float(values.max()) * 1.3 or 1.0, padding=0)  # room: labels
        self.plot.setYRange(-0.6, len(names) - 0.4, padding=0)
        self.say(f"Toward {objective}, by Optuna's default evaluator (PED-ANOVA) over the "
                 "complete trials.")


def _wrap(name: str) -> str:
    """``lstm1.num_output`` on two lines (the layer, then the parameter)."""
    head, dot, tail = name.partition(".")
    return f"{head}\n{tail}" if dot and len(name) > 12 else name
