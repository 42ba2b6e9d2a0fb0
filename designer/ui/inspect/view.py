"""The Inspect view: what a run's recurrent layers do, step by step, on a piece of text (or a
test sequence of a classifier, a test window of a forecaster).

On the left, on one time axis with the characters along x: the surprise of every character,
a heatmap of one quantity (a gate, the cell state c or the hidden state h) of every unit of
one level, and the gradient reaching h_t (how far back the error reaches). On the right: the
unit picked, drawn over the text (Karpathy-style), the search for units that follow a pattern
typed over the text, and the share of saturated gates over training. For a sequence run the
surprise gives way to what the net makes of the sequence: the class it leans to after each
step, or the forecast after the window. A run that cannot be inspected leaves the view empty,
with one sentence saying why: nothing of the run shown before stays.

The view shows a finished run's checkpoint, or follows the run training now: every K steps
it asks the loop for a copy of the weights (`designer.training.run.control.WeightsTap`) and the
inspection runs in the `InspectService` thread on that copy, never in the training step;
the next copy is asked for only once the last one is drawn and the worker has rested for
``REST`` times as long as it worked, so it takes at most about 1/(REST+1) of one core.
"""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from designer.ui.runs.run import has_checkpoint

from designer.ui.inspect.captions import answer, cannot_inspect, level_name
from designer.ui.inspect.charts import SaturationChart
from designer.ui.inspect.controls import InspectControls
from designer.ui.inspect.heatmap import QUANTITIES, StepCharts
from designer.ui.inspect.unit_panel import UnitPanel
from designer.ui.inspect.worker import InspectService

REST = 30            # the worker rests this many times as long as its last live job took
DEFAULT_EVERY = 50   # steps between live updates


