"""The smoke step in the window: after each edit (debounced), the net runs a tiny real batch
forward and backward in a worker thread (``designer.training.run.smoke``).

Only plain data crosses threads: the project snapshot (``Project.to_dict()``) goes in, the
result (``SmokeResult.to_dict()``) comes out. A change made while a step runs queues one more
step after it; results of steps overtaken by later edits are dropped. Nothing runs while a
training run is under way (``hold``), so the step never takes a core from training.
"""
from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from designer.ui.runs.worker import Job, failure

log = logging.getLogger("designer.ui")

EVENTS = ("layer_added", "layer_removed", "layer_renamed", "link_added", "link_removed",
          "param_changed", "dims_changed")
DEBOUNCE_MS = 400  # after an edit: a burst of edits runs one step
OPENING_MS = 1500  # after a net is opened: the window is painted and settled first


class SmokeWorker(QObject):
    """Runs one smoke step on a snapshot; lives in its own thread."""

    done = Signal(object)
    finished = Signal()

    def __init__(self, snapshot: dict, path: str | None, pinned: dict, serial: int) -> None:
        super().__init__()
        self.snapshot, self.path, self.pinned, self.serial = snapshot, path, pinned, serial

    @Slot()
    def run(self) -> None:
        try:
            from pathlib import Path

            from designer.graph import project as P
            from designer.training.run.smoke import smoke_step
            folder = Path(self.path).parent if self.path else None
            project = P.from_dict(self.snapshot, file=self.path, project_dir=folder)
            project.path = Path(self.path) if self.path else None
            if self.pinned:
                project.graph.pin_dims(self.pinned)
            result = smoke_step(project).to_dict()
        except Exception as e:  # noqa: BLE001 - a bug in the step itself: report, never raise
            info = failure(e, foreseen=False)
            result = {"status": "failed", "message": info["message"], "layer": None,
                      "details": info["details"], "seconds": 0.0}
        result["serial"] = self.serial
        self.done.emit(result)
        self.finished.emit()


class SmokeChecker(QObject):
    """Keeps a smoke result for the window's current net.

    Signals
    -------
    changed(object)
        The result (a dict: status, message, layer, details, seconds) or ``None`` while a
        step is due or running.
    """

    changed = Signal(object)

    def __init__(self, doc, parent: QObject | None = None, enabled: bool = True) -> None:
        super().__init__(parent)
        self.doc, self.graph = doc, None
        self.enabled = enabled
        self.result: dict | None = None
        self.job: Job | None = None
        self._serial = 0
        self._again = False
        self._held = False
        self._closing = False
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
        doc.graph_replaced.connect(self._bind)
        self._bind(doc.graph)
        from PySide6.QtWidgets import QApplication
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ----------------------------------------------------------------------- control --
    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        if self.enabled:
            self.schedule()
        else:
            self._timer.stop()
            self._serial += 1
            self._publish(None)

    def hold(self, held: bool) -> None:
        """Hold the steps back (a run is training); on release, one runs if one is due."""
        self._held = held
        if not held and (self._again or self.result is None):
            self._again = False
            self.schedule()

    def schedule(self, delay_ms: int = DEBOUNCE_MS) -> None:
        """The net changed: forget the old result and run a step once edits pause."""
        if not self.enabled or self._closing:
            return
        self._serial += 1
        self._publish(None)
        self._timer.start(max(delay_ms, self._timer.remainingTime()))

    def shutdown(self) -> None:
        """Stop scheduling and wait for a step under way (the window is closing)."""
        self._closing = True
        self._timer.stop()
        if self.job is not None and self.job.running:
            from PySide6.QtCore import QEventLoop
            loop = QEventLoop()
            self.job.done.connect(loop.quit)
            if self.job.running:
                loop.exec(QEventLoop.ExcludeUserInputEvents)

    def wait(self, timeout_ms: int = 60000) -> dict | None:
        """Block (processing events) until the due step has reported; for tests and scripts."""
        from PySide6.QtCore import QDeadlineTimer, QEventLoop
        from PySide6.QtWidgets import QApplication
        deadline = QDeadlineTimer(timeout_ms)
        while (self.result is None or self._timer.isActive() or self.job is not None) \
                and self.enabled and not deadline.hasExpired():
            QApplication.processEvents(QEventLoop.AllEvents, 50)
        return self.result

    # --------------------------------------------------------------------- internals --
    def _bind(self, graph) -> None:
        if self.graph is not None:
            for name in EVENTS:
                getattr(self.graph, name).disconnect(self.schedule_on_event)
        self.graph = graph
        for name in EVENTS:
            getattr(graph, name).connect(self.schedule_on_event)
        self.schedule(OPENING_MS)

    def schedule_on_event(self, *args) -> None:
        self.schedule()

    def _start(self) -> None:
        if self._closing or not self.enabled:
            return
        if self.job is not None or self._held:
            self._again = True
            return
        g = self.doc.graph
        errors = g.errors()
        if errors:  # the graph says it all; nothing to run
            self._publish({"status": "skipped", "message": "the net has errors to mend first",
                           "layer": None, "details": "", "seconds": 0.0})
            return
        project = self.doc.project
        worker = SmokeWorker(project.to_dict(), str(project.path) if project.path else None,
                             dict(g._pinned), self._serial)
        worker.done.connect(self._reported)
        self.job = Job(worker, "smoke", self)
        self.job.done.connect(self._ended)
        self.job.start()

    @Slot(object)
    def _reported(self, result: dict) -> None:
        if result.pop("serial") == self._serial and not self._closing:
            if result["status"] == "failed" and result["details"]:
                log.info("smoke step: %s\n%s", result["message"], result["details"])
            self._publish(result)

    @Slot()
    def _ended(self) -> None:
        self.job = None
        if self._again and not self._held and not self._closing:
            self._again = False
            self._start()

    def _publish(self, result: dict | None) -> None:
        if result != self.result:
            self.result = result
            self.changed.emit(result)
