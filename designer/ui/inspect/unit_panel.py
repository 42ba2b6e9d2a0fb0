"""One unit over the text (Karpathy-style) and the search for units that follow a pattern.

The unit's value at every step colours the character read at that step, blue for low and red
for high on the heatmap's scale; hovering a character gives the value. The search marks the
characters a regular expression matches and lists the units whose activation follows that
mark best (Pearson r, either sign); clicking one follows it.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPushButton, QSpinBox, QTextEdit, QVBoxLayout, QWidget)

from designer.ui.inspect.heatmap import QUANTITIES, color_map, glyph, levels_for
from designer.ui.inspect.search import PRESETS, PatternError, correlate, find_units
from designer.ui.inspect.surprise import CharToolTips


def value_color(value: float, lo: float, hi: float) -> QColor:
    """The heatmap's colour of a value, as a character background."""
    x = (value - lo) / (hi - lo) if hi > lo else 0.5
    return color_map().map(float(min(1.0, max(0.0, x))), mode="qcolor")


class UnitText(QTextEdit):
    """The text, each character coloured by one unit's value at the step that read it."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.setPlaceholderText("Click a unit on the heatmap (or pick one in the list) to see "
                                "its value over the text.")
        self.tips = CharToolTips(self)

    def show_unit(self, labels: list[str], values: np.ndarray, quantity: str,
                  unit: int, spaced: bool = False) -> tuple[float, float]:
        """Colour the text by ``values[:, unit]``; returns the colour range used (the
        heatmap's, except for c: this unit's own, symmetric around 0). ``spaced``: the
        labels are steps (numbers, times), each shown apart."""
        column = values[:, unit]
        lo, hi = levels_for(quantity, values)
        if quantity == "c":
            top = max(float(np.abs(column).max()), 1e-6)
            lo, hi = -top, top
        self.clear()
        cursor = self.textCursor()
        name = QUANTITIES.get(quantity, (quantity,))[0]
        steps = spaced or any(len(ch) != 1 for ch in labels)  # not characters
        for t, ch in enumerate(labels):
            fmt = QTextCharFormat()
            back = value_color(float(column[t]), lo, hi)
            fmt.setBackground(back)
            fmt.setForeground(QColor("#111111") if back.lightness() > 110 else QColor("#ffffff"))
            fmt.setToolTip(f"step {t} reads <b>{html.escape(glyph(ch))}</b><br>unit {unit}: "
                           f"{name} = {column[t]:+.3f}")
            if steps:
                cursor.insertText(f" {ch} ", fmt)
                cursor.insertText(" ", QTextCharFormat())
                continue
            cursor.insertText(ch if ch != "\n" else "\u21b5\n", fmt)
        self.moveCursor(QTextCursor.Start)
        return lo, hi


class UnitPanel(QWidget):
    """The unit being followed, over the text, and the pattern search.

    Signals
    -------
    unit_picked(int)
        The user chose a unit here (spin box or search result).
    """

    unit_picked = Signal(int)
    searched = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = QLabel("Unit")
        self.title.setWordWrap(True)
        self.unit = QSpinBox()
        self.unit.setPrefix("unit ")
        self.unit.setRange(0, 0)
        self.unit.setToolTip("The unit to follow (or click its row on the heatmap)")
        self.unit.valueChanged.connect(self._spun)
        self.text = UnitText()
        self.pattern = QComboBox()
        self.pattern.setEditable(True)
        self.pattern.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.pattern.setMinimumContentsLength(16)
        self.pattern.setInsertPolicy(QComboBox.NoInsert)
        for label, regex in PRESETS:
            self.pattern.addItem(f"{regex}    \u2014 {label}", regex)
        self.pattern.setCurrentIndex(-1)
        self.pattern.lineEdit().setPlaceholderText("a regular expression, e.g. [aeiou] or \\n")
        self.pattern.setToolTip("Marks the characters this regular expression matches; the "
                                "units whose value follows the mark best are listed")
        self.pattern.activated.connect(self._preset)
        self.pattern.lineEdit().returnPressed.connect(self.search)
        self.find = QPushButton("Find units")
        self.find.clicked.connect(self.search)
        self.results = QListWidget()
        self.results.setMaximumHeight(150)
        self.results.setMinimumHeight(60)
        self.text.setMinimumHeight(96)  # six lines of the text under the unit, at least
        self.results.itemClicked.connect(self._result_clicked)
        self.results.itemActivated.connect(self._result_clicked)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.PlainText)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.unit)
        search = QHBoxLayout()
        search.addWidget(self.pattern, 1)
        search.addWidget(self.find)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.addLayout(head)
        lay.addWidget(self.text, 3)
        lay.addWidget(QLabel("<b>Find units that follow a pattern</b> in the text"))
        lay.addLayout(search)
        lay.addWidget(self.message)
        lay.addWidget(self.results, 2)
        self.labels: list[str] = []
        self.values: np.ndarray | None = None
        self.quantity = "c"
        self.where = ""
        self.correlation: np.ndarray | None = None  # every unit's r with the last pattern
        self.searchable = True

    def set_data(self, labels: list[str], values: np.ndarray, quantity: str, where: str,
                 searchable: bool) -> None:
        """The level and quantity shown on the heatmap (``where`` names them)."""
        self.labels, self.values, self.quantity, self.where = list(labels), values, \
            quantity, where
        self.searchable = searchable
        self.unit.blockSignals(True)
        self.unit.setRange(0, values.shape[1] - 1)
        self.unit.blockSignals(False)
        for w in (self.pattern, self.find, self.results):
            w.setEnabled(searchable)
        if not searchable:
            self.results.clear()
            self.correlation = None
            self.message.setText("The pattern search reads text; this run's steps are not "
                                 "characters.")
        self.show_unit(self.unit.value())
        if searchable and self.pattern.currentText().strip() and self.results.count():
            self.search()

    def show_unit(self, unit: int) -> None:
        if self.values is None:
            return
        self.unit.blockSignals(True)
        self.unit.setValue(unit)
        self.unit.blockSignals(False)
        name = QUANTITIES.get(self.quantity, (self.quantity,))[0]
        lo, hi = self.text.show_unit(self.labels, self.values, self.quantity, unit,
                                     spaced=not self.searchable)
        where = "character" if self.searchable else "step"
        self.title.setText(f"<b>Unit {unit}</b> of {self.where}: its {name} at every "
                           f"{where}, blue {lo:+.2g} \u2026 white \u2026 red {hi:+.2g} "
                           f"(hover a {where} for the value)")

    def clear(self) -> None:
        """Show no unit (the run shown cannot be inspected)."""
        self.values, self.labels, self.correlation = None, [], None
        self.text.clear()
        self.results.clear()
        self.message.clear()
        self.title.setText("Unit")

    def _spun(self, unit: int) -> None:
        self.show_unit(unit)
        self.unit_picked.emit(unit)

    def _preset(self, index: int) -> None:
        regex = self.pattern.itemData(index)
        if regex is not None:
            self.pattern.setEditText(regex)
        self.search()

    def search(self) -> bool:
        """Rank the units by how well they follow the pattern typed; False when it cannot."""
        pattern = self.pattern.currentText()
        self.results.clear()
        self.correlation = None
        if self.values is None or not pattern:
            return False
        try:
            marks, ranked = find_units(self.values, "".join(self.labels), pattern)
        except PatternError as e:
            self.message.setText(str(e))
            self.searched.emit()
            return False
        self.correlation = correlate(self.values, marks)
        self.message.setText(f"{int(marks.sum())} of {len(marks)} characters match; units of "
                             f"{self.where} by correlation r with the match:")
        for unit, r in ranked:
            item = QListWidgetItem(f"unit {unit:>4}   r = {r:+.2f}   "
                                   f"{'high' if r > 0 else 'low'} inside the matches")
            item.setData(Qt.UserRole, unit)
            self.results.addItem(item)
        self.searched.emit()
        return True

    def _result_clicked(self, item: QListWidgetItem) -> None:
        unit = item.data(Qt.UserRole)
        self.show_unit(unit)
        self.unit_picked.emit(unit)
