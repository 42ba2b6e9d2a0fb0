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
import math
import time

from PySide6.QtGui import QFontDatabase, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTabWidget

from designer.ui.inspect.surprise import CharToolTips, insert_scored, legend_html, mean_surprise
from designer.ui.look import resources
from designer.ui.runs.run import Run, device_text, engines_text
from designer.ui.runs.run_list import RunList

from .generate_panel import GeneratePanel

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
        self.note(f"   run folder {request.out}")
        self._last_progress = 0.0

    def add_record(self, run: Run, rec: dict) -> None:
        kind = rec["kind"]
        n = f"#{run.number}"
        if kind == "start":
            resumed = " (resumed)" if rec.get("resumed") else ""
            self.note(f"   {rec['device_name']}, {engines_text(rec['engines'])}, "
                      f"{rec['params']:,} parameters, {rec['steps']:,} steps{resumed}")
            self.note(f"   {rec['data']}")
        elif kind == "note":
            self.note(f"   note: {rec['message']}")
        elif kind == "train":
            now = time.monotonic()
            if now - self._last_progress >= PROGRESS_EVERY_S or rec["step"] == run.steps:
                self._last_progress = now
                acc = f", accuracy {rec['accuracy']:.1%}" if rec.get("accuracy") is not None \
                    else f", RMSE {rec['rmse']:.4g}" if rec.get("rmse") is not None else ""
                self._append(f"{n} step {rec['step']:,}: loss "
                             f"{_loss(rec['loss'], run.kind)}{acc}, "
                             f"{rec['tokens_per_s']:,.0f} tokens/s, "
                             f"{rec['ms_per_step']:.0f} ms/step")
        elif kind == "val":
            acc = f", accuracy {rec['val_accuracy']:.2%}" if rec.get("val_accuracy") is not \
                None else f", RMSE {rec['val_rmse']:.4g}" if rec.get("val_rmse") is not None \
                else ""
            best = "  (best)" if rec.get("best") else ""
            self._append(f"{n} step {rec['step']:,}: validation loss "
                         f"{_loss(rec['val_loss'], run.kind)}{acc}{best}",
                         bold=bool(rec.get("best")))
        elif kind == "sample":
            mean = mean_surprise(rec.get("surprise") or [])
            how = f" (the model's own surprise: {mean:.2f} nats a character)" if mean else ""
            self._append(f"\u2014 sample at step {rec['step']:,}{how} \u2014", self._accent())
            if rec.get("surprise"):
                self._append_scored(rec["text"], rec["surprise"], rec.get("top") or [],
                                    run.vocab)
            else:
                self._append(rec["text"])
            self._append("\u2014" * 12, self._accent())
        elif kind == "probe" and rec.get("surprise") and rec.get("text"):
            self._append(f"\u2014 held-out snippet at step {rec['step']:,}: mean surprise "
                         f"{_loss(rec['loss'])} \u2014", self._accent())
            self._append_scored(rec["text"], rec["surprise"], rec.get("top") or [], run.vocab)
        elif kind == "checkpoint":
            self.note(f"   checkpoint at step {rec['step']:,} ({', '.join(rec['pointers'])})")
        elif kind == "final" and rec["stage"] != "progress":
            self._append(f"{n} {rec['message']}", self._accent(),
                         bold=rec["stage"] == "done")
        elif kind == "paused":
            self.note(f"{n} paused at step {rec['step']:,}")
        elif kind == "resumed":
            self.note(f"{n} resumed at step {rec['step']:,}")
        elif kind == "error":
            self.log_error(f"{n} {rec['message']}")
        elif kind == "warning":
            self._append(f"{n} step {rec['step']:,}: warning: {rec['message']}",
                         self._warning(), bold=True)
        elif kind == "done":
            best = rec.get("best_val_loss")
            best_text = f", best validation loss {_loss(best, run.kind)}" if best is not None \
                else ""
            self._append(f"\u25a0 Run #{run.number} {rec['reason'].replace('_', ' ')} at step "
                         f"{rec['step']:,} after {rec['time']:.1f} s{best_text}",
                         self._accent(), bold=True)
            self.note(f"   checkpoints in {rec['run_dir']}  "
                      f"({device_text(run.device, run.device_name)})")


def _loss(nats: float | None, kind: str | None = None) -> str:
    """A cross-entropy in nats and bits; a regression loss (a forecaster's) as it is."""
    if nats is None or not math.isfinite(nats):
        return "not a number"
    if kind == "series":
        return f"{nats:.4g}"
    return f"{nats:.4f} nats ({nats / math.log(2):.3f} bits)"
