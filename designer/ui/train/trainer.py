"""Click-to-train: Train / Pause / Resume / Stop, the worker thread, and where records go.

Pressing Train takes a snapshot of the project (``Project.to_dict()``), so the run cannot race
the edits made while it trains, and starts a `TrainWorker` in its own thread. Records come
back through a queued signal; each is appended to its `Run` (cheap), logged when worth
logging, and shown in the status bar. The charts redraw from their own timer, never per record.
What the window shows of each state (the actions, the banner, the status bar) is in ``states``.

Closing the window while a run trains stops it at the next step boundary; the loop writes a
checkpoint and the window closes once the thread has ended.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QProgressDialog

from designer.training.run.record_format import RecordFormatter
from designer.ui.runs.run import Run
from designer.ui.runs.run_list import RunList, new_run_dir, runs_root
from designer.ui.runs.worker import Job, TrainRequest, TrainWorker

from designer.ui.train import states
from designer.ui.train.states import IDLE, PAUSED, RUNNING, STARTING, STOPPING
from designer.ui.train.target import TrainTarget

log = logging.getLogger("designer.ui")


class TrainingController(QObject):
    """Trains the window's project in a worker thread and routes what the run reports.

    Parameters
    ----------
    window
        The `MainWindow`; its actions ``train``, ``pause``, ``resume`` and ``stop`` call here.

    Signals
    -------
    state_changed(str)
        ``idle``, ``starting``, ``running``, ``paused`` or ``stopping``.
    run_ended(Run)
        A run's thread has ended (finished, stopped or failed).
    """

    state_changed = Signal(str)
    run_ended = Signal(object)

    def __init__(self, window) -> None:
        super().__init__(window)
        from designer.ui.output.window import OutputPanel
        from designer.ui.train.panels import ChartsHost, DeviceHost
        self.w = window
        self.runs = RunList(self)
        from designer.ui.resume import ask_and_continue
        self.runs.continue_requested.connect(lambda run: ask_and_continue(self, run.run_dir))
        self.state = IDLE
        self.job: Job | None = None
        self.token = None
        self.tap = None
        self.run: Run | None = None
        self._closing = False
        self._started_at = ""
        self.last_error: str | None = None

        self.target = TrainTarget(window, self)
        self.device_picker = self.target.device_picker
        self.engine_picker = self.target.engine_picker
        self.device_picker.picked.connect(self._device_picked)
        self.output = OutputPanel(self.runs)
        self.charts = ChartsHost(self)
        self.device = DeviceHost(self)
        self.progress, self.status = states.status_widgets()

        QTimer.singleShot(400, self, self.target.list_gpus)  # after the first paint
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # --------------------------------------------------------------------- set-up --
    def install(self) -> None:
        """Put the pickers, docks and status widgets into the window (called once)."""
        w = self.w
        self.target.install(w.train_toolbar)
        w.output_dock.setWidget(self.output)
        w.charts_dock.setWidget(self.charts)  # built when a run starts or a folder is added
        w.device_dock.setWidget(self.device)
        w.device_dock.visibilityChanged.connect(self.device.shown)
        w.statusBar().insertPermanentWidget(0, self.status)
        w.statusBar().insertPermanentWidget(1, self.progress)
        self._update_actions()

    def _device_picked(self, choice) -> None:
        if self.state == IDLE:
            self.device.watch(choice.monitor)

    # ----------------------------------------------------------------------- actions --
    def train(self, steps: int | None = None, device: str | None = None,
              engine: str | None = None, processes: int | None = None) -> Run | None:
        """Start a run on a snapshot of the project (what the Train button does).

        Parameters
        ----------
        steps, device, engine
            Overrides for this run (``None``: the project's ``max_steps``, the device picker,
            the engine picker).
        processes
            Train data-parallel on this many processes (``None``: what the device picker
            says, several for "All GPUs"); they run as child processes.

        Returns
        -------
        Run or None
            The new run, or ``None`` when one is already training or the net is not valid.
        """
        if self.job is not None or self._closing:
            self.w.show_message("A run is already training; stop it before starting another")
            return None
        project = self.w.doc.project
        refusal = self.refusal()
        if refusal:
            self.w.show_message(refusal)
            self.w.problems_dock.raise_()
            self.output.log_error(refusal)
            return None
        self.target.list_gpus()
        snapshot = project.to_dict()
        stem = project.path.stem if project.path else project.name
        out = new_run_dir(stem, runs_root())
        run = Run(self.runs.next_number(), project.name, snapshot)
        run.run_dir = out
        picked = self.device_picker.choice()
        if processes is None:
            processes = picked.processes if device is None else 1
        request = TrainRequest(snapshot, str(project.path) if project.path else None, str(out),
                               steps, device or picked.device,
                               engine if engine is not None else self.engine_picker.engine(),
                               processes=processes)
        return self.launch(run, request, new=True)

    def open_run(self) -> Run | None:
        """File > Open Run...: pick a run folder and continue it (`designer.ui.resume`)."""
        from designer.ui.resume import open_run
        return open_run(self)

    def launch(self, run: Run, request: TrainRequest, new: bool = False) -> Run:
        """Start the worker for ``run`` with ``request``; ``new``: list the run too (else it is
        listed already: a run continued). A request for several processes runs them as a
        child process group, followed through rank 0's records (its weights stay there: the
        Inspect view reads its checkpoints)."""
        self.tap = None
        if request.processes > 1:
            from designer.ui.train.processes import ProcessControl, ProcessTrainWorker
            self.token = ProcessControl()
            worker = ProcessTrainWorker(request, self.token)
        else:
            from designer.training.run.control import StopToken, WeightsTap  # threading, no torch
            self.token = StopToken()
            self.tap = WeightsTap()
            worker = TrainWorker(request, self.token, self.tap)
        worker.record.connect(self._record)
        worker.failed.connect(self._failed)
        worker.download.connect(self._download)
        self.job = Job(worker, "training", self)
        self.job.done.connect(self._ended)
        self.run = run
        self._started_at = time.strftime("%H:%M:%S")
        if self.w.inspect_view is not None and self.tap is not None:  # before it is listed:
            self.w.inspect_view.follow_run(run, self.tap)  # the view then follows it
        if new:
            self.runs.add(run)
        self.output.begin_run(run, request)
        gpus = request.processes > 1 and (request.device or "").startswith("cuda")
        self.device.watch_training(request.device, [f"cuda:{i}" for i in range(
            request.processes)] if gpus else None)  # several: every GPU of the run
        self.show_docks()
        self._set_state(STARTING)
        self.job.start()
        return run

    def pause(self) -> None:
        if self.token is not None and self.state in (STARTING, RUNNING):
            self.token.pause()
            self._set_state(PAUSED)

    def resume(self) -> None:
        if self.token is not None and self.state == PAUSED:
            self.token.resume()
            self._set_state(RUNNING)

    def stop(self) -> None:
        if self.token is not None and self.state in (STARTING, RUNNING, PAUSED):
            self.token.stop()
            self._set_state(STOPPING)

    @property
    def busy(self) -> bool:
        return self.job is not None

    def show_docks(self, charts_only: bool = False) -> None:
        """Bring the charts, the output and the device panel forward: the Train workspace,
        from Design; in Inspect or Experiments only the charts, below the view (and only the
        charts with ``charts_only``: a run folder added)."""
        w = self.w
        if w.workspace in ("design", "train"):
            w.switch_workspace("train", view=False)
            for dock in () if charts_only else (w.output_dock, w.device_dock):
                dock.show()
                dock.raise_()
        w.show_dock_in_workspace(w.charts_dock)
        self.charts.ensure()
        if not charts_only:
            self.device.ensure()

    # ---------------------------------------------------------------- the records --
    @Slot(object)
    def _record(self, rec: dict) -> None:
        """One record of the run: kept in its `Run`, acted on (`_react`), and shown as the
        shared `RecordFormatter` tells it: the status line, a passing message, the log."""
        run = self.run
        if run is None:
            return
        run.add(rec)
        kind = rec["kind"]
        if self.w.inspect_view is not None and kind in ("start", "weights", "val", "done"):
            self.w.inspect_view.run_record(run, rec)
        react = self._reactions.get(kind)
        if react is not None:
            react(run, rec)
        told = RecordFormatter(run.number, run.kind, run.steps).read(rec)
        if told.status is not None:
            self.status.setText(told.status)
        if told.message is not None:
            self.w.statusBar().showMessage(told.message, 20000)
        self.output.add_record(run, rec)

    @property
    def _reactions(self) -> dict:
        """What the window does on a record, by kind (beyond showing it)."""
        return {"start": self._started, "train": self._trained, "paused": self._changed,
                "resumed": self._changed, "val": self._changed, "done": self._changed,
                "error": self._stopped_on_error, "warning": self._warned, "final": self._final}

    def _started(self, run: Run, rec: dict) -> None:
        if self.state == STARTING:
            self._set_state(RUNNING)
        self.runs.changed.emit(run)
        self.device.watch_training(rec["device"], rec.get("devices"))
        self.progress.setRange(0, max(1, rec["steps"]))
        self.progress.setValue(rec["step"])
        self._update_banner()

    def _trained(self, run: Run, rec: dict) -> None:
        self.charts.schedule()
        self.progress.setValue(min(rec["step"], self.progress.maximum()))

    def _final(self, run: Run, rec: dict) -> None:
        """The final model, trained again on every training sequence: its own progress."""
        if rec["stage"] == "start":
            self.progress.setRange(0, max(1, rec["steps"]))
        self.progress.setValue(min(rec.get("step", 0), self.progress.maximum()))
        if rec["stage"] != "progress":
            self.runs.changed.emit(run)

    def _changed(self, run: Run, rec: dict) -> None:
        self.runs.changed.emit(run)  # the table's state and best loss; the charts redraw

    def _stopped_on_error(self, run: Run, rec: dict) -> None:
        self.last_error = rec["message"]
        self.w.notify("Training stopped", rec["message"])
        log.error("training stopped: %s", rec["message"])

    def _warned(self, run: Run, rec: dict) -> None:
        self.charts.schedule()
        self.runs.changed.emit(run)
        log.warning("training: %s", rec["message"])

    @Slot(int, int)
    def _download(self, done: int, total: int) -> None:
        """A named corpus is being fetched before the run starts (the first time only)."""
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        self.status.setText(f"Downloading the corpus: {done / 2**20:,.1f}"
                            + (f" of {total / 2**20:,.1f}" if total > 0 else "") + " MiB\u2026")

    @Slot(object)
    def _failed(self, info: dict) -> None:
        self.last_error = info["message"]
        run = self.run
        if run is not None:
            run.state = "failed"
            self.runs.changed.emit(run)
        self.output.log_error(f"Training failed: {info['message']}", info.get("details", ""))
        self.w.statusBar().showMessage(f"Training failed: {info['message']}", 30000)
        log.error("training failed: %s%s", info["message"],
                  "\n" + info["details"] if info.get("details") else "")
        if not self._closing:
            self.w.notify("Training failed", states.sentence(info["message"]),
                          info.get("details", ""))

    @Slot()
    def _ended(self) -> None:
        run, self.run = self.run, None
        if self.job is not None:
            self.job.deleteLater()  # its thread has ended
        self.job, self.token, self.tap = None, None, None
        self._set_state(IDLE)
        self.progress.hide()
        self.status.hide()
        if run is not None:
            if run.state in (STARTING, RUNNING, PAUSED, STOPPING):
                run.state = "ended"
            self.runs.changed.emit(run)
            if run.state in ("finished", "stopped", "early_stop", "time_limit"):
                self.w.statusBar().showMessage(
                    f"Run #{run.number} {run.state.replace('_', ' ')} at step {run.step:,}; "
                    f"checkpoints in \u2026/{'/'.join(Path(run.run_dir).parts[-3:])}", 20000)
            self.output.generate.select_run(run)
            self.run_ended.emit(run)

    # ------------------------------------------------------------------------ state --
    def _set_state(self, state: str) -> None:
        self.state = state
        self._update_actions()
        self._update_banner()
        states.show_in_status_bar(self.progress, self.status, state)
        self.state_changed.emit(state)

    def refusal(self) -> str:
        """Why the net cannot train now (`states.refusal`), or ''."""
        return states.refusal(self.w)

    def refresh_train_action(self, *args) -> None:
        self._update_actions()

    def _update_actions(self) -> None:
        states.update_actions(self.w, self.state, self._closing)

    def _update_banner(self) -> None:
        self.w.set_banner(states.banner_text(self.run, self.state, self._started_at))

    def refresh_theme(self) -> None:
        self.charts.refresh_theme()
        self.device.refresh_theme()
        self.output.generate.audio.refresh_theme()
        self.output.generate.sequences.refresh_theme()
        if self.w.inspect_view is not None:
            self.w.inspect_view.refresh_theme()
        self._update_banner()

    # ---------------------------------------------------------------------- closing --
    def shutdown(self) -> None:
        """Stop the run (it saves a checkpoint) and any generation, and wait for their
        threads; called when the window closes and when the application quits."""
        if self._closing and self.job is None:
            self._shut_others()
            return
        self._closing = True
        if self.job is not None:
            job = self.job
            self.token.stop()
            self._set_state(STOPPING)
            dialog = QProgressDialog("Stopping the training run and saving a checkpoint\u2026",
                                     "", 0, 0, self.w)
            dialog.setCancelButton(None)
            dialog.setWindowTitle("Stopping")
            dialog.setMinimumDuration(0)
            dialog.setWindowModality(Qt.WindowModal)
            dialog.show()
            loop = QEventLoop()
            job.done.connect(loop.quit)
            kill = getattr(self.token, "kill", None)  # child processes: the last resort
            if kill is not None:
                from designer.ui.train.processes import KILL_AFTER_S
                QTimer.singleShot(KILL_AFTER_S * 1000, loop, kill)
            if job.running:
                loop.exec(QEventLoop.ExcludeUserInputEvents)
            dialog.close()
            dialog.deleteLater()
        self._shut_others()

    def _shut_others(self) -> None:
        """Stop generating, the device's sampling and the Inspect view's worker."""
        self.output.generate.shutdown()
        self.device.shutdown()
        if self.w.inspect_view is not None:
            self.w.inspect_view.shutdown()
