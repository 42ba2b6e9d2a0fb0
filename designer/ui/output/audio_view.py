"""Generated audio in the output window: a waveform per stream with its peak and RMS in dBFS,
fitted to the data or on the full scale, Play where the platform can (else the button says
why), and Save WAV, written atomically."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTemporaryDir, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QLabel,
                               QProgressBar, QPushButton, QVBoxLayout, QWidget)

from designer.ui.look import resources
from designer.ui.look.fitting import FlowLayout


class AudioView(QWidget):
    """The waveforms of the last generated audio, with Play, Save WAV and the scale.

    Signals
    -------
    message(str)
        A line for the log (a saved file, a file that could not be written).
    """

    message = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        from designer.ui.output.generation.playback import Player
        self.result: dict | None = None
        self.folder: QTemporaryDir | None = None  # where generated WAVs wait to be saved
        self.player = Player(self)
        self.player.playing_changed.connect(self._playing_changed)
        self.can_play = False  # known once there is audio to play
        self.wave = None  # a WaveformView, made when first needed (it brings pyqtgraph)
        self.progress = QProgressBar()
        self.progress.hide()
        self.note = QLabel("The waveform of the generated audio appears here.")
        self.note.setAlignment(Qt.AlignCenter)
        self.note.setWordWrap(True)
        self.holder = QVBoxLayout()
        self.holder.addWidget(self.note, 1)
        self.play = QPushButton(resources.icon("train"), "Play")
        self.play.setEnabled(False)
        self.play.setToolTip("Generate audio first")
        self.play.clicked.connect(self.toggle_play)
        self.stream = QComboBox()
        self.stream.setToolTip("The stream Play and Save WAV use")
        self.stream.hide()
        self.save = QPushButton(resources.icon("save"), "Save WAV\u2026")
        self.save.setEnabled(False)
        self.save.clicked.connect(lambda: self.save_wav())
        self.fixed = QCheckBox("Fixed \u00b11")
        self.fixed.setToolTip("Show the full scale, -1 to +1 (unticked: fit each waveform to "
                              "its samples, so quiet output still shows its shape)")
        self.fixed.toggled.connect(self._scale_changed)
        bar = QWidget()
        buttons = FlowLayout(bar)  # wraps in a narrow dock
        buttons.addWidget(self.play)
        buttons.addWidget(self.stream)
        buttons.addWidget(self.save)
        buttons.add_stretch()
        buttons.addWidget(self.fixed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.progress)
        lay.addLayout(self.holder, 1)
        lay.addWidget(bar)

    @property
    def curve(self):
        """The first stream's curve (pyqtgraph), once audio was shown."""
        return self.wave.curves[0] if self.wave is not None and self.wave.curves else None

    def new_path(self, stamp: int) -> str:
        """A fresh file name for the next generated WAV (in a folder removed at exit)."""
        if self.folder is None:
            self.folder = QTemporaryDir()
        return str(Path(self.folder.path()) / f"generated-{stamp}.wav")

    def started(self) -> None:
        self.player.stop()
        self.progress.setRange(0, 0)
        self.progress.show()

    def advanced(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def ended(self) -> None:
        self.progress.hide()

    def show_result(self, result: dict) -> None:
        """Draw the streams of a finished generation and enable Play and Save.

        ``result`` holds ``samples`` (one float array per stream), ``paths`` (their WAVs),
        ``rate`` and, when the run recorded it, ``reference_rms``.
        """
        from designer.ui.output.generation.waveforms import WaveformView
        self.result = result
        if self.wave is None:
            self.wave = WaveformView()
            self.holder.removeWidget(self.note)
            self.note.hide()
            self.holder.addWidget(self.wave, 1)
        self.wave.set_fixed(self.fixed.isChecked())
        self.wave.show_streams(result["samples"], result["rate"], result.get("reference_rms"))
        count = len(result["samples"])
        self.stream.clear()
        self.stream.addItems([f"Stream {k + 1}" for k in range(count)])
        self.stream.setVisible(count > 1)
        self.can_play, why = self.player.support()
        self.play.setToolTip(why)
        self.play.setEnabled(self.can_play)
        self.save.setEnabled(True)

    def _scale_changed(self, fixed: bool) -> None:
        if self.wave is not None:
            self.wave.set_fixed(fixed)

    def refresh_theme(self) -> None:
        """The plots follow the window's palette (light or dark)."""
        if self.wave is not None:
            self.wave.refresh_theme()

    def selected(self) -> int:
        return max(0, self.stream.currentIndex())

    def toggle_play(self) -> None:
        """Play the selected stream, or stop it while it plays."""
        if self.player.playing:
            self.player.stop()
            return
        if self.result is None or not self.can_play:
            return
        k = self.selected()
        self.player.play(self.result["samples"][k], self.result["rate"],
                         self.result["paths"][k])

    def _playing_changed(self, playing: bool) -> None:
        self.play.setText("Stop" if playing else "Play")
        self.play.setIcon(resources.icon("stop" if playing else "train"))

    def save_wav(self, target: str | None = None) -> Path | None:
        """Write the selected stream's WAV to ``target`` (asks where when not given),
        atomically; ``.wav`` is added to a name without it."""
        from designer.graph.atomic import atomic_write_bytes
        if self.result is None:
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
            atomic_write_bytes(path, Path(self.result["paths"][self.selected()]).read_bytes())
        except OSError as e:
            self.message.emit(f"{path} cannot be written ({e.strerror or e})")
            return None
        self.message.emit(f"saved generated audio to {path}")
        return path
