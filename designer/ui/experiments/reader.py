"""Reading a study off the GUI thread: Optuna's storage and its importance evaluator can take
a while (a SQLite file written by a running search, a few hundred trials), so one long-lived
thread does it and hands back a plain `StudyReading`.

One read runs at a time; asking again while one runs queues one more read of the newest
question (only the latest answer matters).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal, Slot

from designer.search.analysis import StudyError, damage, open_storage, read_study


class _Worker(QObject):
    done = Signal(object)
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._storages: dict = {}   # URL -> opened storage, reused by later reads

    @Slot(object)
    def read(self, ask: tuple) -> None:
        storage, study, objective, importance = ask
        try:
            if storage not in self._storages:
                self._storages[storage] = open_storage(storage)
            self.done.emit(read_study(self._storages[storage], study, objective, importance))
        except StudyError as e:
            self.failed.emit(str(e))
        except Exception as e:  # noqa: BLE001 - a storage that went wrong, said in a line
            self._storages.pop(storage, None)
            self.failed.emit(damage(storage) or f"{storage}: the study cannot be read "
                             f"({type(e).__name__}: {e})")


class StudyReader(QObject):
    """Reads studies in its own thread.

    Signals
    -------
    read_done(StudyReading)
    read_failed(str)
        One sentence.
    """

    read_done = Signal(object)
    read_failed = Signal(str)
    _ask = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("study-reader")
        self.worker = _Worker()
        self.worker.moveToThread(self.thread)
        self._ask.connect(self.worker.read)
        self.worker.done.connect(self._done)
        self.worker.failed.connect(self._failed)
        self.thread.start()
        self.busy = False
        self._next: tuple | None = None

    def read(self, storage: str, study: str, objective: str | None = None,
             importance: bool = True) -> None:
        """Read ``study`` from ``storage`` soon (without ``importance``: only its trials, a
        quick look); the answer comes as a signal."""
        ask = (storage, study, objective, importance)
        if self.busy:
            self._next = ask
            return
        self.busy = True
        self._ask.emit(ask)

    def _again(self) -> bool:
        self.busy = False
        if self._next is not None:
            ask, self._next = self._next, None
            self.read(*ask)
            return True
        return False

    def _done(self, reading) -> None:
        if not self._again():
            self.read_done.emit(reading)

    def _failed(self, text: str) -> None:
        if not self._again():
            self.read_failed.emit(text)

    def shutdown(self) -> None:
        """End the thread (waits for a read in progress)."""
        if self.thread.isRunning():
            self.thread.quit()
            self.thread.wait()
