"""Generated audio in the output window: its waveform (pyqtgraph, made when first needed),
Play where Qt Multimedia and an output device exist (else the button says why), and Save WAV,
written atomically."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTemporaryDir, Qt, QUrl, Signal
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QVBoxLayout, QWidget)

from . import resources


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


class AudioView(QWidget):
    """The waveform of the last generated audio, with Play and Save WAV.

    Signals
    -------
    message(str)
        A line for the log (a saved file, a file that could not be written).
    """

    message = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: dict | None = None
        self.folder: QTemporaryDir | None = None  # where generated WAVs wait to be saved
        self._sound = None
        self.wave = None  # a pyqtgraph plot, made when first needed
        self.progress = QProgressBar()
        self.progress.hide()
        self.note = QLabel("The waveform of the generated audio appears here.")
        self.note.setAlignment(Qt.AlignCenter)
        self.holder = QVBoxLayout()
        self.holder.addWidget(self.note, 1)
        self.can_play, why = audio_support()
        self.play = QPushButton(resources.icon("train"), "Play")
        self.play.setEnabled(False)
        self.play.setToolTip(why)
        self.play.clicked.connect(self.play_audio)
        self.save = QPushButton(resources.icon("save"), "Save WAV\u2026")
        self.save.setEnabled(False)
        self.save.clicked.connect(lambda: self.save_wav())
        buttons = QHBoxLayout()
        buttons.addWidget(self.play)
        buttons.addWidget(self.save)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.progress)
        lay.addLayout(self.holder, 1)
        lay.addLayout(buttons)

    def new_path(self, stamp: int) -> str:
        """A fresh file for the next generated WAV (in a folder removed at exit)."""
        if self.folder is None:
            self.folder = QTemporaryDir()
        return str(Path(self.folder.path()) / f"generated-{stamp}.wav")

    def started(self) -> None:
        self.progress.setRange(0, 0)
        self.progress.show()

    def advanced(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def ended(self) -> None:
        self.progress.hide()

    def show_result(self, result: dict) -> None:
        """Draw the samples of a finished generation and enable Play and Save."""
        import numpy as np
        import pyqtgraph as pg
        self.result = result
        if self.wave is None:
            self.wave = pg.PlotWidget()
            plot = self.wave.getPlotItem()
            plot.setLabel("bottom", "seconds")
            plot.getAxis("bottom").enableAutoSIPrefix(False)
            self.refresh_theme()
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.hideButtons()
            plot.setMenuEnabled(False)
            self.curve = plot.plot(pen=pg.mkPen("#2f7de1", width=1))
            self.holder.removeWidget(self.note)
            self.note.hide()
            self.holder.addWidget(self.wave, 1)
        samples = np.asarray(result["samples"], dtype=np.float32)
        t = np.arange(len(samples), dtype=np.float64) / result["rate"]
        self.curve.setData(t, samples)
        self.wave.getPlotItem().setYRange(-1, 1)
        self.play.setEnabled(self.can_play)
        self.save.setEnabled(True)

    def refresh_theme(self) -> None:
        """The plot follows the window's palette (light or dark)."""
        if self.wave is None:
            return
        import pyqtgraph as pg
        from PySide6.QtGui import QPalette
        from PySide6.QtWidgets import QApplication
        pal = QApplication.palette()
        self.wave.setBackground(pal.color(QPalette.Base))
        for side in ("left", "bottom"):
            axis = self.wave.getPlotItem().getAxis(side)
            axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
            axis.setTextPen(pg.mkPen(pal.color(QPalette.Text)))

    def play_audio(self) -> None:
        if self.result is None or not self.can_play:
            return
        from PySide6.QtMultimedia import QSoundEffect
        self._sound = QSoundEffect(self)
        self._sound.setSource(QUrl.fromLocalFile(self.result["path"]))
        self._sound.play()

    def save_wav(self, target: str | None = None) -> Path | None:
        """Write the generated WAV to ``target`` (asks where when not given), atomically;
        ``.wav`` is added to a name without it."""
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
            atomic_write_bytes(path, Path(self.result["path"]).read_bytes())
        except OSError as e:
            self.message.emit(f"{path} cannot be written ({e.strerror or e})")
            return None
        self.message.emit(f"saved generated audio to {path}")
        return path
