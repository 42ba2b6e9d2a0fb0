"""The Generate panel: make a trained run write.

Text runs take a prime, a length, a temperature, top-k and a seed, and the characters stream
into the panel as the model produces them. Audio runs generate seconds of sound, drawn as a
waveform, played where Qt Multimedia and an output device exist, and saved as a WAV. MNIST
runs report their held-out accuracy and draw a few digits with the model's guesses.

The work runs in a `GenerateWorker` thread (torch is imported there), on the CPU so a GPU run
training at the same time is not slowed.
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QTemporaryDir, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPlainTextEdit, QProgressBar, QPushButton,
                               QScrollArea, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from . import resources
from .digits import DigitGrid
from .run_list import RunList
from .runs import Run
from .worker import GenerateWorker, Job

KINDS = ("text", "audio", "mnist")


def audio_support() -> tuple[bool, str]:
    """Whether sound can be played here, and if not, why (for the Play button's tool-tip)."""
    try:
        from PySide6.QtMultimedia import QMediaDevices
    except ImportError:
        return False, ("Playing sound needs Qt Multimedia (the PySide6-Addons package), which "
                       "is not installed; save the WAV and play it with another program")
    if not QMediaDevices.audioOutputs():
        return False, "No audio output device was found; save the WAV instead"
    return True, "Play the generated audio"


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
        self._tmp: QTemporaryDir | None = None
        self._sound = None
        self.chunks = 0      # text pieces streamed in by the current generation
        self.streamed = 0    # characters streamed in

        self.run_combo = QComboBox()
        self.run_combo.setPlaceholderText("no trained run yet")
        self.run_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.run_combo.setMinimumContentsLength(16)
        self.checkpoint = QComboBox()
        self.checkpoint.addItem("Best (lowest validation loss)", "best")
        self.checkpoint.addItem("Last", "last")
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
        self.form.addRow("Run", self.run_combo)
        self.form.addRow("Checkpoint", self.checkpoint)
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
        left.setMinimumWidth(240)
        left.setMaximumWidth(330)

        self.text_view = QPlainTextEdit()
        self.text_view.setReadOnly(True)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.text_view.setPlaceholderText("Generated text streams here.")
        self.audio_page = self._audio_page()
        self.mnist_page = self._mnist_page()
        self.pages = QStackedWidget()
        for page in (self.text_view, self.audio_page, self.mnist_page):
            self.pages.addWidget(page)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(left)
        row.addWidget(self.pages, 1)

        runs.added.connect(self._runs_changed)
        runs.removed.connect(self._runs_changed)
        runs.changed.connect(self._runs_changed)
        self.run_combo.currentIndexChanged.connect(self._run_picked)
        self._runs_changed()
        self._set_kind("text")

    # ---------------------------------------------------------------------- pages --
    def _audio_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(4, 4, 4, 4)
        self.audio_progress = QProgressBar()
        self.audio_progress.hide()
        self.wave_holder = QVBoxLayout()
        self.wave = None  # a pyqtgraph plot, made when first needed
        self.wave_note = QLabel("The waveform of the generated audio appears here.")
        self.wave_note.setAlignment(Qt.AlignCenter)
        self.wave_holder.addWidget(self.wave_note, 1)
        can_play, why = audio_support()
        self.play = QPushButton(resources.icon("train"), "Play")
        self.play.setEnabled(False)
        self.play.setToolTip(why)
        self.can_play = can_play
        self.play.clicked.connect(self.play_audio)
        self.save = QPushButton(resources.icon("save"), "Save WAV\u2026")
        self.save.setEnabled(False)
        self.save.clicked.connect(lambda: self.save_wav())
        buttons = QHBoxLayout()
        buttons.addWidget(self.play)
        buttons.addWidget(self.save)
        buttons.addStretch(1)
        lay.addWidget(self.audio_progress)
        lay.addLayout(self.wave_holder, 1)
        lay.addLayout(buttons)
        return page

    def _mnist_page(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.accuracy = QLabel("Press Predict to score the run on held-out digits.")
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
                self.run_combo.addItem(run.label, run)
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
            self.chunks = self.streamed = 0
            self.text_view.clear()
            cursor = self.text_view.textCursor()
            bold = QTextCharFormat()
            bold.setFontWeight(QFont.Bold)
            cursor.insertText(job["prime"], bold)
            self.text_view.setTextCursor(cursor)
        elif self.kind == "audio":
            if self._tmp is None:
                self._tmp = QTemporaryDir()
            job.update(seconds=self.seconds.value(),
                       path=str(Path(self._tmp.path()) / f"generated-{time.time_ns()}.wav"))
            self.audio_progress.setRange(0, 0)
            self.audio_progress.show()
        else:
            job.update(count=self.count.value())
        worker = GenerateWorker(job)
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
        self.stop_button.setEnabled(self.kind == "text")
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

    @Slot(str)
    def _text(self, chunk: str) -> None:
        self.chunks += 1
        self.streamed += len(chunk)
        self.status.setText(f"Generating: {self.streamed:,} of {self.length.value():,} "
                            "characters\u2026")
        cursor = self.text_view.textCursor()
        cursor.movePosition(QTextCursor.End)
        cursor.insertText(chunk, QTextCharFormat())
        self.text_view.setTextCursor(cursor)
        self.text_view.ensureCursorVisible()

    @Slot(int, int)
    def _progress(self, done: int, total: int) -> None:
        self.audio_progress.setRange(0, total)
        self.audio_progress.setValue(done)
        self.status.setText(f"Generating: {done:,} of {total:,} samples\u2026")

    @Slot(object)
    def _result(self, result: dict) -> None:
        self.result = result
        took = time.perf_counter() - self._started
        if result["kind"] == "text":
            n = len(result["text"])
            self.status.setText(f"{n:,} characters in {took:.1f} s"
                                + (" (stopped)" if result.get("stopped") else ""))
        elif result["kind"] == "audio":
            self._show_audio(result)
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

    @Slot()
    def _ended(self) -> None:
        self.job = None
        self.audio_progress.hide()
        self.stop_button.setEnabled(False)
        self.go.setEnabled(self.current_run() is not None)
        self.busy_changed.emit(False)

    # ----------------------------------------------------------------------- audio --
    def _show_audio(self, result: dict) -> None:
        import numpy as np
        import pyqtgraph as pg
        if self.wave is None:
            self.wave = pg.PlotWidget()
            plot = self.wave.getPlotItem()
            plot.setLabel("bottom", "seconds")
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.hideButtons()
            plot.setMenuEnabled(False)
            self.wave_curve = plot.plot(pen=pg.mkPen("#2f7de1", width=1))
            self.wave_holder.removeWidget(self.wave_note)
            self.wave_note.hide()
            self.wave_holder.addWidget(self.wave, 1)
        samples = np.asarray(result["samples"], dtype=np.float32)
        t = np.arange(len(samples), dtype=np.float64) / result["rate"]
        self.wave_curve.setData(t, samples)
        self.wave.getPlotItem().setYRange(-1, 1)
        self.play.setEnabled(self.can_play)
        self.save.setEnabled(True)

    def play_audio(self) -> None:
        if not self.result or self.result.get("kind") != "audio" or not self.can_play:
            return
        from PySide6.QtMultimedia import QSoundEffect
        self._sound = QSoundEffect(self)
        self._sound.setSource(QUrl.fromLocalFile(self.result["path"]))
        self._sound.play()

    def save_wav(self, target: str | None = None) -> Path | None:
        """Write the generated WAV to ``target`` (asks where when not given), atomically."""
        from designer.graph.atomic import atomic_write_bytes
        if not self.result or self.result.get("kind") != "audio":
            return None
        if not target:
            target, _ = QFileDialog.getSaveFileName(self, "Save the generated audio",
                                                    "generated.wav", "WAV audio (*.wav)")
            if not target:
                return None
        path = Path(target)
        if path.suffix.lower() != ".wav":
            path = path.with_suffix(path.suffix + ".wav")
        try:
            atomic_write_bytes(path, Path(self.result["path"]).read_bytes())
        except OSError as e:
            self.status.setText(f"{path} cannot be written ({e.strerror or e})")
            return None
        self.status.setText(f"Saved {path}")
        self.message.emit(f"saved generated audio to {path}")
        return path


def _spin(low: int, high: int, value: int, suffix: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(low, high)
    s.setValue(value)
    s.setSuffix(suffix)
    s.setGroupSeparatorShown(True)
    return s

