"""The study's charts (pyqtgraph): a titled plot with a line under it saying what is drawn or
why nothing is; the objective's history (each trial and the best so far) and the Pareto front
of two objectives. The data comes shaped from `designer.search.analysis`.

A point clicked on a chart asks for that trial (``trial_clicked(number)``): the table selects
it and its run opens in the training charts.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from designer.search.charts import History, Pareto
from designer.ui.charts.curves import CompactAxis

BEST = "#e8590c"        # the best so far, the Pareto front
TRIAL = "#2f7de1"       # a trial


def small_font() -> QFont:
    font = QFont(QApplication.font())
    font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
    return font


def alpha(color, a: int) -> QColor:
    c = QColor(color)
    c.setAlpha(a)
    return c


class ChartBox(QWidget):
    """A plot with a title and a caption line under it (see the module's docstring)."""

    trial_clicked = Signal(int)

    def __init__(self, title: str, parent=None, left_axis=None, bottom_axis=None) -> None:
        super().__init__(parent)
        self.title = title
        axes = {"left": left_axis or CompactAxis("left"),
                "bottom": bottom_axis or CompactAxis("bottom")}
        self.widget = pg.PlotWidget(axisItems=axes)
        self.widget.setMinimumSize(200, 160)
        self.plot = self.widget.getPlotItem()
        self.plot.setTitle(title, size="9pt")
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setStyle(tickFont=small_font())
            self.plot.getAxis(side).enableAutoSIPrefix(False)  # no "(x0.001)" in the label
        self.caption = QLabel(wordWrap=True)
        self.caption.setFont(small_font())
        self.caption.setContentsMargins(6, 0, 6, 2)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.widget, 1)
        lay.addWidget(self.caption)
        self.legend = None
        self.refresh_theme()

    def say(self, text: str) -> None:
        self.caption.setText(text)

    def clear(self, why: str = "") -> None:
        """Draw nothing, saying ``why``."""
        for item in self.plot.listDataItems():
            item.setData([], [])
        for item in list(self.plot.items):
            if not hasattr(item, "setData"):
                self.plot.removeItem(item)
        self.say(why)

    def add_legend(self):
        """A legend in a row of its own under the plot, never over the points."""
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=2, horSpacing=14,
                                    verSpacing=-6)
        self.plot.layout.addItem(self.legend, 4, 1)
        self.plot.legend = self.legend  # items made with a name are listed in it
        self.refresh_theme()
        return self.legend

    def _clicked(self, item, points, *_) -> None:
        if len(points):
            self.trial_clicked.emit(int(points[0].data()))

    def refresh_theme(self) -> None:
        pal = QApplication.palette()
        base, text = pal.color(QPalette.Base), pal.color(QPalette.Text)
        self.widget.setBackground(base)
        for side in ("left", "bottom"):
            axis = self.plot.getAxis(side)
            axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
            axis.setTextPen(pg.mkPen(text))
        self.plot.titleLabel.setAttr("color", text.name())
        self.plot.titleLabel.setText(self.plot.titleLabel.text)
        if self.legend is not None:
            self.legend.setLabelTextColor(text)
        placeholder = pal.color(QPalette.PlaceholderText)
        cap = self.caption.palette()
        cap.setColor(QPalette.WindowText, placeholder)
        self.caption.setPalette(cap)


class IntegerAxis(CompactAxis):
    """An axis of whole numbers (trial numbers): ticks only where a number is."""

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph's names
        levels = [(s, o) for s, o in super().tickSpacing(minVal, maxVal, size)
                  if s >= 1 and float(s).is_integer()]
        return levels or [(1.0, 0.0)]


