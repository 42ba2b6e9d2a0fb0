"""A forecasting run on its test split: the history, the truth, the model's forecasts some steps
ahead and the better simple baseline's, with an autoregressive roll-out beyond the horizon, all
in the target's own units, and the ``evaluate`` scores above.

The data comes from `designer.training.trained.rollout.forecast_view` (in a worker). Changing the
target or the steps ahead redraws; clicking the plot, or changing the number of horizons,
asks for a new roll-out (``rollout_requested``). pyqtgraph and numpy are imported when the
first result is drawn, never at start-up.
"""
from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (QApplication, QComboBox, QFormLayout, QLabel, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from designer.ui.sequences.peer_text import peer_html

COLORS = {"history": "#8d96a0", "model": "#2f7de1", "baseline": "#e8590c",
          "rollout": "#9c36b5", "test": (47, 125, 225, 22)}
SOLID, DASHED = "\u2501\u2501", "\u2505\u2505"   # the legend's line samples
PROMPT = ("Press Evaluate to forecast the run's test split, next to the truth and the simple "
          "baselines, and to roll its forecasts out beyond the horizon.")
BASELINE_LABELS = {"seasonal_naive": "seasonal naive", "persistence": "persistence"}


def baseline_label(name: str, period: int = 0) -> str:
    """``seasonal naive (52 steps)`` or ``persistence``."""
    label = BASELINE_LABELS.get(name, name.replace("_", " "))
    return f"{label} ({period} steps)" if name == "seasonal_naive" and period else label


def number(value) -> str:
    return "\u2013" if value is None or value != value else f"{value:.4g}"


class ForecastChart(QWidget):
    """The forecast page of the Generate panel.

    Signals
    -------
    rollout_requested(dict)
        ``{"origin": row, "rounds": horizons}``: roll out again from there.
    """

    rollout_requested = Signal(dict)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.view: dict | None = None
        self.plot_widget = None    # a pyqtgraph PlotWidget, made for the first result
        self.target = QComboBox()
        self.target.setToolTip("The forecast column drawn")
        self.target.currentIndexChanged.connect(self.redraw)
        self.lead = QSpinBox()
        self.lead.setRange(1, 1)
        self.lead.setSuffix(" steps ahead")
        self.lead.setToolTip("Draw the forecasts made this many steps before the time they "
                             "forecast (1: the next step)")
        self.lead.valueChanged.connect(self.redraw)
        self.rounds = QSpinBox()
        self.rounds.setRange(0, 200)
        self.rounds.setSuffix(" horizons")
        self.rounds.setToolTip("Roll out this many horizons, each forecast from the forecasts "
                               "before it (0: no roll-out)")
        self._rounds_timer = QTimer(self, singleShot=True, interval=400)
        self._rounds_timer.timeout.connect(self._rounds_changed)
        self.rounds.valueChanged.connect(lambda *_: self._rounds_timer.start())
        self.restart = QPushButton("From Test Start")
        self.restart.setToolTip("Roll out from the start of the test split again")
        self.restart.clicked.connect(self._from_test_start)
        self.headline = QLabel(PROMPT)
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.RichText)
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.RichText)
        self.legend.setWordWrap(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.PlainText)
        # the settings go in the Generate panel's left column, under its own
        self.controls = QWidget()
        self.controls_form = QFormLayout(self.controls)
        self.controls_form.setContentsMargins(0, 0, 0, 0)
        self.controls_form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.controls_form.addRow("Target", self.target)
        self.controls_form.addRow("Draw", self.lead)
        self.controls_form.addRow("Roll out", self.rounds)
        self.controls_form.addRow("", self.restart)
        self.controls.setEnabled(False)
        self.canvas = QWidget()     # holds the plot once there is one
        QVBoxLayout(self.canvas).setContentsMargins(0, 0, 0, 0)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.headline)
        lay.addWidget(self.canvas, 1)
        lay.addWidget(self.legend)
        lay.addWidget(self.note)

    # --------------------------------------------------------------------- results --
    def job(self) -> dict:
        """What the next scoring job asks for: the number of horizons rolled out."""
        return {"rounds": self.rounds.value() if self.view is not None else None}

    def show_result(self, view: dict) -> None:
        """A whole result (scores and roll-out), or a roll-out alone (``report`` absent)."""
        if "report" not in view and self.view is not None:
            self.view["rollout"] = view["rollout"]
        else:
            self.view = view
            self._fill_controls(view)
        self.controls.setEnabled(True)
        self.redraw()

    def clear(self) -> None:
        """Back to the prompt (another run was picked)."""
        self.view = None
        self.headline.setText(PROMPT)
        self.note.clear()
        self.legend.clear()
        self.controls.setEnabled(False)
        if self.plot_widget is not None:
            self.plot_widget.getPlotItem().clear()

    def _fill_controls(self, view: dict) -> None:
        for box in (self.target, self.lead, self.rounds):
            box.blockSignals(True)
        self.target.clear()
        self.target.addItems(view["targets"])
        self.controls_form.setRowVisible(self.target, len(view["targets"]) > 1)
        self.lead.setRange(1, view["horizon"])
        self.lead.setValue(view["horizon"])
        self.lead.setEnabled(view["horizon"] > 1)
        self.rounds.setValue(len(view["rollout"]["values"]) // view["horizon"])
        for box in (self.target, self.lead, self.rounds):
            box.blockSignals(False)

    # ----------------------------------------------------------------- requests --
    def _request(self, origin: int) -> None:
        self.rollout_requested.emit({"origin": int(origin), "rounds": self.rounds.value()})

    def _rounds_changed(self) -> None:
        if self.view is not None and self.rounds.value() != \
                len(self.view["rollout"]["values"]) // self.view["horizon"]:
            self._request(self.view["rollout"]["origin"])

    def _from_test_start(self) -> None:
        if self.view is not None:
            self._request(self.view["splits"]["test"][0] - 1)

    def request_at(self, x: float) -> None:
        """Roll out from the row nearest ``x`` on the time axis (a click on the plot)."""
        if self.view is not None:
            self._request(row_at(self.view["x"], x))

    # ------------------------------------------------------------------- drawing --
    def _ensure_plot(self, is_date: bool) -> None:
        import pyqtgraph as pg
        if self.plot_widget is not None and self._is_date == is_date:
            return
        if self.plot_widget is not None:
            self.plot_widget.setParent(None)
            self.plot_widget.deleteLater()
        axis = pg.DateAxisItem(orientation="bottom") if is_date else \
            pg.AxisItem(orientation="bottom")
        self.plot_widget = pg.PlotWidget(axisItems={"bottom": axis})
        self.plot_widget.setMinimumHeight(160)
        self._is_date = is_date
        self.canvas.layout().addWidget(self.plot_widget)
        plot = self.plot_widget.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setClipToView(True)
        plot.getViewBox().setAutoVisible(y=True)
        plot.scene().sigMouseClicked.connect(self._clicked)
        self._theme_plot()

    def _clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or event.double() or self.view is None:
            return
        box = self.plot_widget.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(event.scenePos()):
            return
        self.request_at(box.mapSceneToView(event.scenePos()).x())

    def redraw(self, *_) -> None:
        """Draw the result for the target and steps ahead picked."""
        if self.view is None:
            return
        import numpy as np
        import pyqtgraph as pg
        v = self.view
        self._ensure_plot(v["x_is_date"])
        plot = self.plot_widget.getPlotItem()
        plot.clear()
        j = max(0, self.target.currentIndex())
        k = self.lead.value()
        x, y = v["x"], v["y"][:, j]
        lo, hi = v["splits"]["test"]
        text = QApplication.palette().color(QPalette.Text)
        region = pg.LinearRegionItem((x[lo], x[hi - 1]), movable=False,
                                     brush=pg.mkBrush(*COLORS["test"]), pen=pg.mkPen(None))
        region.setZValue(-20)
        plot.addItem(region, ignoreBounds=True)
        plot.plot(x[:lo], y[:lo], pen=pg.mkPen(COLORS["history"], width=1.2))
        plot.plot(x[lo - 1:], y[lo - 1:], pen=pg.mkPen(text, width=1.5))
        keys = [("history", COLORS["history"], False), ("truth", text.name(), False)]
        if "pred" in v:
            rows = v["origins"] + k
            name, _ = self._baseline()
            base = v["baselines"][name][:, k - 1, j]
            plot.plot(x[rows], base, pen=pg.mkPen(COLORS["baseline"], width=1.2,
                                                  style=Qt.DashLine))
            plot.plot(x[rows], v["pred"][:, k - 1, j], pen=pg.mkPen(COLORS["model"], width=2))
            keys += [("model", COLORS["model"], False),
                     (BASELINE_LABELS[name], COLORS["baseline"], True)]
        ro = v["rollout"]
        if len(ro["values"]):
            o = ro["origin"]
            rx = np.concatenate([[x[o]], ro["x"]])
            ry = np.concatenate([[y[o]], ro["values"][:, j]])
            color = QColor(COLORS["rollout"])
            plot.plot(rx, ry, pen=pg.mkPen(color, width=2))
            keys.append(("roll-out", COLORS["rollout"], False))
            ends = np.arange(v["horizon"], len(ro["values"]) + 1, v["horizon"])
            plot.plot(ro["x"][ends - 1], ro["values"][ends - 1, j], pen=None, symbol="o",
                      symbolSize=5, symbolBrush=color, symbolPen=pg.mkPen(color))
            start = pg.InfiniteLine(pos=x[o], angle=90, movable=False,
                                    pen=pg.mkPen(color, width=1, style=Qt.DotLine))
            plot.addItem(start, ignoreBounds=True)
        self.legend.setText("&nbsp;&nbsp;".join(
            f'<span style="color:{c}">{DASHED if dashed else SOLID}</span>&nbsp;{n}'
            for n, c, dashed in keys))
        plot.setLabel("left", v["targets"][j], **{"font-size": "8pt"})
        self._set_range(plot)
        self._write(j, k)

    def _baseline(self) -> tuple[str, float | None]:
        """The baseline drawn: the report's, the one with the lower test RMSE."""
        best = self.view["report"]["baseline"]
        return best["name"], best["rmse"]

    def _set_range(self, plot) -> None:
        """The test split and the roll-out, with a little history before them."""
        v = self.view
        x = v["x"]
        lo, hi = v["splits"]["test"]
        back = max(2 * v["period"], (hi - lo) // 4, 3 * v["horizon"], 10)
        start = x[max(0, min(lo, v["rollout"]["origin"]) - back)]
        end = max(x[-1], float(v["rollout"]["x"][-1]) if len(v["rollout"]["x"]) else x[-1])
        plot.setXRange(start, end, padding=0.02)
        plot.enableAutoRange(axis="y")

    def _write(self, j: int, k: int) -> None:
        v = self.view
        target = v["targets"][j]
        ro = v["rollout"]
        if "report" in v:
            report = v["report"]
            scores = report.get("per_target", {}).get(target, report)
            model = scores["rmse"]
            parts = []
            for b in report["baselines"]:
                rmse = b["rmse"] if len(v["targets"]) == 1 else \
                    _rmse_of(v, b["name"], j)
                parts.append(f"{baseline_label(b['name'], b.get('period', 0))} "
                             f"{number(rmse)}")
            _, best = self._baseline()
            ratio = f" \u00b7 <b>{model / best:.2f}\u00d7</b> the better baseline's error" \
                if best and model is not None and len(v["targets"]) == 1 else ""
            peer = report.get("peer")
            if peer and len(v["targets"]) > 1 and "per_target" in peer:  # this target's
                mine = peer["per_target"][target]["rmse"]
                peer = {**peer, "rmse": mine,
                        "ratio": model / mine if mine and model is not None else None}
            self.headline.setText(
                f"<b>Test RMSE {number(model)}</b> {target} over {report['n']:,} forecasts "
                f"of {report['horizon']} step{'s' if report['horizon'] > 1 else ''} "
                f"(checkpoint at step {v['checkpoint_step']:,}) \u00b7 "
                + " \u00b7 ".join(parts) + ratio + peer_html(peer, "forecast"))
        lines = []
        if "lead_rmse" in v:
            name, _ = self._baseline()
            lines.append(f"Drawn: the forecasts {k} step{'s' if k > 1 else ''} ahead, RMSE "
                         f"{number(v['lead_rmse'][k - 1, j])} "
                         f"({baseline_label(name, v['period'])} "
                         f"{number(v['lead_baseline_rmse'][name][k - 1, j])}).")
        if len(ro["values"]):
            r = len(ro["values"]) // v["horizon"]
            rmse = ro["rmse"][j]
            known = f"; RMSE {number(rmse)} where the file has the truth" if rmse is not None \
                else "; past the file's end, where there is no truth to score"
            lines.append(f"Roll-out: {r} horizon{'s' if r != 1 else ''} of {v['horizon']} "
                         f"from {self._when(ro['origin'])}, each forecast from the ones "
                         f"before it{known}. Click the plot to roll out from another time.")
        if ro.get("note"):
            lines.append(ro["note"][:1].upper() + ro["note"][1:] + ".")
        self.note.setText(" ".join(lines))

    def _when(self, row: int) -> str:
        v = self.view
        if v["x_is_date"]:
            return time.strftime("%Y-%m-%d", time.gmtime(float(v["x"][row])))
        return f"row {row + 1:,}"

    def refresh_theme(self) -> None:
        if self.plot_widget is not None:
            self._theme_plot()
            self.redraw()

    def _theme_plot(self) -> None:
        import pyqtgraph as pg
        pal = QApplication.palette()
        plot = self.plot_widget.getPlotItem()
        self.plot_widget.setBackground(pal.color(QPalette.Base))
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
            axis.setTextPen(pg.mkPen(pal.color(QPalette.Text)))


def _rmse_of(view: dict, name: str, j: int) -> float | None:
    """A baseline's test RMSE for target ``j`` (all steps ahead) from the arrays."""
    import numpy as np
    rows = view["origins"][:, None] + np.arange(1, view["horizon"] + 1)[None, :]
    truth = view["y"][rows, j]
    keep = ~view["filled"][rows, j]
    diff = (view["baselines"][name][..., j] - truth)[keep]
    return float(np.sqrt(np.mean(diff ** 2))) if diff.size else None


def row_at(axis, value: float) -> int:
    """The row nearest ``value`` on ``axis`` (past either end: the first or last row)."""
    import numpy as np
    i = int(np.searchsorted(axis, value))
    if i <= 0:
        return 0
    if i >= len(axis):
        return len(axis) - 1
    return i if axis[i] - value < value - axis[i - 1] else i - 1
