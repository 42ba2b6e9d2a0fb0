""""Search over" in the Properties form: a parameter marked to be searched, and its range.

A layer's parameter (``lstm1.num_output``) or a solver setting (``solver.base_lr``) is put
into the project's ``search`` section with a range: whole numbers or numbers from low to high
(optionally in log scale, with a step), or a list of values (the choices of a choice, true
and false, or numbers typed). `SearchRangeDialog` edits one entry; the range is checked as
``rnn-designer search`` checks it (`designer.search.space.parse_space`), so what the form
accepts the search accepts. Writing or removing it is one undoable step
(`SetSearchEntry`), and the form marks the parameter while it is searched.
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from designer.graph.spec import ParamSpec
from designer.ui.editor.commands import UNSET, ModelCommand, SetSetting
from designer.ui.look import theme

REMOVE = "remove"


class SetSearchEntry(SetSetting):
    """Write (or, with ``UNSET``, remove) one entry of the project's ``search`` section."""

    def __init__(self, doc, key: str, entry) -> None:
        super().__init__(doc, "search", key, entry)
        self.setText(f"Stop searching over {key}" if entry is UNSET else
                     f"Search over {key} ({describe(entry)})")


class RenameKeepingSearch(ModelCommand):
    """Rename a layer and the search entries that name it (``lstm1.num_output`` follows
    ``lstm1``), as one step."""

    def __init__(self, doc, old: str, new: str) -> None:
        super().__init__(f"Rename {old} to {new}")
        self.doc, self.old, self.new = doc, old, new

    def _move(self, a: str, b: str) -> None:
        search = self.doc.project.search
        for key in [k for k in search if k.startswith(a + ".")]:
            search[b + key[len(a):]] = search.pop(key)
        self.doc.settings_changed.emit("search")

    def apply(self) -> None:
        self.doc.graph.rename_layer(self.old, self.new)  # raises, changing nothing, if refused
        self._move(self.old, self.new)

    def revert(self) -> None:
        self.doc.graph.rename_layer(self.new, self.old)
        self._move(self.new, self.old)


def rename_layer(doc, old: str, new: str) -> None:
    """Rename ``old`` (its search entries too, in the same step); `GraphError` if refused."""
    if any(k.startswith(old + ".") for k in doc.project.search) and new != old:
        doc.push(RenameKeepingSearch(doc, old, new))
    else:
        doc.rename(old, new)


def set_search_entry(doc, key: str, entry) -> None:
    """Put ``entry`` (a dict, or ``UNSET`` to remove it) under ``key``, undoably."""
    if doc.setting("search", key) == entry:
        return
    doc.push(SetSearchEntry(doc, key, entry))


def check_entry(project, key: str, entry: dict) -> str:
    """``""`` when ``rnn-designer search`` takes ``entry`` for ``key``, else its sentence."""
    from designer.search.space import SpaceError, parse_space
    try:
        parse_space({key: entry}, project)
    except SpaceError as e:
        return e.problems[0].removeprefix(f"{key}: ")
    return ""


def describe(entry: dict) -> str:
    """``8 to 128, log scale``, ``one of Adam, SGD``."""
    if "choice" in entry:
        return "one of " + ", ".join(_text(v) for v in entry["choice"])
    kind = "int" if "int" in entry else "float"
    lo, hi = entry[kind]
    text = f"{_text(lo)} to {_text(hi)}"
    if entry.get("step"):
        text += f" in steps of {_text(entry['step'])}"
    return text + (", log scale" if entry.get("log") else "")


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return f"{v:g}" if isinstance(v, float) else str(v)


