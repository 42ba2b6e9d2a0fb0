"""File > New from Data...: pick a CSV, ``.npy`` or ``.ts`` file, see what it holds, choose what
to learn, and get the project ``rnn-designer init`` would make of it.

The file is previewed in a worker thread (`PreviewWorker`): its header and first rows at once,
then its counts as the whole file is scanned, so a large file never freezes the window and
picking another abandons the scan. The task is guessed as ``init`` guesses it; the project is
made by ``init``'s own code (`designer.training.new_from_data.init.init_project`, in an `InitWorker`),
written atomically, and never over an existing file unless the user says so.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QLabel,
                               QLineEdit, QMessageBox, QProgressBar, QPushButton, QVBoxLayout)

from designer.graph.project import SUFFIX

from designer.ui.runs.worker import Job
from designer.ui.sequences.preview_table import PreviewTable
from designer.ui.sequences.task_choice import TaskChoice
from designer.ui.sequences.workers import InitWorker, PreviewWorker

DATA_FILTER = ("Data files (*.csv *.tsv *.txt *.npy *.ts *.arff);;CSV tables (*.csv *.tsv "
               "*.txt);;NumPy arrays (*.npy);;UEA/UCR sequences (*.ts *.arff *.tsv *.txt);;"
               "All files (*)")
ERROR_STYLE = "color: #d93b3b;"
WARNING_STYLE = "color: #b35c00;"


def free_project_path(folder: Path, stem: str) -> Path:
    """``folder/stem.json``, or ``stem-2.json``... when that is taken."""
    path, n = folder / f"{stem}{SUFFIX}", 2
    while path.exists():
        path, n = folder / f"{stem}-{n}{SUFFIX}", n + 1
    return path


class NewFromDataDialog(QDialog):
    """The dialog; ``created`` is ``{"path", "lines"}`` once the project is written.

    Parameters
    ----------
    folder
        Where a project goes when the data's own folder cannot be written to.

    Signals
    -------
    previewed(object)
        A preview arrived (the head, then the scanned file); tests wait on it.
    """

    previewed = Signal(object)

    def __init__(self, folder: str | os.PathLike | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Project from Data")
        self.folder = Path(folder) if folder else Path.cwd()
        self.preview = None          # the latest Preview of the file in the field
        self.error: str | None = None
        self.created: dict | None = None
        self.jobs: list[Job] = []    # previews still running (abandoned ones finish on their own)
        self.init_job: Job | None = None
        self._out_edited = False

        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText("a CSV table, a .npy array or a .ts file of "
                                          "labelled sequences")
        self.data_edit.editingFinished.connect(self._data_typed)
        self.data_edit.installEventFilter(self)  # Enter reads the file typed: no button
        browse = QPushButton("Browse\u2026", autoDefault=False)
        browse.clicked.connect(self._browse_data)
        self.summary = QLabel("Pick a file to see what it holds.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.PlainText)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(8)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.table = PreviewTable()
        self.table.setMinimumHeight(180)

        self.choice = TaskChoice()
        self.choice.changed.connect(self._choice_changed)

        self.out_edit = QLineEdit()
        self.out_edit.textEdited.connect(self._out_typed)
        out_browse = QPushButton("Browse\u2026", autoDefault=False)
        out_browse.clicked.connect(self._browse_out)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.PlainText)
        self.message.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.create_button = self.buttons.addButton("Create and Open",
                                                    QDialogButtonBox.AcceptRole)
        self.create_button.setDefault(True)
        self.create_button.setEnabled(False)
        self.create_button.clicked.connect(self.create)
        self.buttons.rejected.connect(self.reject)

        top = QHBoxLayout()
        top.addWidget(QLabel("Data file"))
        top.addWidget(self.data_edit, 1)
        top.addWidget(browse)
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel("Save project as"))
        bottom.addWidget(self.out_edit, 1)
        bottom.addWidget(out_browse)
        outer = QVBoxLayout(self)
        outer.addLayout(top)
        outer.addWidget(self.summary)
        outer.addWidget(self.busy)
        outer.addWidget(self.table, 1)
        outer.addWidget(self.choice)
        outer.addLayout(bottom)
        outer.addWidget(self.message)
        outer.addWidget(self.buttons)
        self.resize(760, 620)

    # ---------------------------------------------------------------------- picking --
    def _browse_data(self) -> None:
        start = str(Path(self.data_edit.text()).parent) if self.data_edit.text() else \
            str(self.folder)
        path, _ = QFileDialog.getOpenFileName(self, "Data to learn from", start, DATA_FILTER)
        if path:
            self.set_data_path(path)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        """Enter in the data file's field reads that file; it presses no button (Browse
        would open, or Create make a project of a file not read yet)."""
        if watched is self.data_edit and event.type() == QEvent.KeyPress and \
                event.key() in (Qt.Key_Return, Qt.Key_Enter):
            self._data_typed()
            return True
        return super().eventFilter(watched, event)

    def _data_typed(self) -> None:
        text = self.data_edit.text().strip()
        if text and (self.preview is None or str(self.preview.path) != text):
            self.set_data_path(text)

    def set_data_path(self, path: str | os.PathLike) -> None:
        """Preview ``path`` (any scan of the file before is abandoned)."""
        path = str(Path(os.path.expanduser(str(path))))
        self.data_edit.setText(path)
        for job in self.jobs:
            job.worker.stop()
        self.preview, self.error = None, None
        self.table.set_preview(None)
        self.summary.setText(f"Reading {Path(path).name}\u2026")
        self._say(None)
        self.busy.show()
        worker = PreviewWorker(path)
        worker.head.connect(self._head)
        worker.scanned.connect(self._scanned)
        worker.progress.connect(self._progress)
        worker.failed.connect(self._preview_failed)
        job = Job(worker, "preview", self)
        job.done.connect(lambda: self._preview_ended(job))
        self.jobs.append(job)
        self._update_create()
        job.start()

    def _current(self, worker) -> bool:
        return bool(self.jobs) and self.jobs[-1].worker is worker

    def _head(self, look) -> None:
        if not self._current(self.sender()):
            return
        self.preview = look
        self.table.set_preview(look)
        self.summary.setText(look.summary())
        self.choice.fill(look)
        if not self._out_edited:
            self.out_edit.setText(str(self._default_out(look.path)))
        self._update_create()
        if look.task == "unsure":
            self._say(self.why_not(), WARNING_STYLE)
        self.previewed.emit(look)

    def _scanned(self, look) -> None:
        if not self._current(self.sender()):
            return
        self.preview = look
        self.table.set_preview(look)
        self.summary.setText(look.summary())
        if look.problem:
            self._say(f"Training would stop on this: {look.problem}.", WARNING_STYLE)
        self._choice_changed()  # a reason Create is off is said over it
        self.previewed.emit(look)

    def _progress(self, rows: int) -> None:
        if self._current(self.sender()) and self.preview is not None:
            what = "sequences" if self.preview.one_a_line else "rows"
            self.summary.setText(f"{self.preview.summary()} \u2014 {rows:,} {what} read so "
                                 "far\u2026")

    def _preview_failed(self, info: dict) -> None:
        if not self._current(self.sender()):
            return
        self.preview, self.error = None, _sentence(info["message"])
        self.table.set_preview(None)
        self.summary.setText("This file cannot be used.")
        self._say(self.error, ERROR_STYLE)
        self._update_create()
        self.previewed.emit(None)

    def _preview_ended(self, job: Job) -> None:
        if job in self.jobs:
            self.jobs.remove(job)
            job.deleteLater()
        if not self.jobs:
            self.busy.setVisible(self.init_job is not None)

    # ---------------------------------------------------------------------- choices --
    def _choice_changed(self, *_) -> None:
        self.choice.show_classes(self.preview)
        if self.preview is not None:
            self.table.preview_model.set_chosen(self.choice.chosen_columns())
            if self.preview.task == "unsure" and self.task is not None and \
                    not self.preview.problem:
                self._say(None)  # the question is answered
        self._update_create()

    @property
    def task(self) -> str | None:
        return self.choice.task

    def _update_create(self) -> None:
        why = self.why_not()
        self.create_button.setEnabled(why is None)
        self.create_button.setToolTip(why or "Write the project and open it")
        if why and self.preview is not None and self.task == "forecast" and \
                not self.preview.target_choices():
            self._say(why, ERROR_STYLE)

    def why_not(self) -> str | None:
        """Why Create is off, or ``None``."""
        if self.preview is None:
            return self.error or "Pick a data file first."
        if self.init_job is not None:
            return "The project is being made."
        if self.task is None:
            return _sentence(f"Say what to learn: {self.preview.question}" if
                             self.preview.question else "Say what to learn.")
        if self.task == "forecast" and not self.preview.target_choices():
            return (f"{self.preview.path.name} has no column of numbers to forecast; "
                    "a table to forecast needs one")
        if self.task == "forecast" and not self.choice.chosen_targets():
            return "Tick the column(s) to forecast."
        if not self.out_edit.text().strip():
            return "Say where to save the project."
        return None

    # ------------------------------------------------------------------------ where --
    def _default_out(self, data: Path) -> Path:
        folder = data.parent if os.access(data.parent, os.W_OK) else self.folder
        return free_project_path(folder, data.stem)

    def _out_typed(self, *_) -> None:
        self._out_edited = True
        self._update_create()

    def _browse_out(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the project as",
                                              self.out_edit.text() or str(self.folder),
                                              "rnn-designer projects (*.json)")
        if path:
            self.out_edit.setText(path if path.endswith(SUFFIX) else path + SUFFIX)
            self._out_edited = True
            self._update_create()

    def ask_replace(self, path: Path) -> bool:
        """Whether to write over ``path`` (tests replace this)."""
        return QMessageBox.question(
            self, "Replace the file?", f"{path} already exists. Replace it with the new "
            "project?", QMessageBox.Yes | QMessageBox.No, QMessageBox.No) == QMessageBox.Yes

    # ----------------------------------------------------------------------- create --
    def create(self) -> bool:
        """Make the project in a worker (as ``rnn-designer init``); False when it cannot
        start (the reason is said in the dialog)."""
        if self.preview is None or self.init_job is not None:
            return False
        text = self.out_edit.text().strip()
        out = Path(os.path.expanduser(text if text.endswith(SUFFIX) else text + SUFFIX))
        if not out.is_absolute():
            out = self.preview.path.parent / out
        if not out.parent.is_dir():
            self._say(f"{out.parent} is not a folder; choose where to save the project.",
                      ERROR_STYLE)
            return False
        if out.is_dir():
            self._say(f"{out} is a folder; give the project a file name.", ERROR_STYLE)
            return False
        replace = out.exists()
        if replace and not self.ask_replace(out):
            return False
        job = {"data": str(self.preview.path), "out": str(out), "replace": replace,
               **self.choice.init_args(self.preview)}
        worker = InitWorker(job)
        worker.result.connect(self._created)
        worker.failed.connect(self._create_failed)
        self.init_job = Job(worker, "init", self)
        self.init_job.done.connect(self._create_ended)
        self._say(f"Sizing the net from the whole of {self.preview.path.name}\u2026")
        self.busy.show()
        self._update_create()
        self.init_job.start()
        return True

    def _created(self, result: dict) -> None:
        self.created = result

    def _create_failed(self, info: dict) -> None:
        self._say(_sentence(info["message"]), ERROR_STYLE)

    def _create_ended(self) -> None:
        self.init_job.deleteLater()
        self.init_job = None
        self.busy.setVisible(bool(self.jobs))
        self._update_create()
        if self.created is not None:
            self.accept()

    def _say(self, text: str | None, style: str = "") -> None:
        self.message.setStyleSheet(style)
        self.message.setText(text or "")
        self.message.setVisible(bool(text))

    # ---------------------------------------------------------------------- closing --
    def reject(self) -> None:
        if self.init_job is not None:  # init cannot be cut short: wait for it to end
            self._say("Making the project\u2026 it closes when done.")
            return
        super().reject()

    def done(self, code: int) -> None:
        for job in self.jobs:
            job.worker.stop()
        for job in list(self.jobs):
            job.wait()
        super().done(code)


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
