"""The worker threads: training and generation, each a QObject moved to its own QThread.

The training worker only wraps the headless loop (``designer.training.loop.train``): it turns
the project snapshot (a plain dict) back into a project, runs the generator, and passes each
plain record to the GUI thread through a queued signal. Stop and pause go through the loop's
own `StopToken`, which the loop checks every step, so they never wait on this thread's event
loop. torch is imported here, in the worker thread, when a run starts.

Errors never leave the thread as exceptions: a ``TrainingError`` (bad data, out of memory...)
or anything unexpected becomes a ``failed`` signal with plain data (a one-sentence message,
and a traceback for the log when the error was not one the trainer foresaw).
"""
from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot

log = logging.getLogger("designer.ui")


@dataclass
class TrainRequest:
    """What the Train button asks for: plain data only.

    Attributes
    ----------
    project
        The snapshot of the project, ``Project.to_dict()`` when Train was pressed.
    path
        The project file (relative data paths are found next to it), or ``None``.
    out
        The run folder to create.
    steps, device, engine
        Overrides of the project's ``max_steps``, device (``auto``, ``cpu``, ``cuda:N``) and
        every recurrent layer's engine (``cudnn`` or ``caffe``); ``None`` keeps the project's.
    processes
        1, or how many processes train data-parallel (in child processes, one per GPU).
    """

    project: dict
    path: str | None
    out: str
    steps: int | None = None
    device: str | None = None
    engine: str | None = None
    resume: bool = False
    extra: dict = field(default_factory=dict)
    processes: int = 1


def failure(error: BaseException, foreseen: bool) -> dict:
    """The plain record a failed job sends: its message, and details for the log."""
    message = str(error) or type(error).__name__
    if not foreseen:
        message = f"an unexpected {type(error).__name__} stopped the job: {message}"
    details = "" if foreseen else "".join(traceback.format_exception(error))
    return {"message": message, "details": details, "code": getattr(error, "code", 1)}


class TrainWorker(QObject):
    """Runs one training run; lives in its own thread.

    Signals
    -------
    record(dict)
        Each record the loop yields, in order.
    download(int, int)
        Bytes fetched and expected (0: unknown) while a named corpus downloads.
    failed(dict)
        ``{"message", "details", "code"}`` when the run could not go on.
    finished()
        Always last, whether the run finished, stopped or failed.
    """

    record = Signal(object)
    download = Signal(int, int)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, request: TrainRequest, token) -> None:
        super().__init__()
        self.request = request
        self.token = token

    @Slot()
    def run(self) -> None:
        try:
            self._train()
        except Exception as e:  # noqa: BLE001 - everything is reported, nothing escapes
            self.failed.emit(failure(e, _foreseen(e)))
        finally:
            self.finished.emit()

    def _train(self) -> None:
        from designer.graph import project as P
        from designer.training.loop import RunOptions, train
        r = self.request
        folder = Path(r.path).parent if r.path else None
        project = P.from_dict(r.project, file=r.path, project_dir=folder)
        project.path = Path(r.path) if r.path else None
        last = [0.0]

        def downloading(done: int, total: int) -> None:  # at most 10 signals a second
            now = time.perf_counter()
            if now - last[0] >= 0.1 or done == total:
                last[0] = now
                self.download.emit(int(done), int(total or 0))

        opts = RunOptions(out=r.out, resume=r.resume, steps=r.steps, device=r.device,
                          engine=r.engine, extra_meta=dict(r.extra),
                          download_progress=downloading)
        for rec in train(project, opts, self.token):
            self.record.emit(rec)


def _foreseen(error: BaseException) -> bool:
    """Errors whose message is written for users (no traceback needed)."""
    names = {"TrainingError", "DataError", "CheckpointError", "GenerateError", "ProjectError",
             "RunError"}
    return type(error).__name__ in names


