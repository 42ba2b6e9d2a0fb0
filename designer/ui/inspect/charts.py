"""Two small charts of the Inspect view: gate saturation over training, and the per-step
difference between the engines (the parity chart the unrolled view opens)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QLabel, QStackedLayout, QWidget

GATE_COLORS = {"i": "#2f7de1", "f": "#2e9d57", "o": "#e8590c", "g": "#7048e8",
               "r": "#2f7de1", "z": "#2e9d57", "n": "#7048e8", "all": "#8a8a8a"}
GATE_NAMES = {"i": "input i", "f": "forget f", "o": "output o", "g": "candidate g",
              "r": "reset r", "z": "update z", "n": "candidate n", "all": "all gates"}
FLOOR = 1e-12   # differences of exactly 0 are drawn here on the log scale


def _chart(title: str) -> pg.PlotWidget:
    w = pg.PlotWidget()
    plot = w.getPlotItem()
    plot.setTitle(title, size="9pt")
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    w.setMinimumHeight(150)
    return w


def _theme(widget: pg.PlotWidget, legend=None) -> None:
    pal = QApplication.palette()
    base, text = pal.color(pal.ColorRole.Base), pal.color(pal.ColorRole.Text)
    widget.setBackground(base)
    plot = widget.getPlotItem()
    for side in ("left", "bottom"):
        axis = plot.getAxis(side)
        axis.setPen(pg.mkPen(pal.color(pal.ColorRole.Mid)))
        axis.setTextPen(pg.mkPen(text))
    plot.titleLabel.setAttr("color", text.name())
    plot.titleLabel.setText(plot.titleLabel.text)
    if legend is not None:
        legend.setLabelTextColor(text)
        for _, label in legend.items:
            label.setText(label.text, color=text.name())
        legend.setBrush(pg.mkBrush(QColor(base.red(), base.green(), base.blue(), 200)))


EMPTY_NOTE = ("No measurement yet: the gates are measured at every validation, and at every "
              "live update while a run trains with this view open.")


class SaturationChart(QWidget):
    """The share of one level's gates that are saturated, at every point measured so far.

    The plot shows only data: its legend sits below it, and before anything is measured the
    panel shows what it will show in words, in place of the plot (``empty``).
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        plot = self.plot_widget.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=0.25)
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setLabel("bottom", "training step", **{"font-size": "8pt"})
        plot.setLabel("left", "% saturated", **{"font-size": "8pt"})
        # the legend in a row of its own under the plot, never over the curves
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=3, horSpacing=14,
                                    verSpacing=-6)
        plot.layout.addItem(self.legend, 4, 1)
        plot.legend = self.legend  # curves made with a name are listed in it
        self.curves: dict = {}
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setMargin(18)
        self.empty.setAutoFillBackground(True)
        self.empty.setTextFormat(Qt.RichText)
        self.pages = QStackedLayout(self)
        self.pages.addWidget(self.plot_widget)
        self.pages.addWidget(self.empty)
        self.setMinimumHeight(150)
        self._show_empty(True)
        self.refresh_theme()

    def sizeHint(self):
        return self.plot_widget.sizeHint()  # the plot's, also while the note stands in for it

    def _show_empty(self, empty: bool) -> None:
        self.pages.setCurrentWidget(self.empty if empty else self.plot_widget)

    def set_history(self, history: list, level: str, name: str = "") -> int:
        """``history``: ``[(step, {level: {gate: fraction}}), ...]``; draws ``level``'s
        (called ``name`` in the title); returns the points drawn."""
        points = [(s, d[level]) for s, d in history if level in d]
        gates = list(points[-1][1]) if points else []
        plot = self.plot_widget.getPlotItem()
        for gate in list(self.curves):
            if gate not in gates:
                plot.removeItem(self.curves.pop(gate))
                self.legend.removeItem(GATE_NAMES.get(gate, gate))
        x = np.array([s for s, _ in points], dtype=float)
        top = 0.0
        for gate in gates:
            if gate not in self.curves:
                color = QColor(GATE_COLORS.get(gate, "#888888"))
                pen = pg.mkPen(color, width=2 if gate != "all" else 1.5,
                               style=Qt.DashLine if gate == "all" else Qt.SolidLine)
                self.curves[gate] = plot.plot(pen=pen, symbol="o", symbolSize=5,
                                              symbolBrush=color, symbolPen=pg.mkPen(color),
                                              name=GATE_NAMES.get(gate, gate))
            y = np.array([100 * d.get(gate, np.nan) for _, d in points])
            self.curves[gate].setData(x, y)
            self.curves[gate].setSymbol("o" if len(points) < 40 else None)
            top = max(top, float(np.nanmax(y)) if np.isfinite(y).any() else 0.0)
        self._show_empty(not points)
        if points:
            # a share: from 0 up, over the steps measured (one point: from step 0 to it)
            first, last = (float(x[0]), float(x[-1])) if len(x) > 1 else (0.0, float(x[0]))
            vb = plot.getViewBox()
            vb.setXRange(first, max(last, first + 1), padding=0.06)
            vb.setYRange(0, min(100.0, max(top * 1.08, 1.0)), padding=0.04)
        title = f"Saturated gates of {name or level} (below 0.05 or above 0.95)"
        plot.setTitle(title, size="9pt")
        return len(points)

    def refresh_theme(self) -> None:
        _theme(self.plot_widget, self.legend)
        pal = QApplication.palette()
        self.empty.setBackgroundRole(pal.ColorRole.Base)
        text, dim = (pal.color(role).name() for role in (pal.ColorRole.Text,
                                                         pal.ColorRole.PlaceholderText))
        self.empty.setText(f"<span style='color:{text}'><b>Saturated gates over training"
                           f"</b></span><br><br><span style='color:{dim}'>{EMPTY_NOTE}</span>")


