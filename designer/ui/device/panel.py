"""The device panel: the training GPU through NVML (utilisation, memory, temperature, power,
fan), or, with no NVIDIA driver, the CPU and memory through psutil, with a line saying why.

The monitor is polled once a second in its own thread (NVML can stall for seconds on a
failing GPU; the window must not), and each plain `Sample` comes back through a queued
signal. Every reading is optional: a plot appears for a field once the device reports it.
The last two minutes are kept in fixed-size arrays, so memory never grows.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QMetaObject, QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (QApplication, QGraphicsItem, QHBoxLayout, QLabel, QScrollArea,
                               QVBoxLayout, QWidget)

POLL_MS = 1000         # 1 Hz
WINDOW_S = 120         # the plots show the last two minutes (at first, from the first sample)
FIRST_WINDOW_S = 20
HISTORY = WINDOW_S * 1000 // POLL_MS
PLOT_HEIGHT = 78

# field, title, unit, field holding the maximum (drawn as the y range), colour
GPU_PLOTS = (
    ("gpu_util_pct", "GPU utilisation", "%", None, "#2f7de1"),
    ("mem_used_mib", "GPU memory", "MiB", "mem_total_mib", "#7048e8"),
    ("temperature_c", "Temperature", "\u00b0C", None, "#e8590c"),
    ("power_w", "Power", "W", "power_limit_w", "#c2255c"),
    ("fan_pct", "Fan", "%", None, "#0c8599"),
)
CPU_PLOTS = (
    ("cpu_util_pct", "CPU utilisation", "%", None, "#2f7de1"),
    ("ram_used_mib", "Memory in use", "MiB", "ram_total_mib", "#7048e8"),
    ("process_rss_mib", "This process", "MiB", None, "#2e9d57"),
)
PERCENT = {"gpu_util_pct", "fan_pct", "cpu_util_pct"}


class MonitorPoller(QObject):
    """Opens a `designer.monitor` monitor and polls it on a timer; lives in its own thread.

    Signals
    -------
    opened(dict)
        ``{"kind", "device", "reason"}`` once a monitor is open.
    sampled(Sample)
        One reading per poll.
    """

    opened = Signal(object)
    sampled = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.monitor = None
        self.timer: QTimer | None = None

    @Slot(object)
    def watch(self, target) -> None:
        """Watch ``target``: an NVML index or UUID, ``None`` (CUDA's first GPU) or ``"cpu"``."""
        from designer.monitor import CpuMonitor, open_monitor
        self._close()
        if target == "cpu":  # keeps the sentence saying why no GPU is watched, if none is
            self.monitor = open_monitor(None)
            if self.monitor.kind != "cpu":
                self.monitor.close()
                self.monitor = CpuMonitor(None)
        elif isinstance(target, str):
            self.monitor = open_monitor(uuid=target)
        else:
            self.monitor = open_monitor(target)
        m = self.monitor
        self.opened.emit({"kind": m.kind, "device": m.device, "reason": m.reason})
        if self.timer is None:
            self.timer = QTimer(self)
            self.timer.timeout.connect(self.poll)
        self.timer.start(POLL_MS)
        self.poll()

    @Slot()
    def poll(self) -> None:
        if self.monitor is not None and not self.monitor.closed:
            self.sampled.emit(self.monitor.poll())

    @Slot()
    def close(self) -> None:
        if self.timer is not None:
            self.timer.stop()
        self._close()

    def _close(self) -> None:
        if self.monitor is not None:
            self.monitor.close()
            self.monitor = None


class FieldPlot:
    """One reading over the last two minutes: a caption with the current value, a small
    plot, and a fixed-size history. The plot's axes stay put (the y range changes only when
    the maximum does), so a new sample repaints the curve, not the axes."""

    def __init__(self, field: str, title: str, unit: str, max_field: str | None,
                 color: str) -> None:
        self.field, self.title, self.unit, self.max_field = field, title, unit, max_field
        self.widget = QWidget()
        box = QVBoxLayout(self.widget)
        box.setContentsMargins(0, 4, 0, 0)
        box.setSpacing(0)
        head = QHBoxLayout()
        self.title_label = QLabel(title)
        self.value_label = QLabel("\u2013")
        self.value_label.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        font = self.value_label.font()
        font.setBold(True)
        self.value_label.setFont(font)
        head.addWidget(self.title_label)
        head.addStretch(1)
        head.addWidget(self.value_label)
        self.view = pg.PlotWidget()
        self.view.setFixedHeight(PLOT_HEIGHT)
        box.addLayout(head)
        box.addWidget(self.view)
        self.plot = self.view.getPlotItem()
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.width_s = 0.0
        self.first: float | None = None
        self.plot.hideAxis("bottom")
        axis = self.plot.getAxis("left")
        axis.setWidth(42)
        axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)  # redrawn when its range moves
        c = QColor(color)
        fill = QColor(c)
        fill.setAlpha(50)
        self.curve = self.plot.plot(pen=pg.mkPen(c, width=1.5), fillLevel=0, brush=fill,
                                    antialias=False)
        self.values = np.full(HISTORY, np.nan)
        self.times = np.full(HISTORY, np.nan)
        self.top: float | None = None  # the total (memory) or limit (power), when known
        self._range: float | None = None
        self.widget.hide()

    def add(self, t: float, sample) -> None:
        value = getattr(sample, self.field)
        if value is not None and self.widget.isHidden():
            self.widget.show()
        self.values[:-1] = self.values[1:]
        self.times[:-1] = self.times[1:]
        self.values[-1] = np.nan if value is None else float(value)
        self.times[-1] = t
        top = getattr(sample, self.max_field) if self.max_field else None
        if top:
            self.top = float(top)
        if value is None:
            text = "\u2013"
        elif top:
            text = f"{value:,.0f} / {top:,.0f} {self.unit}"
        else:
            text = f"{value:,.0f} {self.unit}"
        if self.value_label.text() != text:
            self.value_label.setText(text)

    def draw(self, now: float) -> None:
        ok = np.isfinite(self.times)
        self.curve.setData(self.times[ok] - now, self.values[ok], connect="finite")
        if self.first is None and ok.any():
            self.first = float(self.times[ok][0])
        width = min(WINDOW_S, max(FIRST_WINDOW_S, now - (self.first or now)))
        if width != self.width_s:  # grows to two minutes, then stays
            self.width_s = width
            self.plot.setXRange(-width, 0, padding=0)
        if self.field in PERCENT:
            want = 100.0
        else:  # room above the peak (capped at the total), changed only when the peak moves
            finite = self.values[np.isfinite(self.values)]
            peak = float(finite.max()) if len(finite) else 1.0
            want = self._range if self._range and 0.5 * self._range < peak <= self._range \
                else max(1.0, peak * 1.25)
            if self.top:
                want = min(want, self.top)
        if want != self._range:
            self._range = want
            self.plot.setYRange(0, want, padding=0.02)


