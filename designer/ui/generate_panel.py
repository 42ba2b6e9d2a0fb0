"""The Generate panel: make a trained run write.

Text runs take a prime, a length, a temperature, top-k and a seed, and the characters stream
into the panel as the model produces them, each coloured by how surprised the model itself
was to write it (hover a character for the model's top guesses there). Audio runs generate seconds of sound, drawn as a
waveform, played where Qt Multimedia and an output device exist, and saved as a WAV. MNIST
runs report their held-out accuracy and draw a few digits with the model's guesses.

The work runs in a `GenerateWorker` thread (torch is imported there), on the CPU so a GPU run
training at the same time is not slowed.
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QScrollArea, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from . import resources
from .audio_view import AudioView
from .inspect.surprise import MAX_SCORED, CharToolTips, insert_scored, legend_html
from .digits import DigitGrid
from .run_list import RunList
from .runs import Run
from .worker import GenerateWorker, Job

KINDS = ("text", "audio", "mnist")


def checkpoint_for(run: Run, wanted: str) -> str:
    """``wanted`` (best or last) if the run has it, else the other one."""
    folder = Path(run.run_dir) if run.run_dir else None
    if folder is None or (folder / f"{wanted}.json").is_file():
        return wanted
    other = "last" if wanted == "best" else "best"
    return other if (folder / f"{other}.json").is_file() else wanted


class GeneratePanel(QWidget):
    """Settings on the left, the result on the right.

    Signals
    -------
    message(str)
        A line for the log.
    busy_changed(bool)
        Generation started or ended.
    """

    message = Signal(str)
    busy_changed = Signal(bool)

    def __init__(self, runs: RunList, parent=None) -> None:
        super().__init__(parent)
        self.runs = runs
        self.job: Job | None = None
        self.kind = "text"
        self.result: dict | None = None
        self.chunks = 0      # text pieces streamed in by the current generation
        self.streamed = 0    # characters streamed in

        self.run_combo = QComboBox()
        self.run_combo.setPlaceholderText("no trained run yet")
        self.run_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.run_combo.setMinimumContentsLength(20)
        self.run_combo.setToolTip("The run to generate from: this session's runs and the run "
                                  "folders added to the charts")
        self.checkpoint = QComboBox()
        self.checkpoint.addItem("Best", "best")
        self.checkpoint.addItem("Last", "last")
        self.checkpoint.setToolTip("Best: the checkpoint with the lowest validation loss; "
                                   "Last: the newest (the other is used if one is missing)")
        self.prime = QLineEdit()
        self.prime.setPlaceholderText("a newline")
        self.prime.setToolTip("The text the model continues (characters it saw in training)")
        self.length = _spin(1, 1_000_000, 500, " characters")
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.05, 600)
        self.seconds.setValue(2.0)
        self.seconds.setSuffix(" s")
        self.count = _spin(1, 64, 16, " digits")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 5.0)
        self.temperature.setSingleStep(0.05)
        self.temperature.setValue(0.8)
        self.temperature.setToolTip("Below 1: safer, more repetitive; above 1: wilder; "
                                    "0: always the most likely symbol")
        self.top_k = _spin(0, 100_000, 0, "")
        self.top_k.setSpecialValueText("off")
        self.top_k.setToolTip("Sample only among the k most likely symbols (off: all)")
        self.seed = _spin(-1, 2**31 - 1, -1, "")
        self.seed.setSpecialValueText("random")
        self.seed.setToolTip("The same seed gives the same result")

        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.form.addRow("Prime", self.prime)
        self.form.addRow("Length", self.length)
        self.form.addRow("Length", self.seconds)
        self.form.addRow("Show", self.count)
        self.form.addRow("Temperature", self.temperature)
        self.form.addRow("Top-k", self.top_k)
        self.form.addRow("Seed", self.seed)
        self.go = QPushButton(resources.icon("generate"), "Generate")
        self.go.setDefault(True)
        self.go.clicked.connect(self.generate)
        self.stop_button = QPushButton(resources.icon("stop"), "Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        buttons = QHBoxLayout()
        buttons.addWidget(self.go)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.PlainText)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(6, 6, 6, 6)
        lv.addLayout(self.form)
        lv.addLayout(buttons)
        lv.addWidget(self.status)
        lv.addStretch(1)
        left.setMinimumWidth(220)
        left.setMaximumWidth(300)

        self.text_view = QPlainTextEdit()
        self.text_view.setReadOnly(True)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.text_view.setPlaceholderText("Generated text streams here.")
        self.tips = CharToolTips(self.text_view)
        self.legend = QLabel(legend_html())
        self.legend.setWordWrap(True)
        self._scores: dict | None = None    # the surprise of the text about to arrive
        self._scored_chars = 0
        self._surprise_sum = 0.0
        text_page = QWidget()
        tv = QVBoxLayout(text_page)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.setSpacing(2)
        tv.addWidget(self.text_view, 1)
        tv.addWidget(self.legend)
        self.audio = AudioView()
        self.audio.message.connect(self._audio_message)
        self.mnist_page = self._mnist_page()
        self.pages = QStackedWidget()
        for page in (text_page, self.audio, self.mnist_page):
            self.pages.addWidget(page)
        top = QHBoxLayout()
        top.setContentsMargins(6, 6, 6, 0)
        top.addWidget(QLabel("Run"))
        top.addWidget(self.run_combo, 1)
        top.addWidget(QLabel("Checkpoint"))
        top.addWidget(self.checkpoint)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(left)
        row.addWidget(self.pages, 1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        outer.addLayout(top)
        outer.addLayout(row, 1)

        runs.added.connect(self._runs_changed)
        runs.removed.connect(self._runs_changed)
        runs.changed.connect(self._runs_changed)
        self.run_combo.currentIndexChanged.connect(self._run_picked)
        self._runs_changed()
        self._set_kind("text")

    # ---------------------------------------------------------------------- pages --
    def _mnist_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.accuracy = QLabel("Press Predict to score the run on held-out digits.")
        self.accuracy.setWordWrap(True)
        font = self.accuracy.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.accuracy.setFont(font)
        self.digits = DigitGrid()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.digits)
        lay.addWidget(self.accuracy)
        lay.addWidget(scroll, 1)
        return page

    def _set_kind(self, kind: str) -> None:
        self.kind = kind if kind in KINDS else "text"
        rows = {"text": (self.prime, self.length, self.temperature, self.top_k, self.seed),
                "audio": (self.seconds, self.temperature, self.top_k, self.seed),
                "mnist": (self.count, self.seed)}[self.kind]
        for w in (self.prime, self.length, self.seconds, self.count, self.temperature,
                  self.top_k, self.seed):
            self.form.setRowVisible(w, w in rows)
        self.go.setText("Predict" if self.kind == "mnist" else "Generate")
        self.pages.setCurrentIndex(KINDS.index(self.kind))

    # ------------------------------------------------------------------------ runs --
    def _runs_changed(self, *_) -> None:
        current = self.current_run()
        self.run_combo.blockSignals(True)
        self.run_combo.clear()
        for run in self.runs:
            if run.run_dir is not None:
                self.run_combo.addItem(run.short_label, run)
                self.run_combo.setItemData(self.run_combo.count() - 1,
                                           f"{run.label}\n{run.run_dir}", Qt.ToolTipRole)
        if current is not None:
            self._select(current)
        elif self.run_combo.count():
            self.run_combo.setCurrentIndex(self.run_combo.count() - 1)
        self.run_combo.blockSignals(False)
        self._run_picked()

    def _select(self, run: Run) -> None:
        for i in range(self.run_combo.count()):
            if self.run_combo.itemData(i) is run:
                self.run_combo.setCurrentIndex(i)

    def select_run(self, run: Run) -> None:
        """Generate from ``run`` next (the controller picks each run as it ends)."""
        self._select(run)

    def current_run(self) -> Run | None:
        return self.run_combo.currentData()

    def _run_picked(self, *_) -> None:
        run = self.current_run()
        if run is not None and run.kind and run.kind != self.kind:
            self._set_kind(run.kind)
        self.go.setEnabled(run is not None and self.job is None)

    # ------------------------------------------------------------------ generating --
    @property
    def busy(self) -> bool:
        return self.job is not None

    def generate(self) -> bool:
        """Start generating from the selected run; False when it cannot start."""
        run = self.current_run()
        if self.job is not None:
            return False
        if run is None:
            self.status.setText("Train a run first (or add a run folder in the charts).")
            return False
        which = checkpoint_for(run, self.checkpoint.currentData())
        seed = None if self.seed.value() < 0 else self.seed.value()
        job = {"kind": self.kind, "run_dir": str(run.run_dir), "which": which, "seed": seed,
               "temperature": self.temperature.value(), "top_k": self.top_k.value()}
        if self.kind == "text":
            job.update(prime=self.prime.text().replace("\\n", "\n"), length=self.length.value())
            self.chunks = self.streamed = self._scored_chars = 0
            self._surprise_sum = 0.0
            self.text_view.clear()
            cursor = self.text_view.textCursor()
            bold = QTextCharFormat()
            bold.setFontWeight(QFont.Bold)
            cursor.insertText(job["prime"], bold)
            self.text_view.setTextCursor(cursor)
        elif self.kind == "audio":
            job.update(seconds=self.seconds.value(), path=self.audio.new_path(time.time_ns()))
            self.audio.started()
        else:
            job.update(count=self.count.value())
        worker = GenerateWorker(job)
        worker.scored.connect(self._scored)
        worker.text.connect(self._text)
        worker.progress.connect(self._progress)
        worker.result.connect(self._result)
        worker.failed.connect(self._failed)
        self.job = Job(worker, "generate", self)
        self.job.done.connect(self._ended)
        self._started = time.perf_counter()
        self.status.setStyleSheet("")
        self.status.setText(f"Loading run #{run.number} ({which} checkpoint)\u2026")
        self.go.setEnabled(False)
        self.stop_button.setEnabled(self.kind in ("text", "audio"))
        self.busy_changed.emit(True)
        self.job.start()
        return True

    def stop(self) -> None:
        if self.job is not None:
            self.job.worker.stop()

    def shutdown(self) -> None:
        """Stop generating and wait for the thread (the window is closing)."""
        if self.job is not None:
            self.job.worker.stop()
            self.job.wait()
            self._ended()

    @Slot(object)
    def _scored(self, scores: dict) -> None:
        self._scores = scores

    @Slot(str)
    def _text(self, chunk: str) -> None:
        self.chunks += 1
        self.streamed += len(chunk)
        self.status.setText(f"Generating: {self.streamed:,} of {self.length.value():,} "
                            "characters\u2026")
        cursor = self.text_view.textCursor()
        cursor.movePosition(QTextCursor.End)
        scores, self._scores = self._scores, None
        if scores is not None and len(scores["surprise"]) == len(chunk):
            self._scored_chars += insert_scored(
                cursor, chunk, scores["surprise"], scores["top"],
                budget=MAX_SCORED - self._scored_chars)
            self._surprise_sum += sum(scores["surprise"])
        else:
            cursor.insertText(chunk, QTextCharFormat())
        self.text_view.setTextCursor(cursor)
        self.text_view.ensureCursorVisible()

    @Slot(int, int)
    def _progress(self, done: int, total: int) -> None:
        self.audio.advanced(done, total)
        self.status.setText(f"Generating: {done:,} of {total:,} samples\u2026")

    @Slot(object)
    def _result(self, result: dict) -> None:
        self.result = result
        took = time.perf_counter() - self._started
        if result["kind"] == "text":
            n = len(result["text"])
            mean = f"; the model's own surprise: {self._surprise_sum / n:.2f} nats a " \
                "character" if n and self._scored_chars else ""
            self.status.setText(f"{n:,} characters in {took:.1f} s{mean}"
                                + (" (stopped)" if result.get("stopped") else ""))
        elif result["kind"] == "audio" and result.get("stopped"):
            self.status.setText("Stopped")
        elif result["kind"] == "audio":
            self.audio.show_result(result)
            self.status.setText(f"{len(result['samples']) / result['rate']:.2f} s of audio at "
                                f"{result['rate']:,} Hz in {took:.1f} s")
        else:
            self.digits.set_predictions(result["images"], result["predicted"], result["truth"])
            self.accuracy.setText(f"Held-out accuracy: <b>{result['accuracy']:.2%}</b> on "
                                  f"{result['evaluated']:,} digits; {self.digits.correct} of "
                                  f"{len(result['truth'])} shown are right")
            self.status.setText(f"Scored in {took:.1f} s")
            self.message.emit(f"held-out accuracy {result['accuracy']:.2%} on "
                              f"{result['evaluated']:,} digits")

    @Slot(object)
    def _failed(self, info: dict) -> None:
        self.status.setStyleSheet("color: #d93b3b;")
        self.status.setText(info["message"])
        self.message.emit(f"generation failed: {info['message']}")
        if info.get("details"):
            self.message.emit(info["details"])

    def _audio_message(self, text: str) -> None:
        self.status.setStyleSheet("color: #d93b3b;" if "cannot" in text else "")
        self.status.setText(text[:1].upper() + text[1:])
        self.message.emit(text)

    def save_wav(self, target: str | None = None):
        """Save the last generated audio (see `AudioView.save_wav`)."""
        return self.audio.save_wav(target)

    @Slot()
    def _ended(self) -> None:
        if self.job is not None:
            self.job.deleteLater()  # its thread has ended
        self.job = None
        self.audio.ended()
        self.stop_button.setEnabled(False)
        self.go.setEnabled(self.current_run() is not None)
        self.busy_changed.emit(False)


def _spin(low: int, high: int, value: int, suffix: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(low, high)
    s.setValue(value)
    s.setSuffix(suffix)
    s.setGroupSeparatorShown(True)
    return s

