"""A classifier on its test split: the confusion matrix as a heatmap (rows: the true class,
columns: the predicted one; the colour is the share of the row, the number the count) with the
class names on both axes, and each class's accuracy as a bar beside its row. The numbers are
``rnn-designer evaluate``'s (`designer.training.trained.evaluate`). pyqtgraph and numpy are imported
when the first result is drawn."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QToolTip, QVBoxLayout, QWidget

from designer.ui.sequences.peer_text import peer_html

ACCENT = "#2f7de1"
PROMPT = ("Press Evaluate to score the run on its test split: its confusion matrix and each "
          "class's accuracy.")
COUNTS_UP_TO = 24      # classes whose counts are written in the cells (more: hover for them)
NAMES_UP_TO = 40       # classes named on every tick (more: every other, every third...)


def most_confused(report: dict) -> tuple[str, str, int] | None:
    """The (true, predicted, count) off the diagonal with the highest count, or ``None``."""
    best = None
    for i, row in enumerate(report["confusion"]):
        for j, count in enumerate(row):
            if i != j and count and (best is None or count > best[2]):
                best = (report["classes"][i], report["classes"][j], int(count))
    return best


class ConfusionChart(QWidget):
    """The confusion page of the Generate panel."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.report: dict | None = None
        self.canvas = None  # a pyqtgraph GraphicsLayoutWidget, made for the first result
        self.headline = QLabel(PROMPT)
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.RichText)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(6, 6, 6, 6)
        self._lay.addWidget(self.headline)
        self._lay.addStretch(1)

    def clear(self) -> None:
        """Back to the prompt (another run was picked)."""
        self.report = None
        self.headline.setText(PROMPT)
        if self.canvas is not None:
            self.heat.clear()
            self.bars.clear()

    def show_result(self, report: dict) -> None:
        """Draw ``evaluate``'s report of a classifier."""
        self.report = report
        worst = most_confused(report)
        confused = (f" \u00b7 most confused: {worst[0]} taken for {worst[1]} "
                    f"({worst[2]} time{'s' if worst[2] != 1 else ''})") if worst else ""
        from designer.training.run.final import words
        seen = words(report.get("trained_on") or {})
        model = f"the model {seen}" if seen else \
            f"checkpoint at step {report['checkpoint_step']:,}"
        self.headline.setText(
            f"<b>Test accuracy {report['accuracy']:.2%}</b> on {report['n']:,} sequences "
            f"({model}){confused}" + peer_html(report.get("peer"), "classify"))
        self._draw()

    # --------------------------------------------------------------------- drawing --
    def _ensure_canvas(self) -> None:
        if self.canvas is not None:
            return
        import pyqtgraph as pg
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setMinimumHeight(200)
        self._lay.takeAt(self._lay.count() - 1)  # the stretch kept the headline up
        self._lay.addWidget(self.canvas, 1)
        self.heat = self.canvas.addPlot(row=0, col=0)
        self.bars = self.canvas.addPlot(row=0, col=1)
        self.canvas.ci.layout.setColumnStretchFactor(0, 4)
        self.canvas.ci.layout.setColumnStretchFactor(1, 1)
        for plot in (self.heat, self.bars):
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.getViewBox().invertY(True)
        self.heat.getViewBox().setAspectLocked(False)
        self.bars.setYLink(self.heat)
        self.bars.getAxis("left").setStyle(showValues=False)
        for plot in (self.heat, self.bars):  # names at the ends are drawn too
            plot.getAxis("bottom").setStyle(hideOverlappingLabels=False)
        self.bars.getAxis("left").setWidth(4)
        self.heat.scene().sigMouseMoved.connect(self._hover)
        self._theme()

    def _draw(self) -> None:
        import numpy as np
        import pyqtgraph as pg
        self._ensure_canvas()
        report = self.report
        classes = report["classes"]
        k = len(classes)
        counts = np.asarray(report["confusion"], dtype=np.float64)
        totals = counts.sum(1, keepdims=True)
        share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        pal = QApplication.palette()
        base, text = pal.color(QPalette.Base), pal.color(QPalette.Text)
        self.heat.clear()
        self.bars.clear()
        image = pg.ImageItem(share, axisOrder="row-major")
        image.setLookupTable(_ramp(base, QColor(ACCENT)))
        image.setLevels((0.0, 1.0))
        image.setRect(0, 0, k, k)
        self.heat.addItem(image)
        if k <= COUNTS_UP_TO:
            font = QFont()
            font.setPointSizeF(9 if k <= 12 else 7)
            for i in range(k):
                for j in range(k):
                    if not counts[i, j] and i != j:
                        continue
                    dark = share[i, j] > 0.55
                    label = pg.TextItem(f"{int(counts[i, j]):,}", anchor=(0.5, 0.5),
                                        color=QColor("white") if dark else text)
                    label.setFont(font)
                    label.setPos(j + 0.5, i + 0.5)
                    self.heat.addItem(label)
        self._set_ticks()
        self.heat.setLabel("bottom", "predicted class", **{"font-size": "8pt"})
        self.heat.setLabel("left", "true class", **{"font-size": "8pt"})
        self.heat.setRange(xRange=(0, k), yRange=(0, k), padding=0)
        accuracy = np.array([np.nan if a is None else a for a in report["per_class_accuracy"]])
        rows = np.arange(k) + 0.5
        known = ~np.isnan(accuracy)
        bars = pg.BarGraphItem(x0=np.zeros(int(known.sum())), y=rows[known], height=0.7,
                               width=accuracy[known], brush=pg.mkBrush(ACCENT),
                               pen=pg.mkPen(None))
        self.bars.addItem(bars)
        if k <= COUNTS_UP_TO:
            for y, a in zip(rows, accuracy):
                label = pg.TextItem("\u2013" if np.isnan(a) else f"{a:.0%}",
                                    anchor=(1.05, 0.5) if a > 0.5 else (-0.05, 0.5),
                                    color=QColor("white") if a > 0.5 else text)
                label.setPos(0.0 if np.isnan(a) else a, y)
                self.bars.addItem(label)
        self.bars.setXRange(0, 1.12, padding=0)
        self.bars.getAxis("bottom").setTicks([[(0, "0"), (0.5, "50%"), (1, "100%")]])
        self.bars.setLabel("bottom", "class accuracy", **{"font-size": "8pt"})

    def _set_ticks(self) -> None:
        """Class names on both axes; along x, every n-th one when they do not all fit."""
        classes = [str(c) for c in self.report["classes"]]
        k = len(classes)
        ticks = [(i + 0.5, c) for i, c in enumerate(classes)]
        metrics = self.fontMetrics()
        widest = max(metrics.horizontalAdvance(c) for c in classes) + 8
        room = max(1.0, self.canvas.width() * 0.75 / k)
        across = max(1, -(-widest // int(room)))
        down = max(1, -(-k // NAMES_UP_TO))
        self.heat.getAxis("bottom").setTicks([ticks[::across]])
        self.heat.getAxis("left").setTicks([ticks[::down]])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.report is not None and self.canvas is not None:
            self._set_ticks()

    def _hover(self, pos) -> None:
        """The cell under the pointer, in words."""
        report = self.report
        if report is None or not self.heat.sceneBoundingRect().contains(pos):
            return
        point: QPointF = self.heat.getViewBox().mapSceneToView(pos)
        k = len(report["classes"])
        i, j = int(point.y()), int(point.x())
        if not (0 <= i < k and 0 <= j < k) or point.x() < 0 or point.y() < 0:
            QToolTip.hideText()
            return
        row = report["confusion"][i]
        total = sum(row)
        share = f" ({row[j] / total:.0%} of them)" if total else ""
        true, said = report["classes"][i], report["classes"][j]
        what = "right" if i == j else f"taken for {said}"
        QToolTip.showText(self.canvas.mapToGlobal(self.canvas.mapFromScene(pos)),
                          f"{row[j]:,} of the {total:,} test sequences of class {true} "
                          f"{what}{share}", self.canvas)

    def refresh_theme(self) -> None:
        if self.canvas is not None:
            self._theme()
            if self.report is not None:
                self._draw()

    def _theme(self) -> None:
        import pyqtgraph as pg
        pal = QApplication.palette()
        self.canvas.setBackground(pal.color(QPalette.Base))
        for plot in (self.heat, self.bars):
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
                axis.setTextPen(pg.mkPen(pal.color(QPalette.Text)))


def _ramp(low: QColor, high: QColor):
    """A 256-entry lookup table from ``low`` to ``high``."""
    import numpy as np
    t = np.linspace(0.0, 1.0, 256)[:, None]
    a = np.array([low.red(), low.green(), low.blue()], dtype=np.float64)
    b = np.array([high.red(), high.green(), high.blue()], dtype=np.float64)
    return (a + (b - a) * t).astype(np.uint8)
