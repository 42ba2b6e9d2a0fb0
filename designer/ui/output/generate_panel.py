"""The Generate panel: make a trained run write.

Text runs take a prime, a length, a temperature, top-k and a seed, and the characters stream
into the panel as the model produces them, each coloured by how surprised the model itself
was to write it (hover a character for its top guesses there); several streams are written at
once and shown side by side. Audio runs generate seconds of sound, drawn as waveforms with their levels, played
where the platform can, and saved as WAV. MNIST runs report their held-out accuracy and draw a
few digits with the model's guesses. Forecasting runs draw their test split's forecasts and a
roll-out beyond the horizon; classifiers their confusion matrix (``designer.ui.sequences``).
Temperature and top-k start from the run's data layer's defaults (``LayerSpec.generation``);
output that is near-silence or one short loop gets a one-line hint.

The work runs in a `GenerateWorker` thread (torch is imported there), on the device the run
trained on (its GPU, its step replayed from a CUDA graph) or, if picked, on the CPU.
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QScrollArea,
                               QStackedWidget, QVBoxLayout, QWidget)

from designer.ui.look import resources
from designer.ui.look.fitting import scrolling
from designer.ui.runs.run import Run, device_text
from designer.ui.runs.run_list import RunList
from designer.ui.runs.worker import GenerateWorker, Job
from designer.ui.sequences.results import SEQUENCE_KINDS, SequenceResults

from designer.ui.output.audio_view import AudioView
from designer.ui.output.digits import DigitGrid
from designer.ui.output.generation.settings_form import SettingsForm
from designer.ui.output.generation.text_streams import TextStreams

KINDS = ("text", "audio", "mnist") + SEQUENCE_KINDS
BUTTONS = {"mnist": "Predict", "series": "Evaluate", "classes": "Evaluate"}


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
        self._scores: list | None = None  # the surprise of the text piece about to arrive
        self.streamed = 0    # characters streamed in (per stream)

        self.run_combo = QComboBox()
        self.run_combo.setPlaceholderText("no trained run yet")
        self.run_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.run_combo.setMinimumContentsLength(12)
        self.run_combo.setToolTip("The run to generate from: this session's runs and the run "
                                  "folders added to the charts")
        self.checkpoint = QComboBox()
        self.checkpoint.addItem("Best", "best")
        self.checkpoint.addItem("Last", "last")
        self.checkpoint.setToolTip("Best: the checkpoint with the lowest validation loss; "
                                   "Last: the newest (the other is used if one is missing)")
        self.settings = SettingsForm()
        self.form = self.settings.form
        for name in ("prime", "length", "seconds", "count", "streams", "temperature", "top_k",
                     "seed", "device"):
            setattr(self, name, getattr(self.settings, name))
        self.sequences = SequenceResults(self.generate, self.busy_changed, self)
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
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setTextFormat(Qt.PlainText)
        self.hint.setStyleSheet("color: #b26a00;")
        self.hint.hide()
        settings = QWidget()
        sv = QVBoxLayout(settings)
        sv.setContentsMargins(6, 6, 6, 0)
        sv.addWidget(self.settings)
        sv.addWidget(self.sequences.forecast.controls)
        sv.addStretch(1)
        settings.setMinimumWidth(200)
        settings.setMaximumWidth(300)
        left = QWidget()  # a short dock scrolls the settings; the buttons and the summary stay
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(scrolling(settings), 1)
        below = QVBoxLayout()
        below.setContentsMargins(6, 0, 6, 6)
        below.addLayout(buttons)
        below.addWidget(self.status)
        below.addWidget(self.hint)
        lv.addLayout(below)
        left.setMaximumWidth(300)

        self.texts = TextStreams()
        self.audio = AudioView()
        self.audio.message.connect(self._audio_message)
        self.mnist_page = self._mnist_page()
        self.pages = QStackedWidget()
        for page in (self.texts, self.audio, self.mnist_page, *self.sequences.pages):
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
        self._set_kind("text")
        self._runs_changed()

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

    @property
    def text_view(self):
        """The first text stream's view."""
        return self.texts.views[0]

    def _set_kind(self, kind: str) -> None:
        self.kind = kind if kind in KINDS else "text"
        self.settings.set_kind(self.kind)
        self.go.setText(BUTTONS.get(self.kind, "Generate"))
        self.pages.setCurrentIndex(KINDS.index(self.kind))
        self.sequences.forecast.controls.setVisible(self.kind == "series")

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
        self.sequences.select(run)
        self.settings.set_trained_on(device_text(run.device, run.device_name)
                                     if run and run.device else None)
        self.go.setEnabled(run is not None and self.job is None)

    # ------------------------------------------------------------------ generating --
    @property
    def busy(self) -> bool:
        return self.job is not None

    def generate(self, extra: dict | None = None) -> bool:
        """Start generating from the selected run (``extra``: settings of a sequence run's
        job, such as a roll-out's origin); False when it cannot start."""
        extra = extra if isinstance(extra, dict) else None  # a button's "checked" is not
        run = self.current_run()
        if self.job is not None:
            return False
        if run is None:
            self.status.setText("Train a run first (or add a run folder in the charts).")
            return False
        which = checkpoint_for(run, self.checkpoint.currentData())
        job = {"kind": self.kind, "run_dir": str(run.run_dir), "which": which,
               **self.settings.job()}
        self.hint.hide()
        if self.kind == "text":
            job.update(prime=self.prime.text().replace("\\n", "\n"), length=self.length.value())
            self.chunks = self.streamed = 0
            self._scores = None
            self.texts.set_count(job["streams"])
            self.texts.start(job["prime"])
        elif self.kind == "audio":
            job.update(seconds=self.seconds.value(), path=self.audio.new_path(time.time_ns()))
            self.audio.started()
        elif self.kind in SEQUENCE_KINDS:
            job.update(self.sequences.job(self.kind), **(extra or {}))
        else:
            job.update(count=self.count.value())
        if self.kind in SEQUENCE_KINDS:
            worker = self.sequences.worker(job)
        else:
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
        self.status.setText(f"Loading run #{run.number} ({which} checkpoint)\u2026" if
                            self.kind not in SEQUENCE_KINDS else self.sequences.loading(job))
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
    def _scored(self, scores: list) -> None:
        self._scores = scores  # goes with the text that follows

    @Slot(object)
    def _text(self, pieces: list) -> None:
        self.chunks += 1
        self.streamed += len(pieces[0])
        scores, self._scores = self._scores, None
        self.texts.append(pieces, scores)

    @Slot(int, int)
    def _progress(self, done: int, total: int) -> None:
        unit = "characters" if self.kind == "text" else "samples"
        streams = self.streams.value()
        each = f" in each of {streams} streams" if streams > 1 else ""
        if self.kind == "audio":
            self.audio.advanced(done, total)
        self.status.setText(f"Generating: {done:,} of {total:,} {unit}{each}\u2026")

    @Slot(object)
    def _result(self, result: dict) -> None:
        self.result = result
        took = time.perf_counter() - self._started
        if result["kind"] in ("text", "audio"):
            self._written(result, took)
        elif result["kind"] in SEQUENCE_KINDS:
            status, line = self.sequences.show(result)
            self.status.setText(f"{status} ({took:.1f} s)")
            self.message.emit(line)
        else:
            self.digits.set_predictions(result["images"], result["predicted"], result["truth"])
            self.accuracy.setText(f"Held-out accuracy: <b>{result['accuracy']:.2%}</b> on "
                                  f"{result['evaluated']:,} digits; {self.digits.correct} of "
                                  f"{len(result['truth'])} shown are right")
            self.status.setText(f"Scored in {took:.1f} s")
            self.message.emit(f"held-out accuracy {result['accuracy']:.2%} on "
                              f"{result['evaluated']:,} digits")

    def _written(self, result: dict, took: float) -> None:
        """Status, log line and hint of a finished text or audio generation."""
        k = result["streams"]
        streams = f" x {k} streams" if k > 1 else ""
        where = "CPU" if result["device"] == "cpu" else result["device"]
        speed = (f" on {where}, {result['per_second']:,.0f} "
                 f"{'characters' if result['kind'] == 'text' else 'samples'}/s")
        if result["kind"] == "text":
            n = len(result["text"])
            what = f"{n:,} characters{streams}"
            mean = self.texts.mean_surprise(n)
            if mean is not None:
                speed += f"; the model's own surprise {mean:.2f} nats a character"
        elif result.get("stopped"):
            self.status.setText("Stopped")
            return
        else:
            self.audio.show_result(result)
            what = (f"{len(result['samples'][0]) / result['rate']:.2f} s of audio at "
                    f"{result['rate']:,} Hz{streams}")
        self.status.setText(f"{what} in {took:.1f} s{speed}"
                            + (" (stopped)" if result.get("stopped") else ""))
        self.message.emit(f"generated {what} in {result['seconds']:.2f} s{speed}"
                          + (f" ({result['graph_note']})" if result["graph_note"] != "eager"
                             else ""))
        if result.get("hint"):
            text = result["hint"][:1].upper() + result["hint"][1:]
            self.hint.setText(f"\u26a0 {text}.")
            self.hint.show()
            self.message.emit(f"hint: {result['hint']}")

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

