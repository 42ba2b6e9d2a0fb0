"""Live training charts (pyqtgraph): loss, accuracy (classifiers) or RMSE in the target's units
(forecasters), learning rate and tokens/s of every run.

Each run's curves are created once, when the run is added. New records only mark the charts
stale (:meth:`ChartsPanel.schedule`); within 100 ms a timer hands the curves the runs' numpy
buffers (`designer.ui.runs.series.Series`) with ``setData``, only for runs whose data changed, so
the charts redraw at up to 10 Hz and the GUI thread sleeps while nothing new arrives. Their own
drawing is paced (`pacing.RedrawPacer`: 5 % of a core, never more than about a second behind),
and a run that stops (finished, paused, failed) is drawn to its last point at once. Plots clip
to the view and downsample by peaks, so a redraw costs about the same at 100,000 points as at
1,000. Several runs overlay on one chart, each in its colour, against the step or wall-clock
seconds, for comparing engines; the runs table under the plots is their legend.
"""
from __future__ import annotations

import math
import time

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QGraphicsItem, QGridLayout,
                               QHBoxLayout, QLabel, QSlider, QSplitter, QToolButton,
                               QVBoxLayout, QWidget)

from designer.ui.runs.run import Run
from designer.ui.runs.run_list import RunList

from designer.ui.look.fitting import FlowLayout

from designer.ui.charts import plot_grid
from designer.ui.charts.chart_range import RangeKeeper
from designer.ui.charts.curves import PLOT_OF, CompactAxis, RunCurves
from designer.ui.charts.pacing import MAX_LAG_S, PlotView, RedrawPacer
from designer.ui.charts.runs_table import RunsTable

REFRESH_MS = 100             # 10 Hz at most
LIVE = ("starting", "running", "stopping")  # a run in these states may still send points
BITS = 1 / math.log(2)


