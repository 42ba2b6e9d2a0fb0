"""Where the next run trains: the toolbar's device and engine pickers.

The device picker lists the GPUs NVML sees (once, after the first paint: NVML may be slow) and
follows the project's ``device`` setting when that setting changes or a project opens, not on
every training-setting edit, so a device the user picked stays picked. The window's memory
estimate follows the device and engine picked.
"""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from designer.ui.train.pickers import DevicePicker, EnginePicker, device_choices


class TrainTarget(QObject):
    """The device and engine pickers of ``window``'s Train toolbar."""

    def __init__(self, window, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.w = window
        self.device_picker = DevicePicker()
        self.engine_picker = EnginePicker()
        self._gpus_listed = False
        self._device_setting: str | None = None
        self.device_picker.picked.connect(self._changed)
        self.engine_picker.currentIndexChanged.connect(self._changed)

    def install(self, toolbar) -> None:
        """Put the pickers into ``toolbar`` and start following the project."""
        toolbar.addSeparator()
        toolbar.addWidget(QLabel(" Device "))
        toolbar.addWidget(self.device_picker)
        toolbar.addWidget(QLabel("  Engine "))
        toolbar.addWidget(self.engine_picker)
        self.w.doc.settings_changed.connect(self._settings_changed)
        self._settings_changed("training")
        self._changed()

    def device(self) -> str:
        return self.device_picker.device()

    def engine(self):
        return self.engine_picker.engine()

    def list_gpus(self) -> None:
        """Fill the device picker with the GPUs NVML lists (once)."""
        if self._gpus_listed:
            return
        self._gpus_listed = True
        from designer.monitor import list_devices
        current = self.device_picker.device()
        self.device_picker.set_choices(device_choices(list_devices()))
        self.device_picker.follow_project(self.w.doc.project.training_settings()["device"]
                                          if current == "auto" else current)

    def _settings_changed(self, section: str) -> None:
        if section in ("training", "project"):
            setting = self.w.doc.project.training_settings()["device"]
            if section == "project" or setting != self._device_setting:
                self.device_picker.follow_project(setting)
            self._device_setting = setting

    def _changed(self, *args) -> None:
        memory = getattr(self.w, "memory", None)
        if memory is not None:
            memory.set_target(self.device(), self.engine())
