"""The worker threads: training and generation, each a QObject moved to its own QThread.

The training worker only wraps the headless loop (``designer.training.run.loop.train``): it turns
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
    resume
        Continue the run folder ``out`` from its last checkpoint (engines may differ: the
        weights are converted, as ``train --resume`` does).
    corpus
        Train on this file instead of the data layer's (a continued run's own data).
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
    corpus: str | None = None  # the data file, when the project's own cannot be found
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

    def __init__(self, request: TrainRequest, token, tap=None) -> None:
        super().__init__()
        self.request = request
        self.token = token
        self.tap = tap  # a WeightsTap: the Inspect view asks for weights copies through it

    @Slot()
    def run(self) -> None:
        try:
            self._train()
        except Exception as e:  # noqa: BLE001 - everything is reported, nothing escapes
            self.failed.emit(failure(e, written_for_users(e)))
        finally:
            self.finished.emit()

    def _train(self) -> None:
        from designer.graph import project as P
        from designer.training.run.loop import RunOptions, train
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
                          engine=r.engine, extra_meta=dict(r.extra), corpus=r.corpus,
                          download_progress=downloading, tap=self.tap)
        for rec in train(project, opts, self.token):
            self.record.emit(rec)


def written_for_users(error: BaseException) -> bool:
    """Errors whose message is written for users (no traceback needed)."""
    names = {"TrainingError", "DataError", "CheckpointError", "GenerateError", "ProjectError",
             "RunError"}
    return type(error).__name__ in names


class GenerateWorker(QObject):
    """Text, audio or MNIST predictions from a run's checkpoint; lives in its own thread.

    Parameters
    ----------
    job
        ``{"kind": "text" | "audio" | "mnist", "run_dir", "which", "device", ...}`` with the
        settings of that kind (see the Generate panel). Text and audio run on ``device``
        (``auto``: the device the run trained on, when this machine has it).

    Signals
    -------
    text(list)
        New characters of each stream, a few at a time (at most every ``interval`` seconds).
    scored(list)
        Text runs, sent just before each ``text``: per stream ``{"surprise": [...], "top":
        [...]}``, one entry per character of its piece (how surprised the model was by it,
        in nats, and its top five guesses there).
    progress(int, int)
        Done and total symbols per stream.
    result(dict)
        The finished job, as plain data: the texts, or the samples and WAV paths, or the
        predictions; with how fast it was written and any hint about degenerate output.
    failed(dict), finished()
        As for training.
    """

    text = Signal(object)
    scored = Signal(object)
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
        """Ask the job to end after the current chunk (thread-safe: a plain flag)."""
        self._stop = True

    @Slot()
    def run(self) -> None:
        try:
            kind = self.job["kind"]
            self.result.emit(self._mnist() if kind == "mnist" else self._write())
        except Exception as e:  # noqa: BLE001
            self.failed.emit(failure(e, written_for_users(e)))
        finally:
            self.finished.emit()

    def _write(self) -> dict:
        from designer.training.trained.generate import generate, load_trained, write_wavs
        j = self.job
        model = load_trained(j["run_dir"], j.get("which", "best"), j.get("device", "auto"))
        streams = j.get("streams", 1)
        if model.kind == "audio":
            n = max(1, int(round(j["seconds"] * model.codec["sample_rate"])))
        else:
            n = j["length"]
        pending = [""] * streams
        surprise: list[list] = [[] for _ in range(streams)]
        top: list[list] = [[] for _ in range(streams)]
        done, last = [0], [time.perf_counter()]

        def flush() -> None:
            self.scored.emit([{"surprise": list(s), "top": list(t)}
                              for s, t in zip(surprise, top)])
            self.text.emit(list(pending))
            pending[:] = [""] * streams
            for lst in (*surprise, *top):
                lst.clear()

        def on_scored(per_stream: list) -> None:
            for k, (_, nats, guesses) in enumerate(per_stream):
                surprise[k].extend(nats)
                top[k].extend(guesses)

        def on_chunk(pieces: list) -> None:
            done[0] += len(pieces[0])
            now = time.perf_counter()
            if model.kind == "text":
                for k, piece in enumerate(pieces):
                    pending[k] += piece
            if now - last[0] >= self.interval or done[0] == n:
                last[0] = now
                if model.kind == "text":
                    flush()
                self.progress.emit(done[0], n)

        out = generate(model, n, j.get("prime", ""), j.get("temperature"), j.get("top_k"),
                       j.get("seed"), streams, on_chunk, stop=lambda: self._stop,
                       on_scored=on_scored if model.kind == "text" else None)
        if any(pending):
            flush()
        result = {"kind": out.kind, "stopped": out.stopped, "hint": out.hint,
                  "device": out.device, "graph_note": out.graph_note, "seconds": out.seconds,
                  "per_second": out.per_second, "streams": out.streams,
                  "temperature": out.temperature}
        if out.kind == "text":
            return {**result, "texts": out.texts, "text": out.texts[0]}
        if out.stopped:  # a cut-off recording is not kept: the last one stays on show
            return result
        paths = write_wavs(out, j["path"])
        return {**result, "samples": out.samples, "paths": [str(p) for p in paths],
                "rate": out.rate, "reference_rms": model.codec.get("rms")}

    def _mnist(self) -> dict:
        from designer.training.trained.predict import predict_digits
        j = self.job
        p = predict_digits(j["run_dir"], j.get("count", 12), j.get("which", "best"),
                           seed=j.get("seed"))
        return {"kind": "mnist", "images": p.images, "predicted": p.predicted,
                "truth": p.truth, "accuracy": p.accuracy, "evaluated": p.evaluated}


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
