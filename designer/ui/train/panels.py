"""The Charts and Device docks, built on first need so pyqtgraph stays out of startup.

Until then each dock shows a short note (the charts' has a Train button). The charts are
built when a run starts or a run folder is added (before that they would be empty); the
device panel also when the user brings its dock forward. Never on the way to the first paint.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QPushButton, QStackedWidget,
                               QVBoxLayout, QWidget)

from designer.ui.forms.param_form import caption
from designer.ui.look import resources
from designer.ui.runs.run import RunError

BUILD_DELAY_MS = 150


class LazyPanel(QStackedWidget):
    """A placeholder until :meth:`ensure` builds the panel (once)."""

    def __init__(self, placeholder: QWidget, parent=None) -> None:
        super().__init__(parent)
        self.panel: QWidget | None = None
        self.seen = False  # what the dock last said: in view (a tab behind another is not)
        self.addWidget(placeholder)

    def build(self) -> QWidget:
        raise NotImplementedError

    def ensure(self) -> QWidget:
        if self.panel is None:
            self.panel = self.build()
            self.addWidget(self.panel)
            self.setCurrentWidget(self.panel)
        return self.panel

    def shown(self, visible: bool) -> None:
        """Dock visibility changed: build soon after it is first shown, if still in view."""
        self.seen = visible
        if visible and self.panel is None:
            QTimer.singleShot(BUILD_DELAY_MS, self._build_if_visible)

    def _build_if_visible(self) -> None:
        if self.panel is None and self.seen and self.isVisible():
            self.ensure()


def _note(text: str, *buttons: QPushButton) -> QWidget:
    page = QWidget()
    lay = QVBoxLayout(page)
    lay.addStretch(1)
    label = caption(text)
    label.setAlignment(Qt.AlignCenter)
    label.setWordWrap(True)
    label.setMargin(12)
    lay.addWidget(label)
    if buttons:
        row = QHBoxLayout()
        row.addStretch(1)
        for b in buttons:
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
    lay.addStretch(1)
    return page


class ChartsHost(LazyPanel):
    """The Charts dock: the `ChartsPanel` once built."""

    def __init__(self, controller, parent=None) -> None:
        self.controller = controller
        train = QPushButton(resources.icon("train"), "Train")
        train.clicked.connect(lambda: controller.w.act.train.trigger())
        add = QPushButton(resources.icon("open"), "Add Run Folder\u2026")
        add.clicked.connect(self.add_folder)
        super().__init__(_note(
            "Press Train (F5) to train this net. Its loss, accuracy, learning rate and "
            "tokens/s are drawn here as it learns; every run stays listed, so a cuDNN run and "
            "an unrolled one can be compared side by side. Add Run Folder brings back an "
            "earlier run.", train, add), parent)

    def build(self) -> QWidget:
        from designer.ui.charts.plots import ChartsPanel
        panel = ChartsPanel(self.controller.runs)
        panel.add_folder_requested.connect(self.add_folder)
        return panel

    def add_folder(self, folder: str | None = None) -> bool:
        """Overlay a previous run; asks for the folder when none is given."""
        from designer.ui.runs.run_list import runs_root
        w = self.controller.w
        if not folder:
            start = runs_root()
            folder = QFileDialog.getExistingDirectory(
                w, "Add a run folder", str(start if start.is_dir() else start.parent))
            if not folder:
                return False
        try:
            run = self.controller.runs.add_folder(folder)
        except RunError as e:
            w.show_message(str(e))
            w.notify("Cannot add this run", str(e))
            return False
        self.controller.show_docks(charts_only=True)
        w.show_message(f"Added run #{run.number} from {run.run_dir}")
        return True

    def schedule(self) -> None:
        """A run has new data: the charts redraw soon (if they are built)."""
        if self.panel is not None:
            self.panel.schedule()

    def refresh_theme(self) -> None:
        if self.panel is not None:
            self.panel.refresh_theme()


class DeviceHost(LazyPanel):
    """The Device dock: the `DevicePanel` once built, watching the training device."""

    def __init__(self, controller, parent=None) -> None:
        self.controller = controller
        self.target = None
        super().__init__(_note("The training device's utilisation, memory, temperature and "
                               "power appear here (the CPU's when there is no NVIDIA GPU)."),
                         parent)

    def build(self) -> QWidget:
        from designer.ui.device.panel import DevicePanel
        panel = DevicePanel()
        panel.watch(self.target)
        return panel

    def watch(self, target) -> None:
        """Watch an NVML index or UUID, ``None`` (CUDA's first GPU) or ``"cpu"``."""
        if target == self.target and self.panel is not None:
            return
        self.target = target
        if self.panel is not None:
            self.panel.watch(target)

    def watch_training(self, device: str | None, devices: list | None = None) -> None:
        """Watch the device a run asks for or reports (``auto``, ``cpu``, ``cuda``,
        ``cuda:N``), or, for a run on several GPUs, every one of ``devices``."""
        gpus = sorted({d for d in devices or () if d.startswith("cuda")})
        if len(gpus) > 1:
            self.watch(tuple(self._monitor_of(int(d.split(":")[1]) if ":" in d else 0)
                             for d in gpus))
            return
        if device in (None, "auto"):
            if self.panel is None or self.panel.kind is None:
                self.watch(None)
            return
        if device == "cpu":
            if self.panel is None or self.panel.kind != "cpu":  # already the CPU: go on
                self.watch("cpu")
            return
        index = int(device.split(":")[1]) if ":" in device else 0
        self.watch(self._monitor_of(index))

    def _monitor_of(self, index: int):
        """The NVML index (or UUID) of the GPU CUDA calls ``cuda:index``."""
        for i in range(self.controller.device_picker.count()):
            choice = self.controller.device_picker.itemData(i)
            if choice.device == f"cuda:{index}":
                return choice.monitor
        return None if index == 0 else index

    def shutdown(self) -> None:
        if self.panel is not None:
            self.panel.shutdown()

    def refresh_theme(self) -> None:
        if self.panel is not None:
            self.panel.refresh_theme()