class GenerateWorker(QObject):
    """Text, audio or MNIST predictions from a run's checkpoint; lives in its own thread.

    Parameters
    ----------
    job
        ``{"kind": "text" | "audio" | "mnist", "run_dir", "which", ...}`` with the settings
        of that kind (see the Generate panel).

    Signals
    -------
    text(str)
        New characters, a few at a time (at most every ``interval`` seconds).
    progress(int, int)
        Done and total, for audio.
    result(dict)
        The finished job: the text, the WAV path and samples, or the predictions.
    failed(dict), finished()
        As for training.
    """

    text = Signal(str)
    progress = Signal(int, int)
    result = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, job: dict, interval: float = 0.03) -> None:
        super().__init__()
        self.job = job
        self.interval = interval
        self._stop = False

    def stop(self) -> None:
        """Ask the job to end after the current symbol (thread-safe: a plain flag)."""
        self._stop = True

    @Slot()
    def run(self) -> None:
        try:
            self.result.emit(getattr(self, "_" + self.job["kind"])())
        except Exception as e:  # noqa: BLE001
            self.failed.emit(failure(e, _foreseen(e)))
        finally:
            self.finished.emit()

    def _text(self) -> dict:
        from designer.training.generate import generate_text, load_trained
        j = self.job
        model = load_trained(j["run_dir"], j.get("which", "best"), "cpu")
        pending: list[str] = []
        last = [time.perf_counter()]

        def on_text(ch: str) -> None:
            pending.append(ch)
            now = time.perf_counter()
            if now - last[0] >= self.interval:
                self.text.emit("".join(pending))
                pending.clear()
                last[0] = now

        out = generate_text(model, j.get("prime", ""), j["length"], j["temperature"],
                            j["top_k"], j.get("seed"), on_text=on_text,
                            stop=lambda: self._stop)
        if pending:
            self.text.emit("".join(pending))
        return {"kind": "text", "text": out, "stopped": self._stop}

    def _audio(self) -> dict:
        from designer.training.generate import generate_audio, load_trained
        j = self.job
        model = load_trained(j["run_dir"], j.get("which", "best"), "cpu")

        def progress(done: int, total: int) -> None:
            if self._stop:  # generate_audio has no stop of its own: leave through here
                raise _Stopped
            self.progress.emit(done, total)

        try:
            path, samples = generate_audio(model, j["seconds"], j["path"], j["temperature"],
                                           j["top_k"], j.get("seed"), progress=progress)
        except _Stopped:
            return {"kind": "audio", "stopped": True}
        rate = model.meta["data"]["codec"]["sample_rate"]
        return {"kind": "audio", "path": str(path), "samples": samples, "rate": rate,
                "stopped": False}

    def _mnist(self) -> dict:
        from designer.training.predict import predict_digits
        j = self.job
        p = predict_digits(j["run_dir"], j.get("count", 12), j.get("which", "best"),
                           seed=j.get("seed"))
        return {"kind": "mnist", "images": p.images, "predicted": p.predicted,
                "truth": p.truth, "accuracy": p.accuracy, "evaluated": p.evaluated}


class _Stopped(Exception):
    """Raised inside generation's progress callback to end it early."""


class Job(QObject):
    """A worker and its thread, started together and cleaned up together.

    The thread quits when the worker finishes; the job keeps both (and so the thread is never
    destroyed while it runs) until its owner lets it go after ``done``. ``done`` fires in the GUI thread once the thread has ended.
    """

    done = Signal()

    def __init__(self, worker: QObject, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName(name)
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.run)
        worker.finished.connect(self.thread.quit)
        self.thread.finished.connect(self._ended)
        self.running = False

    def start(self) -> None:
        self.running = True
        self.thread.start()

    def wait(self, ms: int | None = None) -> bool:
        """Block until the thread ends (tests, and the last resort when closing)."""
        return self.thread.wait() if ms is None else self.thread.wait(ms)

    @Slot()
    def _ended(self) -> None:
        self.running = False
        self.done.emit()