class InspectView(QWidget):
    """See the module's docstring.

    Parameters
    ----------
    runs
        The session's `RunList` (the run picker follows it).

    Signals
    -------
    inspected(dict)
        A result was drawn (tests and ``gui --inspect --screenshot`` wait for it).
    """

    inspected = Signal(object)

    def __init__(self, runs, parent=None) -> None:
        super().__init__(parent)
        self.runs = runs
        self.service = InspectService(self)
        self.service.finished.connect(self._result)
        self.service.failed.connect(self._failed)
        self.result: dict | None = None
        self.live_run = None          # the run training now
        self.tap = None               # its WeightsTap
        self._live_job: int | None = None
        self._rest_until = 0.0

        self.controls = c = InspectControls(DEFAULT_EVERY)
        self.run_combo, self.checkpoint, self.follow, self.every = (
            c.run_combo, c.checkpoint, c.follow, c.every)
        self.level, self.quantity, self.order = c.level, c.quantity, c.order
        self.text, self.go = c.text, c.go
        self.status = QLabel()
        self.status.setTextFormat(Qt.PlainText)
        self.hover = QLabel(" ")
        self.hover.setTextFormat(Qt.PlainText)

        self.charts = StepCharts()
        self.unit_panel = UnitPanel()
        self.saturation = SaturationChart()
        right = QSplitter(Qt.Vertical)
        right.addWidget(self.unit_panel)
        right.addWidget(self.saturation)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.charts)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.split = split
        self._sized = False

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 2)
        lay.setSpacing(3)
        lay.addWidget(self.controls)
        lay.addWidget(self.status)
        lay.addWidget(self.hover)
        lay.addWidget(split, 1)

        self.go.clicked.connect(self.refresh)
        self.text.returnPressed.connect(self.refresh)
        self.run_combo.currentIndexChanged.connect(self._run_picked)
        self.checkpoint.currentIndexChanged.connect(self.refresh)
        self.follow.toggled.connect(self._follow_toggled)
        self.level.currentIndexChanged.connect(self._level_picked)
        self.quantity.currentIndexChanged.connect(self._show)
        self.order.currentIndexChanged.connect(self._show_map)
        self.unit_panel.searched.connect(self._searched)
        self.charts.unit_clicked.connect(self.unit_panel.show_unit)
        self.charts.hovered.connect(lambda text: self.hover.setText(text or " "))
        self.unit_panel.unit_picked.connect(self.charts.set_unit)
        runs.added.connect(self._run_added)
        runs.removed.connect(self._runs_changed)
        runs.changed.connect(self._runs_changed)
        self._runs_changed()
        if self.current_run() is None:
            self.refresh()  # says what to do

    # ------------------------------------------------------------------------ runs --
    def current_run(self):
        return self.run_combo.currentData()

    def select_run(self, run) -> None:
        for i in range(self.run_combo.count()):
            if self.run_combo.itemData(i) is run:
                self.run_combo.setCurrentIndex(i)
                return

    def _run_added(self, run) -> None:
        self._runs_changed()
        if run is self.live_run and self.follow.isChecked() and self.current_run() is not run:
            self.select_run(run)

    def _runs_changed(self, *_) -> None:
        current = self.current_run()
        self.run_combo.blockSignals(True)
        self.run_combo.clear()
        for run in self.runs:
            if run.run_dir is not None:
                self.run_combo.addItem(run.short_label, run)
        self.run_combo.blockSignals(False)
        if current is not None and any(r is current for r in self.runs):
            self.select_run(current)
        elif self.run_combo.count():
            self.run_combo.setCurrentIndex(self.run_combo.count() - 1)
            self._run_picked()
        self._draw_saturation()

    def _run_picked(self, *_) -> None:
        run = self.current_run()
        if self.result is not None and (run is None or self.result.get("run") != run.number):
            self.clear()  # never the last run's pictures under this run's name
        self.result = None
        self.controls.set_kind(None if run is None else run.kind)
        self.refresh()

    def clear(self, why: str = "") -> None:
        """Show nothing of any run (and ``why``, when given, in the status line)."""
        self.result = None
        self.charts.show_nothing()
        self.unit_panel.clear()
        for combo in (self.level, self.quantity):
            combo.blockSignals(True)
            combo.clear()
            combo.blockSignals(False)
        if why:
            self.status.setText(why)

    def _is_live(self, run) -> bool:
        return (run is not None and run is self.live_run and self.follow.isChecked()
                and run.state in ("starting", "running", "paused"))

    # -------------------------------------------------------------------- asking --
    def refresh(self, *_) -> None:
        """Inspect the current run again (its checkpoint, or its next live weights)."""
        run = self.current_run()
        if self.service.closed:
            return
        if run is None:
            self.status.setText("Train a run (F5) or add a run folder to the charts: its "
                                "recurrent layers are shown here step by step.")
            return
        if self._is_live(run):
            self.status.setText(f"Following run #{run.number} live: the weights are "
                                "inspected every few steps\u2026")
            self._arm(soon=True)
            return
        if not has_checkpoint(run.run_dir):  # said at once, without loading torch
            self.clear(f"Run #{run.number} has no checkpoint to inspect: {run.run_dir} holds "
                       "its metrics only.")
            return
        self.service.submit({"what": "checkpoint", "run": run.number,
                             "run_dir": str(run.run_dir),
                             "which": self.checkpoint.currentData(),
                             "text": self.text.text() or None})
        self.status.setText(f"Inspecting run #{run.number}\u2026")

    # ---------------------------------------------------------------------- live --
    def follow_run(self, run, tap) -> None:
        """A run is about to start training (the controller calls this before listing it):
        follow it once it is listed, the first weights after its first step."""
        self.live_run, self.tap = run, tap
        self._rest_until = 0.0
        if self.follow.isChecked():
            self.select_run(run)  # when it is listed already (the view opened mid-run)

    def run_record(self, run, rec: dict) -> None:
        """A record of the live run (the controller passes on the ones that matter here)."""
        if run is not self.live_run:
            return
        kind = rec["kind"]
        if kind == "start" and self._is_live(self.current_run()):
            self._arm(soon=True)
        elif kind == "weights" and self._is_live(self.current_run()) and self.isVisible():
            self._live_job = self.service.submit({
                "what": "weights", "key": run.number, "run": run.number,
                "weights": rec["weights"],
                "step": rec["step"], "probe": run.probe, "text": self.text.text() or None,
                "meta": {"project": run.project, "engines": run.engines,
                         "data": {"kind": run.kind, "vocab": run.vocab,
                                  "num_classes": run.num_classes}}})
        elif kind == "val" and run is self.current_run():
            self._draw_saturation()
        elif kind == "done":
            self.live_run, self.tap = None, None
            if run is self.current_run():
                QTimer.singleShot(0, self.refresh)  # the run's last checkpoint

    def _arm(self, soon: bool = False) -> None:
        """Ask the live run for its weights after the next K steps (after the rest)."""
        if self.tap is None or not self.isVisible() or self.service.busy or self.service.closed:
            return
        wait = self._rest_until - time.monotonic()
        if wait > 0:
            QTimer.singleShot(int(wait * 1e3) + 1, self._arm)
            return
        run = self.live_run
        k = self.every.value()
        at = run.step + 1 if soon else (run.step // k + 1) * k
        self.tap.request(at)

    def _follow_toggled(self, on: bool) -> None:
        if not on and self.tap is not None:
            self.tap.cancel()
        self.refresh()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized:  # two thirds for the step charts: the characters need room
            self._sized = True
            width = max(self.split.width(), self.width())
            self.split.setSizes([int(0.68 * width), width - int(0.68 * width)])
        if self._is_live(self.current_run()):
            self._arm(soon=True)

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        if self.tap is not None:
            self.tap.cancel()  # nobody looks: the loop copies nothing

    # -------------------------------------------------------------------- results --
    def _result(self, result: dict) -> None:
        if result["what"] not in ("weights", "checkpoint"):
            return
        if result["what"] == "weights":
            self._rest_until = time.monotonic() + REST * result["seconds"]
            if self.live_run is not None:
                if self.live_run.number == result.get("run"):
                    self.live_run.add_saturation(result["inspection"].step,
                                                 result["gate_saturation"])
                QTimer.singleShot(0, self._arm)
        run = self.current_run()
        if run is None or result.get("run") != run.number:
            return  # asked for a run no longer shown
        self.result = result
        self._draw()
        self.inspected.emit(result)

    def _failed(self, info: dict) -> None:
        run = self.current_run()
        if info["what"] in ("weights", "checkpoint") and run is not None and \
                info.get("run") == run.number:
            self.clear(cannot_inspect(run.number, info["message"]))
            self.inspected.emit(info)

    def _draw(self) -> None:
        result = self.result
        seen = result["inspection"]
        probe = seen.probe
        run = self.current_run()
        text = probe.kind == "text"
        self.controls.set_kind(probe.kind)
        # a sequence's steps are numbered along x (a forecaster's times where there is room)
        self.charts.set_steps(probe.labels, text or probe.kind in ("classes", "series"),
                              seen.surprise, seen.grad_norm,
                              seen.grad_norm_last)
        self.charts.set_reading(seen)
        keep = self.level.currentData()
        self.level.blockSignals(True)
        self.level.clear()
        for lv in seen.layers:
            self.level.addItem(level_name(lv, seen), lv.name)
        index = self.level.findData(keep)
        self.level.setCurrentIndex(index if index >= 0 else len(seen.layers) - 1)
        self.level.blockSignals(False)
        loss = f" \u00b7 mean surprise {seen.loss:.3f} nats" if seen.surprise is not None \
            else ""
        if seen.prediction:
            loss = (f" \u00b7 the digit is {probe.target}; the net says "
                    f"{seen.prediction[0][0]} ({seen.prediction[0][1]:.0%})")
        loss = answer(seen) or loss
        who = f"run #{run.number}" if run is not None else "the run"
        self.status.setText(f"{who} \u00b7 {result['title']} \u00b7 {probe.steps} steps of "
                            f"{probe.origin}{loss} \u00b7 inspected in {result['seconds']:.2f} s")
        self._level_picked()

    def _level_picked(self, *_) -> None:
        if self.result is None:
            return
        seen = self.result["inspection"]
        lv = seen.level(self.level.currentData())
        keep = self.quantity.currentData() or "c"
        self.quantity.blockSignals(True)
        self.quantity.clear()
        for q in lv.quantities():
            self.quantity.addItem(QUANTITIES[q][0], q)
        index = self.quantity.findData(keep)
        self.quantity.setCurrentIndex(index if index >= 0 else self.quantity.count() - 1)
        self.quantity.blockSignals(False)
        self._show()
        self._draw_saturation()

    def _show(self, *_) -> None:
        if self.result is None:
            return
        seen = self.result["inspection"]
        lv = seen.level(self.level.currentData())
        q = self.quantity.currentData()
        values = lv.quantities()[q]
        where = level_name(lv, seen)
        self.unit_panel.set_data(seen.probe.labels, values, q, where,
                                 searchable=seen.probe.kind == "text")
        self._show_map()

    def _searched(self) -> None:
        if self.order.currentData() == "pattern" or self.unit_panel.correlation is not None:
            if self.unit_panel.correlation is not None:
                self.order.blockSignals(True)
                self.order.setCurrentIndex(self.order.findData("pattern"))
                self.order.blockSignals(False)
            self._show_map()

    def _show_map(self, *_) -> None:
        """The heatmap of the level and quantity picked, its rows in the order picked."""
        if self.result is None:
            return
        seen = self.result["inspection"]
        lv = seen.level(self.level.currentData())
        q = self.quantity.currentData()
        values = lv.quantities()[q]
        key, order, text = self.order.currentData(), None, ""
        if key == "active":
            order, text = np.argsort(-values.std(0), kind="stable"), "most active at the top"
        elif key == "pattern" and self.unit_panel.correlation is not None:
            r = self.unit_panel.correlation
            order = np.argsort(-r, kind="stable")
            text = "following the pattern at the top, against it at the bottom"
        self.charts.set_map(values, q, f"{QUANTITIES[q][0]} of every unit of "
                                       f"{level_name(lv, seen)}, at every step", order, text)

    def _draw_saturation(self) -> None:
        run = self.current_run()
        level = self.level.currentData()
        if run is not None and level:
            name = self.level.currentText().split(" (")[0]
            self.saturation.set_history(run.saturation, level, name)

    def shutdown(self) -> None:
        if self.tap is not None:
            self.tap.cancel()
        self.service.shutdown()

    def refresh_theme(self) -> None:
        self.charts.refresh_theme()
        self.saturation.refresh_theme()
        if self.result is not None:
            self._draw()
