"""A form generated from ``ParamSpec``s: one row per parameter with its editor, a reset button
when the value is set explicitly, the spec's help text, and room for an error message."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (QGridLayout, QLabel, QSizePolicy, QStackedWidget, QToolButton,
                               QWidget)

from designer.ui.editor.commands import UNSET
from designer.ui.look import resources, theme

from designer.ui.forms.param_editors import make_editor

SEARCHABLE = ("int", "dim", "float", "choice", "bool")  # kinds a search can vary


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
    search_requested(key)
        The parameter's "Search over" button was pressed (with ``searchable``: numbers,
        choices and switches have one).
    """

    edited = Signal(str, object)
    search_requested = Signal(str)

    def __init__(self, specs, parent=None, show_help: bool = True,
                 searchable: bool = False) -> None:
        super().__init__(parent)
        self.specs = {s.name: s for s in specs}
        self.editors, self.labels, self.resets, self.errors = {}, {}, {}, {}
        self.searches, self.searched = {}, {}  # the buttons; the captions saying the range
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
            if searchable and spec.kind in SEARCHABLE:
                grid.addWidget(self._search_button(spec.name), row, 3)
                row += 1
                self.searched[spec.name] = note = caption("", self)
                note.setStyleSheet(f"color: {theme.colors.accent.name()};")
                note.hide()
                grid.addWidget(note, row, 1, 1, 3)
            row += 1
            error = caption("", self, error=True)
            error.hide()
            grid.addWidget(error, row, 1, 1, 3)
            row += 1
            if show_help:
                grid.addWidget(caption(spec.help, self), row, 1, 1, 3)
                row += 1
            grid.setRowMinimumHeight(row, 6)
            row += 1
            self.editors[spec.name], self.labels[spec.name] = editor, label
            self.resets[spec.name], self.errors[spec.name] = reset, error

    def _search_button(self, key: str) -> QToolButton:
        button = resources.themed(QToolButton(self, autoRaise=True), "search")
        button.setObjectName(f"search_{key}")
        button.setCheckable(True)
        button.setToolTip("Search over this parameter: give it a range that rnn-designer "
                          "search tries (Search, F7)")
        button.clicked.connect(lambda _=False, k=key: self._search_clicked(k))
        self.searches[key] = button
        return button

    def _search_clicked(self, key: str) -> None:
        # the button shows what the project says; its owner changes that, undoably
        self._show_searched(key)
        self.search_requested.emit(key)

    def set_searched(self, entries: dict, describe=str) -> None:
        """Mark the parameters searched over: ``entries`` maps a key to its range, shown
        (through ``describe``) under the parameter, its name in the accent colour."""
        self._entries, self._describe = dict(entries), describe
        for key in self.searches:
            self._show_searched(key)

    def _show_searched(self, key: str) -> None:
        entries = getattr(self, "_entries", {})
        on = key in entries
        self.searches[key].setChecked(on)
        self.searched[key].setText(f"\u21c4 searched over: {self._describe(entries[key])}"
                                   if on else "")
        self.searched[key].setVisible(on)
        accent = f"color: {theme.colors.accent.name()};" if on else ""
        self.labels[key].setStyleSheet(accent)

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


class PageSized(QStackedWidget):
    """A stack as wide and high as the page it shows (a plain one takes its largest page's
    size, and the project's page was cut at the dock's edge by the layer page's width)."""

    def __init__(self) -> None:
        super().__init__()
        self.currentChanged.connect(lambda _: self.updateGeometry())

    def sizeHint(self):
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self):
        page = self.currentWidget()
        return page.minimumSizeHint() if page is not None else super().minimumSizeHint()