class ParityChart(pg.PlotWidget):
    """Per step, how far the two engines are apart for the current weights (log scale)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        plot = self.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=0.25)
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setLogMode(y=True)
        plot.setLabel("bottom", "step (time)", **{"font-size": "8pt"})
        plot.setLabel("left", "difference / largest value", **{"font-size": "8pt"})
        plot.getAxis("left").enableAutoSIPrefix(False)
        self.legend = plot.addLegend(offset=(-6, -6), labelTextSize="8pt", verSpacing=-6)
        self.output = self.plot(pen=pg.mkPen("#2f7de1", width=2), name="output h\u209c")
        self.grad = self.plot(pen=pg.mkPen("#e8590c", width=2),
                              name="gradient reaching the input x\u209c")
        self.limit = pg.InfiniteLine(angle=0, pen=pg.mkPen("#d93b3b", width=1.5,
                                                           style=Qt.DashLine),
                                     label="tolerance 1e-5",
                                     labelOpts={"position": 0.92, "color": "#d93b3b"})
        plot.addItem(self.limit)
        self.refresh_theme()

    def set_report(self, report: dict, layer: str, where: str) -> dict:
        """Draw a ``step_parity`` report; returns the worst relative differences."""
        t_ = report["steps"]
        x = np.arange(t_)
        rel, low = {}, []
        for curve, key, scale in ((self.output, "output", report["output_scale"]),
                                  (self.grad, "grad_input", report["grad_scale"])):
            values = np.asarray(report[key], dtype=float) / (scale if scale > 0 else 1.0)
            rel[key] = float(values.max()) if len(values) else 0.0
            low += [float(v) for v in values if v > 0]
            curve.setData(x, np.maximum(values, FLOOR))
        tol = report.get("tolerance", 1e-5)
        self.limit.setValue(np.log10(tol))
        a, b = report["pair"]
        self.getPlotItem().setTitle(f"{layer}: {a} vs {b} engine, largest difference at "
                                    "each step", size="9pt")
        bottom = max(FLOOR, min(low, default=FLOOR) / 10)
        self.getPlotItem().setYRange(np.log10(bottom), np.log10(max(tol * 10, *rel.values(),
                                                                     FLOOR)) + 0.3)
        return rel

    def refresh_theme(self) -> None:
        _theme(self, self.legend)