class HistoryChart(ChartBox):
    """Each complete trial's objective value, and the best so far, by trial number."""

    def __init__(self, parent=None) -> None:
        super().__init__("Objective by trial", parent, bottom_axis=IntegerAxis("bottom"))
        self.plot.setLabel("bottom", "trial", **{"font-size": "8pt"})
        self.add_legend()
        self.points = pg.ScatterPlotItem(size=7, pen=pg.mkPen(None),
                                         brush=pg.mkBrush(alpha(TRIAL, 170)), name="trial")
        self.points.sigClicked.connect(self._clicked)
        self.best = pg.PlotDataItem(pen=pg.mkPen(BEST, width=2), stepMode=None,
                                    name="best so far")
        self.plot.addItem(self.points)
        self.plot.addItem(self.best)

    def show_history(self, h: History, objective: str, direction: str) -> None:
        if not len(h.values):
            self.clear(f"No complete trial has a {objective} yet.")
            return
        self.points.setData(h.numbers, h.values, data=h.numbers.astype(int))
        # the best so far as steps: it holds until a trial beats it
        xs = np.repeat(h.numbers, 2)[1:]
        ys = np.repeat(h.best, 2)[:-1]
        self.best.setData(xs, ys)
        self.plot.setLabel("left", objective, **{"font-size": "8pt"})
        better = "lower" if direction == "minimize" else "higher"
        i = int(np.argmin(h.values) if direction == "minimize" else np.argmax(h.values))
        self.say(f"{len(h.values)} complete trials; {better} is better; best "
                 f"{h.values[i]:.4g} (trial {int(h.numbers[i])}).")
        self.plot.enableAutoRange()


class ParetoChart(ChartBox):
    """The complete trials on two objectives, the Pareto front highlighted."""

    def __init__(self, parent=None) -> None:
        super().__init__("Pareto front", parent)
        self.add_legend()
        self.others = pg.ScatterPlotItem(size=7, pen=pg.mkPen(None),
                                         brush=pg.mkBrush(alpha(TRIAL, 120)), name="trial")
        self.front = pg.ScatterPlotItem(size=10, pen=pg.mkPen("w", width=1),
                                        brush=pg.mkBrush(BEST), name="Pareto front")
        self.line = pg.PlotDataItem(pen=pg.mkPen(alpha(BEST, 160), width=1.5,
                                                 style=Qt.DashLine))
        for item in (self.line, self.others, self.front):
            self.plot.addItem(item)
        self.others.sigClicked.connect(self._clicked)
        self.front.sigClicked.connect(self._clicked)

    def show_front(self, p: Pareto | None, objectives: list, directions: list) -> None:
        if p is None:
            self.clear("The Pareto front needs two objectives: search with --objective "
                     "val_loss,ms_per_step (say) to trade one against the other.")
            return
        numbers = np.array(p.numbers, dtype=int)
        on = p.on_front
        self.plot.setLogMode(x=_spread(p.x), y=_spread(p.y))
        self.others.setData(p.x[~on], p.y[~on], data=numbers[~on])
        self.front.setData(p.x[on], p.y[on], data=numbers[on])
        order = np.argsort(p.x[on])
        self.line.setData(p.x[on][order], p.y[on][order])
        arrows = ["\u2193" if d == "minimize" else "\u2191" for d in directions[:2]]
        self.plot.setLabel("bottom", f"{objectives[0]} {arrows[0]}", **{"font-size": "8pt"})
        self.plot.setLabel("left", f"{objectives[1]} {arrows[1]}", **{"font-size": "8pt"})
        logs = [name for name, log in zip(objectives, (_spread(p.x), _spread(p.y))) if log]
        self.say((f"{int(on.sum())} of {len(on)} complete trials on the front: none of the "
                  "others is better on both." if len(on) else "No complete trial yet.")
                 + (f" {' and '.join(logs)} in log scale." if logs else ""))
        self.plot.enableAutoRange()


def _spread(values: np.ndarray) -> bool:
    """Log scale for values that span more than a factor of 20 (all positive)."""
    return bool(len(values) and values.min() > 0 and values.max() / values.min() > 20)
