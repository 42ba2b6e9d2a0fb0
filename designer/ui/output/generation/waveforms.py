"""Waveforms of generated audio, one plot per stream, each titled with its peak and RMS in dBFS.

The vertical axis fits the data (so quiet output still shows its shape, and its scale tells how
quiet it is); ``set_fixed(True)`` shows every plot on the full scale, -1 to +1, instead.
pyqtgraph is imported when the first waveform is drawn, never at start-up.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QVBoxLayout, QWidget

from designer.training.trained.quality import dbfs, dbfs_text, levels

LSB = 1.0 / 32768  # one step of 16-bit audio: the smallest range worth drawing


def level_text(samples, reference_rms: float | None = None) -> str:
    """``peak -3.2 dBFS · RMS -21.4 dBFS``, and the training audio's RMS when known."""
    text = str(levels(samples)).replace(", ", " \u00b7 ")
    if reference_rms:
        text += f" (training audio: RMS {dbfs_text(dbfs(reference_rms))})"
    return text


class WaveformView(QWidget):
    """Stacked waveform plots sharing one time axis."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plots: list = []
        self.curves: list = []
        self.titles: list[str] = []
        self.fixed = False
        self.canvas = None  # a pyqtgraph GraphicsLayoutWidget, made when first needed
        self._samples: list[np.ndarray] = []
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)

    def _ensure_canvas(self) -> None:
        if self.canvas is None:
            import pyqtgraph as pg
            self.canvas = pg.GraphicsLayoutWidget()
            self._lay.addWidget(self.canvas)
            self.refresh_theme()

    def show_streams(self, streams: list, rate: int, reference_rms: float | None = None) -> None:
        """Draw each stream's samples (floats in [-1, 1]) at ``rate`` samples a second."""
        import pyqtgraph as pg
        self._ensure_canvas()
        self.canvas.clear()
        self.plots, self.curves, self.titles = [], [], []
        self._samples = [np.asarray(s, dtype=np.float32) for s in streams]
        for k, samples in enumerate(self._samples):
            plot = self.canvas.addPlot(row=k, col=0)
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.hideButtons()
            plot.setMenuEnabled(False)
            plot.getAxis("bottom").enableAutoSIPrefix(False)
            if k == len(self._samples) - 1:
                plot.setLabel("bottom", "seconds")
            if self.plots:
                plot.setXLink(self.plots[0])
            title = level_text(samples, reference_rms)
            if len(self._samples) > 1:
                title = f"Stream {k + 1} \u00b7 {title}"
            plot.setTitle(title, size="9pt")
            t = np.arange(len(samples), dtype=np.float64) / rate
            self.curves.append(plot.plot(t, samples, pen=pg.mkPen("#2f7de1", width=1)))
            self.plots.append(plot)
            self.titles.append(title)
        self.refresh_theme()
        self._apply_range()

    def set_fixed(self, fixed: bool) -> None:
        """Full scale (-1 to +1) for every plot, or each plot fitted to its data."""
        self.fixed = fixed
        self._apply_range()

    def y_range(self, k: int) -> tuple[float, float]:
        """The vertical range plot ``k`` shows."""
        if self.fixed:
            return -1.0, 1.0
        peak = float(np.max(np.abs(self._samples[k]))) if self._samples[k].size else 0.0
        top = max(peak, 2 * LSB) * 1.1
        return -top, top

    def _apply_range(self) -> None:
        for k, plot in enumerate(self.plots):
            low, high = self.y_range(k)
            plot.setYRange(low, high, padding=0)

    def refresh_theme(self) -> None:
        """The plots follow the window's palette (light or dark)."""
        if self.canvas is None:
            return
        import pyqtgraph as pg
        from PySide6.QtGui import QPalette
        from PySide6.QtWidgets import QApplication
        pal = QApplication.palette()
        self.canvas.setBackground(pal.color(QPalette.Base))
        for plot in self.plots:
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
                axis.setTextPen(pg.mkPen(pal.color(QPalette.Text)))
            plot.titleLabel.setAttr("color", pal.color(QPalette.Text).name())
            plot.titleLabel.setText(plot.titleLabel.text)
