"""A form generated from ``ParamSpec``s: one row per parameter with its editor, a reset button
when the value is set explicitly, the spec's help text, and room for an error message."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QToolButton, QWidget

from designer.ui.editor.commands import UNSET
from designer.ui.look import resources, theme

from .param_editors import make_editor


def caption(text: str, parent=None, error: bool = False) -> QLabel:
    """A small word-wrapped note (help text, or an error in the error colour)."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    font = QFont(label.font())
    font.setPointSizeF(font.pointSizeF() * 0.88)
    label.setFont(font)
    pal = label.palette()
    color = theme.colors.error if error else pal.color(QPalette.PlaceholderText)
    pal.setColor(QPalette.WindowText, color)
    label.setPalette(pal)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    return label


class ParamForm(QWidget):
    """Rows for ``specs``.

    Signals
    -------
    edited(key, value)
        The user changed a value (``UNSET`` from a reset button: back to the default).
    """

    edited = Signal(str, object)

    def __init__(self, specs, parent=None, show_help: bool = True) -> None:
        super().__init__(parent)
        self.specs = {s.name: s for s in specs}
        self.editors, self.labels, self.resets, self.errors = {}, {}, {}, {}
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        row = 0
        for spec in specs:
            label = QLabel(spec.name.replace("_", " "))
            label.setToolTip(f"{spec.name}: {spec.help}")
            editor = make_editor(spec, self)
            editor.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            label.setBuddy(editor)
            reset = resources.themed(QToolButton(self, autoRaise=True), "reset")
            reset.setToolTip(f"Back to the default ({spec.default!r})")
            reset.setObjectName(f"reset_{spec.name}")
            keep = reset.sizePolicy()
            keep.setRetainSizeWhenHidden(True)
            reset.setSizePolicy(keep)
            reset.clicked.connect(lambda _=False, k=spec.name: self.edited.emit(k, UNSET))
            editor.committed.connect(lambda v, k=spec.name: self.edited.emit(k, v))
            grid.addWidget(label, row, 0, Qt.AlignRight | Qt.AlignVCenter)
            grid.addWidget(editor, row, 1)
            grid.addWidget(reset, row, 2)
            row += 1
            error = caption("", self, error=True)
            error.hide()
            grid.addWidget(error, row, 1, 1, 2)
            row += 1
            if show_help:
                grid.addWidget(caption(spec.help, self), row, 1, 1, 2)
                row += 1
            grid.setRowMinimumHeight(row, 6)
            row += 1
            self.editors[spec.name], self.labels[spec.name] = editor, label
            self.resets[spec.name], self.errors[spec.name] = reset, error

    def set_values(self, values: dict, explicit) -> None:
        """Show ``values``; ``explicit`` names the ones set rather than defaulted."""
        for key, editor in self.editors.items():
            editor.set_value(values[key])
            font = QFont(self.labels[key].font())
            font.setBold(key in explicit)
            self.labels[key].setFont(font)
            self.resets[key].setVisible(key in explicit)
            self.resets[key].setEnabled(key in explicit)

    def show_error(self, key: str, text: str) -> None:
        self.errors[key].setText(text)
        self.errors[key].setVisible(bool(text))

    def clear_errors(self) -> None:
        for label in self.errors.values():
            label.hide()