class ChartsPanel(QWidget):
    """The charts dock: controls, four plots and the runs table.

    Parameters
    ----------
    runs
        The session's runs; the panel follows it (a curve set per run).

    Signals
    -------
    add_folder_requested()
        "Add run folder..." was pressed (the controller asks for the folder).
    """

    add_folder_requested = Signal()

    def __init__(self, runs: RunList, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True)
        self.runs = runs
        self.pacer = RedrawPacer()  # charged by refresh() and by every paint of the plots
        self.curves: dict[int, RunCurves] = {}
        self._settings_version = 0
        self._drawn_settings = -1

        # controls
        self.x_axis = QComboBox()
        self.x_axis.addItem("Step", "step")
        self.x_axis.addItem("Wall-clock time", "time")
        self.x_axis.setToolTip("Plot against the training step, or against seconds since the "
                               "run started (to compare engines' speed)")
        self.log_x = QCheckBox("Log x")
        self.smoothing = QSlider(Qt.Horizontal)
        self.smoothing.setRange(0, 99)
        self.smoothing.setValue(0)
        self.smoothing.setToolTip("Exponential moving average of the training curves "
                                  "(0: raw values)")
        self.smoothing_label = QLabel("0.00")
        self.smoothing_label.setMinimumWidth(30)
        self.units = QComboBox()
        self.units.addItem("nats", "nats")
        self.units.addItem("bits", "bits")
        self.units.setToolTip("Loss in nats (natural log) or bits per symbol (per character "
                              "for text); a forecaster's loss is a squared error, in neither")
        self.units_label = QLabel("Loss in")
        self.fit_button = QToolButton()
        self.fit_button.setText("Fit")
        self.fit_button.setToolTip("Show all the data again after zooming or panning (the "
                                   "charts zoom with the mouse wheel and pan by dragging)")
        self.fit_button.clicked.connect(self.fit)
        self.add_button = QToolButton()
        self.add_button.setText("Add run folder\u2026")
        self.add_button.setToolTip("Overlay a previous run (a folder with metrics.jsonl)")
        self.add_button.clicked.connect(self.add_folder_requested)
        self.bar = QWidget()
        bar = FlowLayout(self.bar)  # wraps onto a second row in a narrow dock
        bar.setContentsMargins(6, 4, 6, 0)
        smoothing = QWidget()
        pair = QHBoxLayout(smoothing)
        pair.setContentsMargins(0, 0, 0, 0)
        for widget in (QLabel("Smoothing"), self.smoothing, self.smoothing_label):
            pair.addWidget(widget)
        self.smoothing.setFixedWidth(90)
        for widget in (QLabel("X axis"), self.x_axis, self.log_x, smoothing, self.units_label,
                       self.units):
            bar.addWidget(widget)
        bar.add_stretch()
        bar.addWidget(self.fit_button)
        bar.addWidget(self.add_button)

        # plots
        (self.loss_widget, self.accuracy_widget, self.lr_widget, self.tokens_widget,
         self.rmse_widget) = (self._plot(t) for t in ("Loss", "Accuracy", "Learning rate",
                                                      "Tokens/s", "RMSE"))
        self.loss, self.accuracy, self.lr, self.tokens, self.rmse = (
            w.getPlotItem() for w in (self.loss_widget, self.accuracy_widget, self.lr_widget,
                                      self.tokens_widget, self.rmse_widget))
        self.grid = grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(2)
        self.plots = plots = QWidget()
        plots.setLayout(grid)
        plots.installEventFilter(self)  # short or tall: the plots are arranged again
        self._shown = (False, False)    # accuracy, RMSE
        self._tall: bool | None = None
        self._arrange(accuracy=False)

        self.table = RunsTable(runs)
        self.table.setMinimumHeight(48)
        split = QSplitter(Qt.Vertical)
        split.addWidget(plots)
        split.addWidget(self.table)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.installEventFilter(self)  # the table keeps its share of a new height...
        self._table_dragged = False     # ...until the user drags the handle
        split.splitterMoved.connect(lambda *_: setattr(self, "_table_dragged", True))
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.bar)
        lay.addWidget(split, 1)

        self._stale_since: float | None = None  # when data came that is not drawn yet
        self.skipped = self.redraws = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self._tick)
        self.ranges = {name: RangeKeeper(plot) for name, plot in
                       (("loss", self.loss), ("accuracy", self.accuracy), ("lr", self.lr),
                        ("tokens", self.tokens), ("rmse", self.rmse))}
        for signal in (self.x_axis.currentIndexChanged, self.units.currentIndexChanged):
            signal.connect(self._settings_changed)
        self.log_x.toggled.connect(self._settings_changed)
        self.smoothing.valueChanged.connect(self._smoothing_changed)
        runs.added.connect(self._added)
        runs.removed.connect(self._removed)
        runs.changed.connect(self._changed)
        for run in runs:
            self._added(run)
        self._update_labels()
        self.refresh_theme()


    def _plot(self, title: str) -> pg.PlotWidget:
        widget = PlotView(self.pacer, parent=self, axisItems={"left": CompactAxis("left")})
        widget.setMinimumSize(100, 60)
        plot = widget.getPlotItem()
        plot.setTitle(title, size="9pt")
        plot.showGrid(x=True, y=True, alpha=0.25)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.hideButtons()
        plot.setMenuEnabled(False)
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setStyle(tickFont=_small_font())
            # the axes (and the grid they draw) are painted once per range, then copied:
            # a new point repaints the curves, not every tick label
            axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        return widget

    def _arrange(self, accuracy: bool, rmse: bool = False) -> None:
        """The plots in their grid for the room they have (`plot_grid`)."""
        self._shown = (accuracy, rmse)
        below = [w for w, shown in ((self.accuracy_widget, accuracy), (self.rmse_widget, rmse))
                 if shown]
        self._tall = self._fits_stacked()
        plot_grid.place(self.grid, [self.loss_widget] + below,
                        [self.lr_widget, self.tokens_widget], self._tall)
        self.accuracy_widget.setVisible(accuracy)
        self.rmse_widget.setVisible(rmse)
        if hasattr(self, "units"):
            self._update_labels()

    def _fits_stacked(self) -> bool:
        return plot_grid.fits_stacked(self.plots.height(), sum(self._shown),
                                      self.grid.spacing())

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() != event.Type.Resize:
            return False
        if watched is self.plots and self._fits_stacked() != self._tall:
            self._arrange(*self._shown)
        elif watched is self.splitter and not self._table_dragged:
            h = self.splitter.height() - self.splitter.handleWidth()
            table = plot_grid.table_height(h)
            self.splitter.setSizes([h - table, table])
        return False

    def plot_items(self) -> list:
        return [self.loss, self.accuracy, self.lr, self.tokens, self.rmse]

    # --------------------------------------------------------------------- settings --
    @property
    def x_key(self) -> str:
        return self.x_axis.currentData()

    @property
    def smoothing_weight(self) -> float:
        return self.smoothing.value() / 100

    @property
    def scale(self) -> float:
        return BITS if self.units.currentData() == "bits" else 1.0

    def _smoothing_changed(self, value: int) -> None:
        self.smoothing_label.setText(f"{value / 100:.2f}")
        self._settings_changed()

    def _settings_changed(self, *_) -> None:
        self._settings_version += 1
        for plot in self.plot_items():
            plot.setLogMode(x=self.log_x.isChecked(), y=False)
        self._update_labels()
        self.refresh()

    def _update_labels(self) -> None:
        unit = self.units.currentData()
        series = bool(self.curves) and all(c.run.kind == "series" for c in self.curves.values())
        if series:
            unit = "squared error / 2, z-scored"  # EuclideanLoss on the z-scored target
        # nats or bits mean nothing for a squared error: the choice shows for cross-entropies
        self.units_label.setVisible(not series)
        self.units.setVisible(not series)
        # the runs table under the plots is their legend (each run's colour and name): none
        # lies over the curves; a narrow loss plot keeps to its unit in the title
        how = "line: training, dots: validation"
        self.loss.setTitle(f"Loss ({unit})" + (f" \u2014 {how}" if self._tall else ""),
                           size="9pt")
        self.loss_widget.setToolTip(f"Loss ({unit}), every run in its colour (the table "
                                    f"below names them): {how}")
        targets = {", ".join(c.run.targets) for c in self.curves.values() if c.run.targets}
        what = targets.pop() if len(targets) == 1 else "each run's target"
        self.rmse.setTitle(f"RMSE of {what}, in its units \u2014 line: training, dots: "
                           "validation", size="9pt")
        x = "step" if self.x_key == "step" else "seconds"
        for plot in self.plot_items():
            plot.setLabel("bottom", x, **{"font-size": "8pt"})

    # ------------------------------------------------------------------------- runs --
    def _added(self, run: Run) -> None:
        self.curves[id(run)] = RunCurves(self, run, self.runs.color(run))
        self._update_labels()
        self._changed(run)

    def _removed(self, run: Run) -> None:
        curves = self.curves.pop(id(run), None)
        if curves is not None:
            curves.remove(self)
            self._update_labels()

    def _changed(self, run: Run) -> None:
        curves = self.curves.get(id(run))
        if curves is None:
            return
        curves.set_visible(run.visible)
        curves.drawn_version = -1
        if run.state in LIVE:
            self.schedule()
        else:  # the run sends no more points (or none for now): show it to its last one
            self._draw()

    # ---------------------------------------------------------------------- drawing --
    def schedule(self) -> None:
        """New data: redraw within 100 ms (many records in that time make one redraw)."""
        if self._stale_since is None:
            self._stale_since = time.perf_counter()
        if not self.timer.isActive():
            self.timer.start(REFRESH_MS)

    def _tick(self) -> None:
        """Redraw what changed, unless the charts' own drawing has lately used more than its
        share of a core (`RedrawPacer`); then wait for the credit, but never so long that
        data waits more than ``MAX_LAG_S`` to be drawn."""
        waited = 0.0 if self._stale_since is None else time.perf_counter() - self._stale_since
        wait = min(self.pacer.wait_s(), MAX_LAG_S - waited)
        if wait > 0:
            self.skipped += 1
            self.timer.start(int(1e3 * wait) + 1)
            return
        self._draw()

    def _draw(self) -> None:
        self.timer.stop()
        if self.refresh():
            self.redraws += 1

    def refresh(self) -> bool:
        """Redraw the runs whose data (or the chart settings) changed since the last time;
        True when something was redrawn. Its CPU time is charged to the pacer."""
        start = time.thread_time()
        self._stale_since = None
        try:
            return self._refresh()
        finally:
            self.pacer.charge(time.thread_time() - start)

    def _refresh(self) -> bool:
        fresh = self._drawn_settings != self._settings_version
        self._drawn_settings = self._settings_version
        any_accuracy, any_rmse, changed = False, False, fresh
        for curves in self.curves.values():
            run = curves.run
            any_accuracy |= run.has("accuracy") or run.has("val_accuracy")
            any_rmse |= run.has("rmse") or run.has("val_rmse")
            version = run.version
            if fresh or version != curves.drawn_version:
                curves.drawn_version = version
                curves.update(self.x_key, self.smoothing_weight,
                              1.0 if run.kind == "series" else self.scale)
                self.table.update_run(run)
                changed = True
        if any_accuracy == self.accuracy_widget.isHidden() or \
                any_rmse == self.rmse_widget.isHidden():
            self._arrange(any_accuracy, any_rmse)
            self._update_labels()
        if changed:
            self._keep_ranges(fit=fresh)
        return changed

    def _keep_ranges(self, fit: bool = False) -> None:
        spans: dict[str, list] = {name: [] for name in self.ranges}
        for curves in self.curves.values():
            if not curves.run.visible:
                continue
            for item, b in curves.bounds.items():
                if b is not None:
                    spans[PLOT_OF[item]].append(b)
        for name, keeper in self.ranges.items():
            b = spans[name]
            if not b:
                continue
            bounds = ((min(v[0] for v in b), max(v[1] for v in b)),
                      (min(v[2] for v in b), max(v[3] for v in b)))
            if fit:
                keeper.bounds = bounds
                keeper.fit()
            else:
                keeper.update(bounds)

    def fit(self) -> None:
        """Follow the data again on every plot (the Fit button)."""
        for keeper in self.ranges.values():
            keeper.fit()

    def refresh_theme(self) -> None:
        pal = QApplication.palette()
        base, text = pal.color(QPalette.Base), pal.color(QPalette.Text)
        for plot in self.plot_items():
            plot.getViewWidget().setBackground(base)
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
                axis.setTextPen(pg.mkPen(text))
            plot.titleLabel.setAttr("color", text.name())
            plot.titleLabel.setText(plot.titleLabel.text)


def _small_font():
    from PySide6.QtGui import QFont
    f = QFont(QApplication.font())
    f.setPointSizeF(max(7.0, f.pointSizeF() * 0.85))
    return f

