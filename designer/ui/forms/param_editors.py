"""One editor widget per parameter kind, generated from a ``ParamSpec``.

Every editor has a ``committed(object)`` signal carrying the value the user settled on and a
``set_value(value)`` that shows a value without emitting. Spin boxes take the spec's range and
commit on Enter, focus-out or an arrow step (not on every keystroke).
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from designer.graph.spec import ParamSpec

INT32 = 2**31 - 1


class _NoStrayWheel:
    """Spin boxes and combo boxes in a scrolling form ignore the wheel unless focused."""

    def wheelEvent(self, event) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


class IntEditor(_NoStrayWheel, QSpinBox):
    committed = Signal(object)

    def __init__(self, spec: ParamSpec, parent=None) -> None:
        super().__init__(parent)
        lo = -INT32 if spec.minimum is None else int(spec.minimum)
        hi = INT32 if spec.maximum is None else int(spec.maximum)
        self.setRange(lo, hi)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self.valueChanged.connect(lambda v: self.committed.emit(int(v)))

    def set_value(self, value) -> None:
        self.blockSignals(True)
        self.setValue(int(value))
        self.blockSignals(False)


class FloatEditor(_NoStrayWheel, QDoubleSpinBox):
    """A spin box showing floats as ``%g``; wide ranges step by factors of two."""

    committed = Signal(object)

    def __init__(self, spec: ParamSpec, parent=None) -> None:
        super().__init__(parent)
        self.setDecimals(12)
        lo = -1e12 if spec.minimum is None else float(spec.minimum)
        hi = 1e12 if spec.maximum is None else float(spec.maximum)
        if spec.below_maximum:
            hi = hi - 1e-6 * max(1.0, abs(hi))
        self.setRange(lo, hi)
        self.log_steps = lo > 0 and hi / lo >= 1e4
        span = hi - lo
        self.setSingleStep(0.05 if span <= 1.0 + 1e-9 else 0.1 if span <= 1e3 else 1.0)
        self.setKeyboardTracking(False)
        self.valueChanged.connect(lambda v: self.committed.emit(float(v)))

    def textFromValue(self, value: float) -> str:
        return f"{value:.6g}"

    def valueFromText(self, text: str) -> float:
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        t = text.strip()
        if t in ("", "-", "+", ".", "-.", "e", "E") or t.lower().endswith(("e", "e-", "e+")):
            return QValidator.Intermediate, text, pos
        try:
            v = float(t)
        except ValueError:
            return QValidator.Invalid, text, pos
        if not math.isfinite(v):
            return QValidator.Invalid, text, pos
        ok = self.minimum() <= v <= self.maximum()
        return (QValidator.Acceptable if ok else QValidator.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:
        if self.log_steps and self.value() > 0:
            self.setValue(self.value() * (2.0 ** steps))
        else:
            super().stepBy(steps)

    def set_value(self, value) -> None:
        self.blockSignals(True)
        self.setValue(float(value))
        self.blockSignals(False)


class BoolEditor(QCheckBox):
    committed = Signal(object)

    def __init__(self, spec: ParamSpec, parent=None) -> None:
        super().__init__(parent)
        self.toggled.connect(lambda v: self.committed.emit(bool(v)))

    def set_value(self, value) -> None:
        self.blockSignals(True)
        self.setChecked(bool(value))
        self.blockSignals(False)


class ChoiceEditor(_NoStrayWheel, QComboBox):
    committed = Signal(object)

    def __init__(self, spec: ParamSpec, parent=None) -> None:
        super().__init__(parent)
        self.choices = list(spec.choices)
        self.addItems([str(c) for c in self.choices])
        self.currentIndexChanged.connect(lambda i: self.committed.emit(self.choices[i]))

    def set_value(self, value) -> None:
        self.blockSignals(True)
        if value in self.choices:
            self.setCurrentIndex(self.choices.index(value))
        self.blockSignals(False)


class TextEditor(QLineEdit):
    """Free text (``str``), a list of whole numbers (``ints``), a number or a dimension name
    (``dim``) or a whole number too large for a spin box."""

    committed = Signal(object)

    def __init__(self, spec: ParamSpec, parent=None) -> None:
        super().__init__(parent)
        self.kind = spec.kind
        self._shown = ""
        if spec.kind == "ints":
            self.setPlaceholderText("whole numbers, comma separated")
        elif spec.kind == "dim":
            self.setPlaceholderText("a number or a dimension such as V")
        self.editingFinished.connect(self._commit)

    def parse(self, text: str):
        t = text.strip()
        if self.kind == "ints":
            parts = [p for p in t.replace("[", "").replace("]", "").replace(" ", ",").split(",")
                     if p]
            try:
                return [int(p) for p in parts]
            except ValueError:
                return t
        if self.kind in ("dim", "int"):
            try:
                return int(t)
            except ValueError:
                return t
        return text

    def _commit(self) -> None:
        if self.text() != self._shown:
            self._shown = self.text()
            self.committed.emit(self.parse(self.text()))

    def set_value(self, value) -> None:
        if isinstance(value, (list, tuple)):
            text = ", ".join(str(v) for v in value)
        else:
            text = str(value)
        self._shown = text
        self.blockSignals(True)
        self.setText(text)
        self.blockSignals(False)


def make_editor(spec: ParamSpec, parent=None):
    """The editor widget for ``spec``."""
    if spec.kind == "int":
        fits = (spec.minimum is None or spec.minimum >= -INT32) and \
               (spec.maximum is None or spec.maximum <= INT32)
        editor = IntEditor(spec, parent) if fits else TextEditor(spec, parent)
    elif spec.kind == "float":
        editor = FloatEditor(spec, parent)
    elif spec.kind == "bool":
        editor = BoolEditor(spec, parent)
    elif spec.kind == "choice":
        editor = ChoiceEditor(spec, parent)
    else:
        editor = TextEditor(spec, parent)
    editor.setToolTip(f"{spec.help}\n({spec.allowed()})")
    editor.setFocusPolicy(Qt.StrongFocus)
    editor.setObjectName(f"param_{spec.name}")
    return editor
