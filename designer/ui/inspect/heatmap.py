"""The step charts of the Inspect view (pyqtgraph), all on one time axis:

- **surprise**: a bar per character, coloured as in the output window;
- for a sequence run in its place **what the net makes of the sequence**: a classifier's
  class probabilities after each step, a forecaster's window with the forecast after it
  (:mod:`.reading`);
- **heatmap**: one quantity (a gate, c or h) of every unit at every step, units up, the
  characters read along x, with a colour bar that says what the colours mean;
- **gradient through time**: how large the gradient reaching h_t is, on a log scale.

The three share the x range (zoom with the wheel, drag to pan); a click on the heatmap picks
a unit, and the line over the plots says what is under the mouse.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QApplication, QGraphicsRectItem

from designer.ui.look import theme

from designer.ui.inspect.reading import draw_leaning, draw_window
from designer.ui.inspect.surprise import surprise_color

MEAN_COLOR, LAST_COLOR = "#2f7de1", "#e8590c"
MIN_PX_PER_CHAR = 7     # below this, the x axis shows step numbers instead of characters
AXIS_WIDTH = 62

# what each quantity is, for titles and colour bars: (name, low end, high end)
QUANTITIES = {
    "i": ("input gate i", "0 shut", "1 open: the candidate g enters the cell"),
    "f": ("forget gate f", "0 forget", "1 keep the cell"),
    "o": ("output gate o", "0 hide", "1 show the cell as h"),
    "g": ("candidate g", "-1", "+1"),
    "r": ("reset gate r", "0 ignore", "1 use the previous h"),
    "z": ("update gate z", "0 take the candidate", "1 keep the previous h"),
    "n": ("candidate n", "-1", "+1"),
    "c": ("cell state c", "negative", "positive"),
    "h": ("hidden state h", "-1", "+1"),
}
SIGMOID = ("i", "f", "o", "r", "z")


def glyph(symbol: str) -> str:
    """A character as an axis label: newline, space and tab made visible."""
    return {"\n": "\u21b5", " ": "\u2423", "\t": "\u21e5"}.get(symbol, symbol)


def levels_for(quantity: str, values: np.ndarray) -> tuple[float, float]:
    """Colour range: [0, 1] for gates, [-1, 1] for tanh values, symmetric around 0 for c."""
    if quantity in SIGMOID:
        return 0.0, 1.0
    if quantity == "c":
        top = float(np.percentile(np.abs(values), 99)) if values.size else 1.0
        top = max(1.0, math.ceil(top * 2) / 2)
        return -top, top
    return -1.0, 1.0


def color_map() -> pg.ColorMap:
    """Blue (low) - white - red (high), the same for every quantity."""
    return pg.colormap.get("CET-D1A")


class StepAxis(pg.AxisItem):
    """A time axis labelled with the characters read, where there is room for them."""

    def __init__(self, orientation: str = "bottom", **kw) -> None:
        super().__init__(orientation, **kw)
        self.labels: list[str] | None = None
        self._chars = False
        self.setStyle(tickFont=theme.font(7.5, mono=True), tickTextOffset=2)

    def set_labels(self, labels: list[str] | None) -> None:
        self.labels = labels
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):
        span = maxVal - minVal
        wide = max((len(x) for x in self.labels), default=1) if self.labels else 1
        room = MIN_PX_PER_CHAR if wide == 1 else 7 * wide + 4   # numbers or times: wider
        self._chars = bool(self.labels) and span > 0 and size / span >= room
        if self._chars:
            first = max(0, math.ceil(minVal - 0.5))
            last = min(len(self.labels) - 1, math.floor(maxVal - 0.5))
            return [(1.0, [i + 0.5 for i in range(first, last + 1)])]
        return super().tickValues(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):
        if self._chars and self.labels:
            return [glyph(self.labels[int(v)]) if 0 <= int(v) < len(self.labels) else ""
                    for v in values]
        return [f"{v:g}" for v in values]


# (least, most) height of each chart: the heatmap takes what the others leave, never less
# than its least, so the view keeps every chart readable on a 1366x768 screen
HEIGHTS = {"surprise": (60, 86), "reading": (100, 150), "heat": (120, None), "grad": (110, 170)}
AXIS_ROOM = 34  # the gradient chart's time axis and its label, under the charts


def _plot(layout, row: int, axis: pg.AxisItem | None = None, height: tuple = (None, None)):
    plot = layout.addPlot(row=row, col=0, axisItems={"bottom": axis} if axis else None)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.getAxis("left").setWidth(AXIS_WIDTH)
    least, most = height
    if least:
        plot.setMinimumHeight(least)
    if most:
        plot.setMaximumHeight(most)
    return plot


class StepCharts(pg.GraphicsLayoutWidget):
    """Surprise bars, the heatmap and the gradient chart, on one time axis.

    Signals
    -------
    unit_clicked(int)
        A unit's row was clicked.
    hovered(str)
        A line describing what is under the mouse ("" when nothing is).
    """

    unit_clicked = Signal(int)
    hovered = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True)
        self.ci.layout.setSpacing(2)
        self.surprise = _plot(self, 0, StepAxis(), HEIGHTS["surprise"])
        self.surprise.setLabel("left", "surprise", units=None, **{"font-size": "8pt"})
        self.surprise.getAxis("bottom").setStyle(showValues=False)
        self.reading = _plot(self, 1, None, HEIGHTS["reading"])
        self.reading.getAxis("bottom").setStyle(showValues=False)
        self.reading.showGrid(x=False, y=True, alpha=0.2)
        self.reading.setVisible(False)
        self.reading_curves: dict = {}
        self.heat_axis = StepAxis()
        self.heat = _plot(self, 2, self.heat_axis, HEIGHTS["heat"])
        self.heat.setLabel("left", "unit", **{"font-size": "8pt"})
        self.heat.invertY(True)  # unit 0 at the top, as a table reads
        self.image = pg.ImageItem(axisOrder="col-major")
        self.heat.addItem(self.image)
        self.bar = pg.ColorBarItem(colorMap=color_map(), interactive=False, width=14,
                                   values=(0, 1))
        self.bar.setImageItem(self.image)
        self.addItem(self.bar, row=2, col=1)
        self.grad_axis = StepAxis()
        self.grad = _plot(self, 3, self.grad_axis, HEIGHTS["grad"])
        self.grad.setLogMode(y=True)
        self.grad.getAxis("left").enableAutoSIPrefix(False)
        self.grad.setLabel("left", "|\u2202L/\u2202h\u209c|", **{"font-size": "8pt"})
        self.grad.setLabel("bottom", "step (time)", **{"font-size": "8pt"})
        self.grad_mean = self.grad.plot()
        self.grad_last = self.grad.plot()
        for plot in (self.reading, self.heat, self.grad):
            plot.setXLink(self.surprise)
        self.one_loss = False  # the gradient of one loss at the end (sequence runs)
        self.bars: pg.BarGraphItem | None = None
        self.marker = QGraphicsRectItem()
        self.marker.setZValue(10)
        self.heat.addItem(self.marker, ignoreBounds=True)
        self.marker.hide()
        self.values: np.ndarray | None = None
        self.order = self.row_of = np.arange(0)
        self.labels: list[str] = []
        self.quantity = "f"
        self.unit: int | None = None
        self._fit_heights()
        self.scene().sigMouseClicked.connect(self._clicked)
        self.scene().sigMouseMoved.connect(self._moved)
        self.refresh_theme()

    # ---------------------------------------------------------------------- data --
    def show_nothing(self) -> None:
        """No steps, no heatmap, no reading (a run that cannot be shown). Not ``clear``:
        that is the layout's own, which would take the plots away."""
        self.set_steps([], False, None, None, None)
        self.set_reading(None)
        self.values = None
        self.image.clear()
        self.heat.setTitle("", size="9pt")
        self.marker.hide()

    def set_reading(self, seen) -> None:
        """Above the heatmap, what a sequence run made of its sequence (``seen``, an
        `Inspection`): nothing for other runs (or ``None``)."""
        self.reading.clear()
        self.reading_curves = {}
        probe = None if seen is None else seen.probe
        text = QApplication.palette().color(QApplication.palette().ColorRole.Text).name()
        if probe is not None and seen.leaning is not None:
            self.reading_curves = draw_leaning(self.reading, seen.leaning,
                                               probe.info.get("classes") or [],
                                               probe.target, text)
        elif probe is not None and seen.forecast is not None:
            self.reading_curves = draw_window(self.reading, probe.info, seen.forecast, text)
        self.reading.setVisible(bool(self.reading_curves))
        self._fit_heights()

    def _fit_heights(self) -> None:
        """The widget's least height: every chart shown at its least (what the window's
        layout then never squeezes below)."""
        shown = ["surprise", "heat", "grad"] + (["reading"] if self.reading.isVisible() else [])
        self.setMinimumHeight(sum(HEIGHTS[k][0] for k in shown) + AXIS_ROOM
                              + 2 * len(shown) * self.ci.layout.verticalSpacing())

    def set_steps(self, labels: list[str], chars: bool, surprise: np.ndarray | None,
                  grad_mean: np.ndarray | None, grad_last: np.ndarray | None) -> None:
        """What does not depend on the level or quantity shown: the x axis, the surprise
        bars and the gradient chart."""
        self.labels = list(labels)
        shown = self.labels if chars else None
        for axis in (self.heat_axis, self.surprise.getAxis("bottom")):
            axis.set_labels(shown)
        t_ = len(labels)
        if self.bars is not None:
            self.surprise.removeItem(self.bars)
            self.bars = None
        if surprise is not None:
            s = np.nan_to_num(surprise, nan=0.0)
            brushes = [pg.mkBrush(_opaque(surprise_color(v))) for v in surprise]
            self.bars = pg.BarGraphItem(x0=np.arange(t_) + 0.05, width=0.9, height=s,
                                        brushes=brushes, pens=[pg.mkPen(None)] * t_)
            self.surprise.addItem(self.bars)
            self.surprise.setYRange(0, max(6.0, float(s.max()) * 1.05), padding=0)
            self.surprise.setLabel("left", "surprise<br>(nats)", **{"font-size": "8pt"})
        self.surprise.setVisible(surprise is not None)
        x = np.arange(t_) + 0.5
        for curve, values in ((self.grad_mean, grad_mean), (self.grad_last, grad_last)):
            if values is None:
                curve.setData([], [])
                continue
            keep = values > 0  # log scale: zero gradients (the last step) are left out
            curve.setData(x[keep], values[keep])
        self.grad.setVisible(grad_mean is not None)
        self.one_loss = grad_mean is not None and grad_last is None
        self._grad_title()
        self.surprise.setXRange(0, max(t_, 1), padding=0)

    def set_map(self, values: np.ndarray, quantity: str, title: str,
                order: np.ndarray | None = None, order_text: str = "") -> None:
        """Show ``values`` (T, H) of ``quantity`` (``i``, ``f``... ``c``, ``h``); ``order``
        lists the units from the top row down (``None``: by number), ``order_text`` says
        how they are ordered."""
        self.values, self.quantity = values, quantity
        self.order = np.arange(values.shape[1]) if order is None else np.asarray(order)
        self.row_of = np.empty_like(self.order)
        self.row_of[self.order] = np.arange(len(self.order))
        by_number = order is None
        self.heat.getAxis("left").setStyle(showValues=by_number)
        self.heat.setLabel("left", "unit" if by_number else f"units, {order_text}",
                           **{"font-size": "8pt"})
        lo, hi = levels_for(quantity, values)
        self.image.setImage(values[:, self.order], levels=(lo, hi), autoLevels=False)
        self.image.setRect(QRectF(0, 0, values.shape[0], values.shape[1]))
        self.bar.setLevels((lo, hi))
        name, low, high = QUANTITIES.get(quantity, (quantity, "low", "high"))
        self.bar.setLabel("right", f"{name}:  {low}  \u2192  {high}", **{"font-size": "8pt"})
        self.heat.setTitle(title, size="9pt")
        self.heat.setYRange(0, values.shape[1], padding=0)
        self.set_unit(self.unit if self.unit is not None and self.unit < values.shape[1]
                      else None)

    def set_unit(self, unit: int | None) -> None:
        self.unit = unit
        if unit is None or self.values is None:
            self.marker.hide()
            return
        self.marker.setRect(QRectF(0, int(self.row_of[unit]), self.values.shape[0], 1))
        self.marker.show()

    # ------------------------------------------------------------------- the mouse --
    def _at(self, scene_pos) -> tuple[int, int] | None:
        if self.values is None or not self.heat.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.heat.vb.mapSceneToView(scene_pos)
        t, row = int(math.floor(p.x())), int(math.floor(p.y()))
        if 0 <= t < self.values.shape[0] and 0 <= row < self.values.shape[1]:
            return t, int(self.order[row])
        return None

    def _clicked(self, event) -> None:
        hit = self._at(event.scenePos())
        if hit is not None and event.button() == Qt.LeftButton:
            self.set_unit(hit[1])
            self.unit_clicked.emit(hit[1])

    def _moved(self, scene_pos: QPointF) -> None:
        hit = self._at(scene_pos)
        if hit is None:
            self.hovered.emit("")
            return
        t, u = hit
        name = QUANTITIES.get(self.quantity, (self.quantity,))[0]
        reads = glyph(self.labels[t]) if t < len(self.labels) else "?"
        self.hovered.emit(f"step {t} reads \u201c{reads}\u201d \u00b7 unit {u} \u00b7 {name} = "
                          f"{self.values[t, u]:+.3f}  (click to follow unit {u})")

    def refresh_theme(self) -> None:
        pal = QApplication.palette()
        base, text, mid = pal.color(pal.ColorRole.Base), pal.color(pal.ColorRole.Text), \
            pal.color(pal.ColorRole.Mid)
        self.setBackground(base)
        for plot in (self.surprise, self.reading, self.heat, self.grad, self.bar):
            for side in ("left", "bottom", "right"):
                axis = plot.getAxis(side)
                axis.setPen(pg.mkPen(mid))
                axis.setTextPen(pg.mkPen(text))
        for plot in (self.surprise, self.reading, self.heat, self.grad):
            plot.titleLabel.setAttr("color", text.name())
            plot.titleLabel.setText(plot.titleLabel.text)
        self.grad_mean.setPen(pg.mkPen(QColor(MEAN_COLOR), width=2))
        self.grad_last.setPen(pg.mkPen(QColor(LAST_COLOR), width=1.5, style=Qt.DashLine))
        self._grad_title()
        pen = QPen(QColor("#111111") if base.lightness() > 128 else QColor("#ffffff"), 0)
        pen.setCosmetic(True)
        pen.setWidthF(1.5)
        self.marker.setPen(pen)


    def _grad_title(self) -> None:
        text = QApplication.palette().color(QApplication.palette().ColorRole.Text).name()
        if self.one_loss:  # a classifier's or forecaster's one loss, at the end
            words = (f"<span style='color:{MEAN_COLOR}'>\u2014 of the loss at the sequence's "
                     "end</span> (how far back the error reaches)")
        else:
            words = (f"<span style='color:{MEAN_COLOR}'>\u2014 of the mean loss over the "
                     f"text</span>, <span style='color:{LAST_COLOR}'>- - of the last "
                     "character's loss alone</span> (how far back the error reaches)")
        self.grad.setTitle(f"Gradient reaching h\u209c (log scale): {words}", size="8pt",
                           color=text)


def _opaque(color: QColor) -> QColor:
    """A surprise colour drawn as a bar: full opacity, so light values stay visible."""
    c = QColor(color)
    if c.alpha() < 40:
        return QColor("#d9d9d9")
    c.setAlpha(255)
    return c
