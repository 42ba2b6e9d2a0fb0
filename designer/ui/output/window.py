"""The Output dock: the training log (starts, notes, validation, samples, checkpoints, errors)
and the Generate panel.

The log is a read-only text view capped at a number of blocks, so a long run cannot grow it
without bound; training records are logged sparingly (validation passes, samples, at most one
progress line every few seconds). Samples and the held-out snippet scored at every validation
are coloured by how surprised the model was by each character; hovering one shows the
model's top guesses there.
"""
from __future__ import annotations

import html
import time

from PySide6.QtGui import QFontDatabase, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTabWidget

from designer.training.run.record_format import (ERROR, HEADING, MUTED, STRONG, WARNING, Line,
                                                 RecordFormatter, device_text)
from designer.ui.inspect.surprise import CharToolTips, insert_scored, legend_html
from designer.ui.look import resources
from designer.ui.runs.run import Run
from designer.ui.runs.run_list import RunList

from designer.ui.output.generate_panel import GeneratePanel

MAX_BLOCKS = 20_000
PROGRESS_EVERY_S = 5.0


class OutputPanel(QTabWidget):
    """Log and Generate tabs.

    Parameters
    ----------
    runs
        The session's runs (the Generate panel picks from them).
    """

    def __init__(self, runs: RunList, parent=None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(MAX_BLOCKS)
        self.log.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.log.setPlaceholderText("Press Train: the run's progress, validation losses, "
                                    "samples and checkpoints are logged here.")
        self.generate = GeneratePanel(runs)
        self.addTab(self.log, "Log")
        self.addTab(self.generate, resources.icon("generate"), "Generate")
        self.generate.message.connect(self.note)
        self._last_progress = 0.0
        self._legend_shown = False
        self.tips = CharToolTips(self.log)

    # ------------------------------------------------------------------- writing --
    def _append(self, text: str, color: str | None = None, bold: bool = False) -> None:
        body = html.escape(text).replace("\n", "<br>").replace("  ", "&nbsp; ")
        if bold:
            body = f"<b>{body}</b>"
        if color:
            body = f'<span style="color:{color}">{body}</span>'
        self.log.appendHtml(body)
        self.log.moveCursor(QTextCursor.End)

    def _append_scored(self, text: str, surprise: list, top: list, vocab: list | None) -> None:
        """Text coloured by surprise, one block per line, with the top guesses as tips."""
        if vocab is not None:
            top = [[[vocab[i] if 0 <= i < len(vocab) else i, p] for i, p in row]
                   for row in top]
        cursor = QTextCursor(self.log.document())
        cursor.movePosition(QTextCursor.End)
        cursor.insertBlock()
        insert_scored(cursor, text.rstrip("\n"), surprise, top)
        if not self._legend_shown:
            self._legend_shown = True
            self.log.appendHtml(f"<small>{legend_html()}</small>")
        self.log.moveCursor(QTextCursor.End)

    def note(self, text: str) -> None:
        self._append(text, self._muted())

    def log_error(self, message: str, details: str = "") -> None:
        self._append(message, self._error(), bold=True)
        if details:
            self._append(details.rstrip(), self._muted())

    def _muted(self) -> str:
        return QApplication.palette().color(QPalette.PlaceholderText).name()

    def _error(self) -> str:
        base = QApplication.palette().color(QPalette.Base)
        return "#d93b3b" if base.lightness() > 128 else "#ff6b6b"

    def _warning(self) -> str:
        base = QApplication.palette().color(QPalette.Base)
        return "#b35c00" if base.lightness() > 128 else "#ffa94d"

    def _accent(self) -> str:
        return QApplication.palette().color(QPalette.Link).name()

    # ------------------------------------------------------------------- records --
    def begin_run(self, run: Run, request) -> None:
        where = f"{request.path}" if request.path else "the unsaved project"
        what = (f"continuing {request.out} from its last checkpoint" if request.resume else
                f"training a snapshot of {where}")
        self._append(f"\u25b6 Run #{run.number}: {what} ({time.strftime('%H:%M:%S')})",
                     self._accent(), bold=True)
        self._last_progress = 0.0

    def add_record(self, run: Run, rec: dict) -> None:
        """Log what a training record tells (`RecordFormatter`); progress lines at most
        every few seconds, and the last step's."""
        told = RecordFormatter(run.number, run.kind, run.steps,
                               device_text(run.device, run.device_name)).read(rec)
        if told.progress:
            now = time.monotonic()
            if now - self._last_progress < PROGRESS_EVERY_S and rec["step"] != run.steps:
                return
            self._last_progress = now
        for line in told.lines:
            self.write_line(line, run.vocab)

    def write_line(self, line: Line, vocab: list | None = None) -> None:
        """One line as its tone says: muted, a heading, bold, a warning, an error; a scored
        text coloured by surprise."""
        if line.scored is not None:
            self._append_scored(line.text, line.scored["surprise"], line.scored["top"], vocab)
            return
        color, bold = {MUTED: (self._muted, False), HEADING: (self._accent, True),
                       STRONG: (None, True), WARNING: (self._warning, True),
                       ERROR: (self._error, True)}.get(line.tone, (None, False))
        self._append(("   " if line.detail else "") + line.text, color and color(), bold)