class DevicePanel(QWidget):
    """What the device is doing, polled at 1 Hz (drawn only while the panel is visible).

    Call :meth:`watch` with the device to watch; :meth:`shutdown` before the window goes.
    """

    watch_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind: str | None = None
        self.reason: str | None = None
        self.device_label = QLabel("Opening the device monitor\u2026")
        self.device_label.setWordWrap(True)
        font = self.device_label.font()
        font.setBold(True)
        self.device_label.setFont(font)
        self.reason_label = QLabel()
        self.reason_label.setWordWrap(True)
        self.reason_label.hide()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.plots: dict[str, FieldPlot] = {}
        self.plot_box = QVBoxLayout()
        self.plot_box.setSpacing(2)
        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.addWidget(self.device_label)
        lay.addWidget(self.reason_label)
        lay.addLayout(self.plot_box)
        lay.addWidget(self.summary)
        lay.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setWidget(inner)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

        self.thread = QThread(self)
        self.thread.setObjectName("device-monitor")
        self.poller = MonitorPoller()
        self.poller.moveToThread(self.thread)
        self.watch_requested.connect(self.poller.watch)
        self.poller.opened.connect(self._opened)
        self.poller.sampled.connect(self._sampled)
        self.thread.start()
        self.samples = 0
        self.last_sample = None
        self._device: str | None = None
        self.refresh_theme()

    def watch(self, target) -> None:
        """Watch an NVML index or UUID, ``None`` (the GPU CUDA calls ``cuda:0``) or ``"cpu"``."""
        self.watch_requested.emit(target)

    def shutdown(self) -> None:
        """Close the monitor and end the polling thread (waits for it)."""
        if self.thread.isRunning():
            QMetaObject.invokeMethod(self.poller, "close", Qt.BlockingQueuedConnection)
            self.thread.quit()
            self.thread.wait()

    @Slot(object)
    def _opened(self, info: dict) -> None:
        self.kind, self.reason = info["kind"], info["reason"]
        self.device_label.setText(info["device"])
        if info["reason"]:
            self.reason_label.setText(info["reason"])
            self.reason_label.show()
        else:
            self.reason_label.hide()
        specs = GPU_PLOTS if info["kind"] == "nvml" else CPU_PLOTS
        if self.plots and list(self.plots) == [spec[0] for spec in specs] and \
                info["device"] == self._device:
            return  # the same device again: keep its history
        self._device = info["device"]
        for plot in self.plots.values():
            self.plot_box.removeWidget(plot.widget)
            plot.widget.deleteLater()
        self.plots = {}
        for spec in specs:
            plot = FieldPlot(*spec)
            self.plots[spec[0]] = plot
            self.plot_box.addWidget(plot.widget)
        self.refresh_theme()

    @Slot(object)
    def _sampled(self, sample) -> None:
        self.samples += 1
        self.last_sample = sample
        visible = self.isVisible()
        for plot in self.plots.values():
            plot.add(sample.time, sample)
            if visible and not plot.widget.isHidden():
                plot.draw(sample.time)
        line = _host_line(sample)
        if self.summary.text() != line:
            self.summary.setText(line)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.last_sample is not None:
            for plot in self.plots.values():
                if not plot.widget.isHidden():
                    plot.draw(self.last_sample.time)

    def refresh_theme(self) -> None:
        pal = QApplication.palette()
        base, text = pal.color(QPalette.Base), pal.color(QPalette.Text)
        warn = "#b26b00" if base.lightness() > 128 else "#f0b43c"
        self.reason_label.setStyleSheet(f"color: {warn};")
        self.summary.setStyleSheet(f"color: {pal.color(QPalette.PlaceholderText).name()};")
        for plot in self.plots.values():
            plot.view.setBackground(base)
            axis = plot.plot.getAxis("left")
            axis.setPen(pg.mkPen(pal.color(QPalette.Mid)))
            axis.setTextPen(pg.mkPen(text))


def _host_line(sample) -> str:
    parts = []
    if sample.sm_clock_mhz is not None:
        parts.append(f"SM clock {sample.sm_clock_mhz:,.0f} MHz")
    if sample.source == "nvml" and sample.cpu_util_pct is not None:
        parts.append(f"CPU {sample.cpu_util_pct:.0f}%")
    if sample.source == "nvml" and sample.process_rss_mib is not None:
        parts.append(f"this process {sample.process_rss_mib:,.0f} MiB")
    return "  \u00b7  ".join(parts)

