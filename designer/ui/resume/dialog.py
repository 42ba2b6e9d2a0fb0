"""The small dialog that asks until which step a continued run trains."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox,
                               QVBoxLayout)

from designer.ui.runs.run import engines_text


class ContinueDialog(QDialog):
    """Where the run stands, where it will train, and the step to train until."""

    def __init__(self, parent, folder: Path, meta: dict, project: dict, default: int,
                 device: str, engine: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Continue the run")
        self.setMinimumWidth(520)
        step = int(meta.get("step", 0))
        name = project.get("name") or folder.name
        was = engines_text(meta.get("engines") or {})
        head = QLabel(f"<b>{name}</b><br><span style='color:gray'>{folder}</span><br>last "
                      f"checkpoint at step <b>{step:,}</b>, trained with {was} on "
                      f"{meta.get('device', '?')}")
        head.setWordWrap(True)
        head.setTextInteractionFlags(head.textInteractionFlags() | Qt.TextSelectableByMouse)
        self.until = QSpinBox()
        self.until.setRange(step + 1, 2**31 - 1)
        self.until.setSingleStep(max(1, default // 10))
        self.until.setGroupSeparatorShown(True)
        self.until.setValue(default)
        where = QLabel(f"{device}, {engine}")
        note = QLabel("A different engine than the checkpoint's converts the weights; the "
                      "optimizer then starts afresh. The run's own project and data train, in "
                      "the same folder; its metrics after the checkpoint are redone.")
        note.setWordWrap(True)
        note.setStyleSheet("color: gray")
        form = QFormLayout()
        form.addRow("Train until step", self.until)
        form.addRow("On", where)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Continue")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        lay.addSpacing(6)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(buttons)


def ask_until(window, folder: Path, meta: dict, project: dict, default: int,
              controller) -> int | None:
    """The step to train until, or ``None`` when the user cancels."""
    dialog = ContinueDialog(window, folder, meta, project, default,
                            controller.device_picker.currentText(),
                            controller.engine_picker.currentText())
    return dialog.until.value() if dialog.exec() == QDialog.Accepted else None
