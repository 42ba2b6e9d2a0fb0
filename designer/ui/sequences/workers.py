"""The worker threads of New from Data and of the sequence results (each a QObject run by a
`designer.ui.worker.Job`): previewing a file, making the project, scoring a run. Only plain
data crosses threads; torch is imported in the worker, never in the GUI thread."""
from __future__ import annotations

import copy

from PySide6.QtCore import QObject, Signal, Slot

from designer.ui.runs.worker import failure

# errors whose message is written for users: no traceback
FORESEEN = {"PreviewError", "InitError", "DataError", "CheckpointError", "GenerateError",
            "ProjectError"}


def _report(worker, error: Exception) -> None:
    worker.failed.emit(failure(error, type(error).__name__ in FORESEEN))


class PreviewWorker(QObject):
    """Reads a data file's head, then scans the whole file (`designer.training.new_from_data.preview`).

    Signals
    -------
    head(Preview)
        The header and first rows (a copy: the scan goes on filling the worker's own).
    scanned(Preview)
        The whole file's counts.
    progress(int)
        Rows (or sequences) read so far.
    failed(dict), finished()
        As the other workers (``failed`` only when the file cannot be previewed).
    """

    head = Signal(object)
    scanned = Signal(object)
    progress = Signal(int)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self._stop = False

    def stop(self) -> None:
        """Give up at the next check (another file was picked, or the dialog closed)."""
        self._stop = True

    @Slot()
    def run(self) -> None:
        from designer.training.new_from_data.preview import Stopped, read_head, scan
        try:
            look = read_head(self.path)
            self.head.emit(copy.deepcopy(look))
            if not self._stop:
                self.scanned.emit(scan(look, lambda: self._stop, self.progress.emit))
        except Stopped:
            pass
        except Exception as e:  # noqa: BLE001 - everything is reported, nothing escapes
            _report(self, e)
        finally:
            self.finished.emit()


class InitWorker(QObject):
    """Makes the project as ``rnn-designer init`` does (`designer.training.new_from_data.init`).

    Parameters
    ----------
    job
        ``init_project``'s arguments: ``data``, ``task``, ``target``, ``out``, ``horizon``,
        ``replace``.

    Signals
    -------
    result(dict)
        ``{"path": str, "lines": [str]}``: the project written and what was chosen.
    failed(dict), finished()
    """

    result = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, job: dict) -> None:
        super().__init__()
        self.job = job

    @Slot()
    def run(self) -> None:
        try:
            from designer.training.new_from_data.init import init_project
            path, lines = init_project(**self.job)
            self.result.emit({"path": str(path), "lines": list(lines)})
        except Exception as e:  # noqa: BLE001
            _report(self, e)
        finally:
            self.finished.emit()


class ScoreWorker(QObject):
    """Scores a forecasting or classification run on its test split.

    Parameters
    ----------
    job
        ``{"kind": "series" | "classes", "run_dir", "which", "device"}``; forecasts also
        ``rounds``, ``origin`` and ``scores`` (see `designer.training.trained.rollout.forecast_view`).

    Signals
    -------
    result(dict)
        Forecasts: ``forecast_view``'s arrays; classes: ``{"kind": "classes", "report":
        evaluate's report}``.
    progress(int, int), failed(dict), finished()
        As the Generate panel's other workers (progress is not reported: scoring is quick).
    """

    progress = Signal(int, int)
    result = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, job: dict) -> None:
        super().__init__()
        self.job = job

    def stop(self) -> None:
        """Scoring is not interrupted (the Stop button stays off for it)."""

    @Slot()
    def run(self) -> None:
        j = self.job
        try:
            if j["kind"] == "series":
                from designer.training.trained.rollout import forecast_view
                out = forecast_view(j["run_dir"], j.get("which", "best"),
                                    j.get("device", "cpu"), j.get("rounds"), j.get("origin"),
                                    j.get("scores", True))
            else:
                from designer.training.trained.evaluate import evaluate_run
                report = evaluate_run(j["run_dir"], None, j.get("which", "best"),
                                      j.get("device", "cpu"))
                out = {"kind": "classes", "report": report, "run_dir": j["run_dir"]}
            self.result.emit(out)
        except Exception as e:  # noqa: BLE001
            _report(self, e)
        finally:
            self.finished.emit()