def default_entry(spec: ParamSpec, value) -> dict:
    """A first range around ``value``: a quarter to four times it for numbers (log scale
    for a float), every choice, true and false."""
    if spec.kind == "bool":
        return {"choice": [True, False]}
    if spec.kind == "choice":
        return {"choice": list(spec.choices)}
    lo_limit = -math.inf if spec.minimum is None else spec.minimum
    hi_limit = math.inf if spec.maximum is None else spec.maximum
    if spec.kind in ("int", "dim"):
        v = value if isinstance(value, int) and value > 0 else 32
        lo, hi = max(lo_limit, max(1, v // 4)), min(hi_limit, v * 4)
        return {"int": [int(lo), int(hi)]}
    v = float(value) if isinstance(value, (int, float)) and value > 0 else 0.01
    lo, hi = max(lo_limit, v / 10), min(hi_limit, v * 10)
    if spec.below_maximum and hi >= hi_limit:
        hi = v + (hi_limit - v) / 2
    return {"float": [lo, hi], "log": lo > 0} if hi > lo else {"float": [lo_limit, hi_limit]}


class SearchRangeDialog(QDialog):
    """Edit one search entry; after ``exec()``: ``result_entry`` is the entry, ``REMOVE`` or
    ``None`` (cancelled)."""

    def __init__(self, key: str, spec: ParamSpec, entry: dict | None, value, project,
                 parent=None) -> None:
        super().__init__(parent)
        self.key, self.spec, self.project = key, spec, project
        self.numeric = spec.kind in ("int", "dim", "float")
        self.result_entry = None
        self.setWindowTitle(f"Search over {key}")
        start = entry or default_entry(spec, value)
        numeric = self.numeric
        self.mode = QComboBox()
        self.mode.addItem("From low to high", "range")
        self.mode.addItem("These values", "choice")
        self.mode.setVisible(numeric)
        self.low, self.high, self.step = QLineEdit(), QLineEdit(), QLineEdit()
        self.step.setPlaceholderText("any" if spec.kind == "float" else "1")
        self.log = QCheckBox("Log scale (each factor of ten as likely)")
        self.values = QLineEdit()
        self.values.setPlaceholderText("comma separated, as 64, 128, 256")
        self.choices = QListWidget()
        ranged = QWidget()
        rf = QFormLayout(ranged)
        rf.setContentsMargins(0, 0, 0, 0)
        rf.addRow("Low", self.low)
        rf.addRow("High", self.high)
        rf.addRow("Step", self.step)
        rf.addRow("", self.log)
        self.pages = QStackedWidget()
        self.pages.addWidget(ranged)
        self.pages.addWidget(self.values if numeric else self.choices)
        self.error = QLabel(wordWrap=True)
        self.error.setStyleSheet(f"color: {theme.colors.error.name()};")
        kind = next((k for k in ("int", "float") if k in start), None)
        if kind:
            lo, hi = start[kind]
            self.low.setText(_text(lo))
            self.high.setText(_text(hi))
            self.step.setText(_text(start["step"]) if start.get("step") else "")
            self.log.setChecked(bool(start.get("log")))
        if numeric:
            self.values.setText(", ".join(_text(v) for v in start.get("choice", [])))
            self.mode.setCurrentIndex(1 if "choice" in start else 0)
        else:
            options = [True, False] if spec.kind == "bool" else list(spec.choices)
            for option in options:
                item = QListWidgetItem(_text(option))
                item.setData(Qt.UserRole, option)
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(Qt.Checked if option in start.get("choice", options)
                                   else Qt.Unchecked)
                self.choices.addItem(item)
            self.choices.setMaximumHeight(min(200, 24 * (len(options) + 1)))
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.ok = buttons.button(QDialogButtonBox.Ok)
        self.ok.setText("Search Over It")
        self.remove = buttons.addButton("Stop Searching", QDialogButtonBox.DestructiveRole)
        self.remove.setVisible(entry is not None)
        self.remove.clicked.connect(self._remove)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"<b>{key}</b> &nbsp;({spec.allowed()})"))
        lay.addWidget(self.mode)
        lay.addWidget(self.pages)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.mode.currentIndexChanged.connect(self._changed)
        for edit in (self.low, self.high, self.step, self.values):
            edit.textChanged.connect(self._changed)
        self.log.toggled.connect(self._changed)
        self.choices.itemChanged.connect(self._changed)
        self._changed()

    def entry(self) -> dict | str:
        """The entry as typed, or a sentence saying what is wrong with it."""
        spec = self.spec
        if not self.numeric:
            picked = [self.choices.item(i).data(Qt.UserRole) for i in range(self.choices.count())
                      if self.choices.item(i).checkState() == Qt.Checked]
            return {"choice": picked} if picked else "pick at least one value"
        whole = spec.kind != "float"
        try:
            if self.mode.currentData() == "choice":
                values = [_number(v, whole) for v in self.values.text().split(",") if v.strip()]
                return {"choice": values} if values else "type at least one value"
            out = {"int" if whole else "float": [_number(self.low.text(), whole),
                                                 _number(self.high.text(), whole)]}
            if self.step.text().strip():
                out["step"] = _number(self.step.text(), whole)
        except ValueError:
            return f"{spec.name} takes {'numbers' if spec.kind == 'float' else 'whole numbers'}"
        if self.log.isChecked():
            out["log"] = True
        return out

    def _changed(self, *_) -> None:
        self.pages.setCurrentIndex(0 if self.numeric and self.mode.currentData() == "range"
                                   else 1)
        entry = self.entry()
        why = entry if isinstance(entry, str) else check_entry(self.project, self.key, entry)
        self.error.setText(why[:1].upper() + why[1:] if why else "")
        self.error.setVisible(bool(why))
        self.ok.setEnabled(not why)

    def _accept(self) -> None:
        entry = self.entry()
        if isinstance(entry, dict) and not check_entry(self.project, self.key, entry):
            self.result_entry = entry
            self.accept()

    def _remove(self) -> None:
        self.result_entry = REMOVE
        self.accept()


def _number(text: str, whole: bool):
    """``text`` as a float, or as an int when ``whole`` (``1e3`` is 1000); ValueError."""
    value = float(text.strip())
    if not math.isfinite(value) or (whole and not value.is_integer()):
        raise ValueError(text)
    return int(value) if whole else value


def edit_search(parent, doc, key: str, spec: ParamSpec, value) -> bool:
    """Open the range editor for ``key``; write or remove the entry (one undo step). True
    when something changed."""
    entry = doc.project.search.get(key)
    dialog = SearchRangeDialog(key, spec, entry, value, doc.project, parent)
    if dialog.exec() != QDialog.Accepted or dialog.result_entry is None:
        return False
    new = UNSET if dialog.result_entry == REMOVE else dialog.result_entry
    before = doc.stack.index()
    set_search_entry(doc, key, new)
    return doc.stack.index() != before
