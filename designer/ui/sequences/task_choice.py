"""New from Data's "What to learn": forecast a series (which columns, how far ahead) or
classify sequences (by which label column), guessed from the file as ``rnn-designer init``
guesses, and what ``init`` is then asked for."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QFormLayout, QGroupBox, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QRadioButton, QSpinBox,
                               QStackedWidget, QVBoxLayout, QWidget)

from designer.training.new_from_data.designs import NET_WORDS

SHOWN_CLASSES = 12
TARGET_ROWS = 5   # the target list grows to this many rows, then scrolls


class TaskChoice(QGroupBox):
    """The task and its settings for one previewed file.

    Signals
    -------
    changed()
        The task, the targets or the label column changed.
    """

    changed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__("What to learn", parent)
        self.forecast = QRadioButton("Forecast a series")
        self.forecast.setToolTip("Each row is a time step; the net reads the last rows and "
                                 "forecasts the target's next values")
        self.classify = QRadioButton("Classify sequences")
        self.classify.setToolTip("Each sequence (a line of a .ts file, or the rows of one "
                                 "series id of a long-format CSV) has a class to predict")
        self.tasks = QButtonGroup(self)
        self.tasks.addButton(self.forecast)
        self.tasks.addButton(self.classify)
        self.forecast.setChecked(True)
        self.tasks.buttonToggled.connect(self._task_changed)
        self.guess = QLabel()
        self.guess.setTextFormat(Qt.PlainText)
        self.guess.setStyleSheet("color: palette(placeholder-text);")
        self.targets = QListWidget()
        self.targets.setToolTip("The columns to forecast (tick several for a joint forecast)")
        self.targets.itemChanged.connect(lambda *_: self.changed.emit())
        self.horizon = QSpinBox()
        self.horizon.setRange(1, 100_000)
        self.horizon.setSuffix(" step ahead")
        self.horizon.setToolTip("How many rows after the last one read the net forecasts")
        self.horizon.valueChanged.connect(
            lambda v: self.horizon.setSuffix(" step ahead" if v == 1 else " steps ahead"))
        self.label = QComboBox()
        self.label.setToolTip("The column that holds each sequence's class")
        self.label.currentIndexChanged.connect(lambda *_: self.changed.emit())
        self.net = QComboBox()
        for value, words in NET_WORDS.items():
            self.net.addItem(words, value)
        self.net.setToolTip("The classifier init draws: MiniRocket's 9,996 random convolution "
                            "features of the series and 9,996 of its first difference, and "
                            "Hydra's 8,192 of competing kernels, joined, under the head that cross-validation on the training "
                            "sequences prefers (an InnerProduct solved in closed form, ridge, "
                            "or BatchNorm -> InnerProduct learned by Adam), or convolutions "
                            "beside a recurrent layer")
        self.label_first = False  # the label is the first column (or a .ts file's own)
        self.first_column: list[str] = []
        self.classes = QLabel()
        self.classes.setWordWrap(True)
        self.classes.setTextFormat(Qt.PlainText)
        self.pages = QStackedWidget()
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Target", self.targets)
        form.addRow("Horizon", self.horizon)
        self.pages.addWidget(page)
        page = QWidget()
        self.classes_form = QFormLayout(page)
        self.classes_form.setContentsMargins(0, 0, 0, 0)
        self.classes_form.addRow("Label", self.label)
        self.classes_form.addRow("Classes", self.classes)
        self.classes_form.addRow("Net", self.net)
        self.pages.addWidget(page)
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(self.forecast)
        row.addWidget(self.classify)
        row.addWidget(self.guess, 1)
        lay.addLayout(row)
        lay.addWidget(self.pages)

    # ------------------------------------------------------------------------- filling --
    def fill(self, look) -> None:
        """The choices ``look`` (a `Preview`) offers, set as ``init`` would set them; a file
        that could hold either task has neither ticked, and the question said."""
        self.tasks.blockSignals(True)
        self.tasks.setExclusive(False)
        self.forecast.setChecked(look.task == "forecast")
        self.classify.setChecked(look.task == "classify")
        self.tasks.setExclusive(True)
        self.tasks.blockSignals(False)
        if look.task == "unsure":
            self.guess.setText("(either, from the file: say which)")
            self.guess.setToolTip(look.question or "")
        else:
            self.guess.setText(f"({look.task}: guessed from the file, as rnn-designer init "
                               "guesses)")
            self.guess.setToolTip("")
        self.targets.blockSignals(True)
        self.targets.clear()
        default = look.default_target()
        for name in look.target_choices():
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if name == default else Qt.Unchecked)
            self.targets.addItem(item)
        rows = min(max(self.targets.count(), 1), TARGET_ROWS)
        row_height = self.targets.sizeHintForRow(0) if self.targets.count() else 20
        self.targets.setFixedHeight(rows * row_height + 2 * self.targets.frameWidth() + 2)
        checked = self.targets.findItems(default or "", Qt.MatchExactly)
        if checked:
            self.targets.scrollToItem(checked[0])  # the default target in sight
        self.targets.blockSignals(False)
        self.label.blockSignals(True)
        self.label.clear()
        for name in look.label_choices():
            self.label.addItem(name, name)
        if self.label.count():
            self.label.setCurrentIndex(self.label.count() - 1)  # init's default: the last
        self.label.blockSignals(False)
        self.label_first = look.one_a_line or look.task == "unsure"
        self.first_column = look.head_columns[:1]
        self.classes_form.setRowVisible(self.label, not self.label_first)
        self.forecast.setEnabled(not look.one_a_line)
        self.classify.setEnabled(look.format != "npy")
        self._task_changed()

    def _task_changed(self, *_) -> None:
        self.pages.setCurrentIndex(1 if self.classify.isChecked() else 0)
        self.pages.setVisible(self.task is not None)
        self.changed.emit()

    def show_classes(self, look) -> None:
        """The classes of the label picked, with their counts, once the file is scanned."""
        if look is None or not self.classify.isChecked():
            return
        if not look.scanned:
            self.classes.setText("counting\u2026")
            return
        label = look.columns[0].name if self.label_first and look.columns else \
            self.label.currentData()
        counts = look.class_counts(label)
        if counts is None:
            self.classes.setText("this column holds too many different values to be a label")
            return
        shown = ", ".join(f"{k} ({v:,})" for k, v in list(counts.items())[:SHOWN_CLASSES])
        more = f", \u2026 {len(counts) - SHOWN_CLASSES} more" if len(counts) > SHOWN_CLASSES \
            else ""
        unit = "sequences" if self.label_first else "rows"
        self.classes.setText(f"{len(counts)}: {shown}{more} ({unit} each)")

    # -------------------------------------------------------------------------- reading --
    @property
    def task(self) -> str | None:
        """``classify`` or ``forecast``; ``None`` while neither is ticked."""
        if self.classify.isChecked():
            return "classify"
        return "forecast" if self.forecast.isChecked() else None

    def chosen_targets(self) -> list[str]:
        return [self.targets.item(i).text() for i in range(self.targets.count())
                if self.targets.item(i).checkState() == Qt.Checked]

    def chosen_columns(self) -> list[str]:
        """The columns the task reads as its answer: the targets, or the label (none while no
        task is ticked)."""
        if self.task is None:
            return []
        if self.task == "classify":
            if self.label_first:
                return self.first_column
            return [self.label.currentData()] if self.label.currentData() else []
        return self.chosen_targets()

    def init_args(self, look) -> dict:
        """``init_project``'s ``task``, ``target`` and ``horizon`` (and a classifier's
        ``net``) for these choices."""
        if self.task == "forecast":
            return {"task": "forecast", "target": ",".join(self.chosen_targets()),
                    "horizon": self.horizon.value()}
        label = None if look.one_a_line else "" if self.label_first else \
            (self.label.currentData() or "")
        return {"task": "classify", "target": label, "horizon": None,
                "net": self.net.currentData()}
