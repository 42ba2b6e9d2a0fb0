"""The Inspect view's controls, in two rows above its charts: which run and checkpoint, whether
to follow the run training now and how often, the layer, quantity and row order shown, and the
text to inspect (for a sequence run: which test sequence or window) with its Inspect button.
"""
from __future__ import annotations

from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QVBoxLayout, QWidget)

from designer.ui.look.fitting import FlowLayout


class InspectControls(QWidget):
    """The pickers and the text box of the Inspect view (which connects them).

    Parameters
    ----------
    every
        The steps between live updates shown at first.
    """

    def __init__(self, every: int, parent=None) -> None:
        super().__init__(parent)
        self.run_combo = QComboBox()
        self.run_combo.setMinimumContentsLength(14)
        self.run_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.run_combo.setPlaceholderText("no run yet: train one, or add a run folder")
        self.checkpoint = QComboBox()
        self.checkpoint.addItem("Best", "best")
        self.checkpoint.addItem("Last", "last")
        self.follow = QCheckBox("Follow training")
        self.follow.setChecked(True)
        self.follow.setToolTip("While a run trains, show it live: its weights are copied every "
                               "few steps and inspected on the side (training is not slowed)")
        self.every = QSpinBox()
        self.every.setRange(1, 100_000)
        self.every.setValue(every)
        self.every.setPrefix("every ")
        self.every.setSuffix(" steps")
        self.level = QComboBox()
        self.level.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.level.setToolTip("The recurrent layer (and, for stacked layers, the level) shown")
        self.quantity = QComboBox()
        self.quantity.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.order = QComboBox()
        for text, key in (("by number", "number"), ("most active first", "active"),
                          ("following the pattern first", "pattern")):
            self.order.addItem(text, key)
        self.order.setToolTip("How the heatmap's rows are ordered: by unit number, by how "
                              "much each unit changes over the text, or by how well it "
                              "follows the pattern searched for (the units listed first)")
        self.quantity.setToolTip("What the heatmap shows for every unit at every step")
        self.text = QLineEdit()
        self.text.setPlaceholderText("type text to inspect (empty: a held-out snippet of the "
                                     "run's data)")
        self.text.setClearButtonEnabled(True)
        self.text_label = QLabel("Text")
        self.go = QPushButton("Inspect")
        self.go.setDefault(True)

        pickers = QWidget()
        row1 = FlowLayout(pickers)  # wraps onto a second row where the view is narrow
        for w in (_pair("Run", self.run_combo, self.checkpoint, self.follow, self.every),
                  _pair("Layer", self.level), _pair("Show", self.quantity),
                  _pair("Units", self.order)):
            row1.addWidget(w)
        row2 = QHBoxLayout()
        row2.addWidget(self.text_label)
        row2.addWidget(self.text, 1)
        row2.addWidget(self.go)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        lay.addWidget(pickers)
        lay.addLayout(row2)


    def set_kind(self, kind: str | None) -> None:
        """Word the input box for a run of this data kind (``classes``, ``series``, text...)."""
        label, hint = PICKS.get(kind, PICKS[None])
        self.text_label.setText(label)
        self.text.setPlaceholderText(hint)


PICKS = {
    None: ("Text", "type text to inspect (empty: a held-out snippet of the run's data)"),
    "classes": ("Sequence", ("a test sequence: its number (from 0) or \u201cclass NAME\u201d "
                             "for the first of that class (empty: the first test sequence)")),
    "series": ("Window", ("a test window: its number (from 0) or the time its forecast "
                          "starts, e.g. 2001-03 (empty: the first test window)")),
}


def _pair(label: str, *widgets: QWidget) -> QWidget:
    """A label and what it names, kept together on one row."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 4, 0)
    row.addWidget(QLabel(label))
    for w in widgets:
        row.addWidget(w)
    return box
