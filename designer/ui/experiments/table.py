"""The trials table: one row per trial of the study (number, state, each objective, each
searched parameter, the steps it trained, seconds, ms/step, device, and why a trial was pruned
or failed). A running trial's state says how far it is; an objective scored over folds is
labelled as their mean, each fold's value in its cells' tool-tips.

Rows are `TrialRow`s from the search's JSON lines or from the study's storage, kept by
number: a newer report of a trial updates its row. The best trial is bold; a pruned trial is
grey and a failed one red. Columns sort by value (numbers as numbers).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QHeaderView, QMenu,
                               QTableView)

from designer.search.analysis import FINISHED, TrialRow, fmt
from designer.ui.look import theme

SORT = Qt.UserRole
TAIL = ("steps", "seconds", "ms/step", "device", "reason")


class TrialsModel(QAbstractTableModel):
    """The rows and columns (see the module's docstring)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[TrialRow] = []
        self.objectives: list[str] = []
        self.params: list[str] = []
        self.best: int | None = None
        self.front: set = set()

    # ---------------------------------------------------------------------------- filling --
    def set_columns(self, objectives: list, params: list, keep: bool = True) -> None:
        """The objectives' and the parameters' columns (``keep``: those shown stay too)."""
        if keep:
            params = list(dict.fromkeys(list(params) + [p for p in self.params
                                                        if p not in params]))
        if (list(objectives), params) != (self.objectives, self.params):
            self.beginResetModel()
            self.objectives, self.params = list(objectives), params
            self.endResetModel()

    def upsert(self, row: TrialRow) -> None:
        """Add a trial, or update the one of the same number."""
        extra = [k for k in row.params if k not in self.params]
        if extra:
            self.set_columns(self.objectives, self.params + extra)
        for i, old in enumerate(self.rows):
            if old.number == row.number:
                self.rows[i] = old.merged(row)
                self.dataChanged.emit(self.index(i, 0), self.index(i, self.columnCount() - 1))
                return
        at = sum(r.number < row.number for r in self.rows)
        self.beginInsertRows(QModelIndex(), at, at)
        self.rows.insert(at, row)
        self.endInsertRows()

    def replace(self, rows: list) -> None:
        """Take ``rows`` (a study just read), keeping what the JSON lines said of each."""
        known = {r.number: r for r in self.rows}
        self.beginResetModel()
        self.rows = sorted(((known[r.number].merged(r) if r.number in known else r)
                            for r in rows), key=lambda r: r.number)
        self.rows += [r for n, r in known.items() if n not in {x.number for x in rows}]
        self.rows.sort(key=lambda r: r.number)
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self.rows, self.best, self.front = [], None, set()
        self.endResetModel()

    def set_best(self, number: int | None, front=()) -> None:
        self.best, self.front = number, set(front)
        if self.rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self.rows) - 1, self.columnCount() - 1))

    # -------------------------------------------------------------------------- the model --
    def headers(self) -> list[str]:
        return ["#", "state"] + self.objectives + self.params + list(TAIL)

    def rowCount(self, parent=None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self.rows)

    def columnCount(self, parent=None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self.headers())

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation != Qt.Horizontal:
            return None
        if role == Qt.DisplayRole:
            name = self.headers()[section]
            if name in self.objectives[:1] and self.folds() > 1:
                return f"{name} (mean of {self.folds()} folds)"
            return name
        if role == Qt.ToolTipRole:
            name = self.headers()[section]
            if name in self.objectives[:1] and self.folds() > 1:
                return (f"{name}: an objective of the search, each trial's the mean over "
                        f"its {self.folds()} cross-validation folds (hover a cell for each "
                        "fold's; the trial's run folder is its first fold's)")
            if name in self.objectives:
                return f"{name}: an objective of the search"
            if name == "steps":
                return "The steps each trial trained (what Use Best keeps as max_steps)"
            if name in self.params:
                return f"{name}: a searched parameter"
            if name == "state" and len(self.objectives) > 1:
                return "\u2605: on the Pareto front (no other trial is better on every objective)"
        return None

    def value(self, row: TrialRow, column: int):
        name = self.headers()[column]
        n_obj, n_par = len(self.objectives), len(self.params)
        if column == 0:
            return row.number
        if column == 1:
            return row.state
        if column < 2 + n_obj:
            return row.values.get(name)
        if column < 2 + n_obj + n_par:
            return row.params.get(name)
        return {"steps": row.steps, "seconds": row.seconds, "ms/step": row.ms_per_step,
                "device": row.device, "reason": row.reason}[name]

    def folds(self) -> int:
        """How many folds the first objective's values are means of (1: no folds)."""
        return max((len(r.folds) for r in self.rows), default=0) or 1

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        value = self.value(row, index.column())
        if role == Qt.DisplayRole:
            if value is None:
                return ""
            if index.column() == 1 and row.number in self.front and len(self.objectives) > 1:
                return f"{value} \u2605"
            if index.column() == 1 and training(row):
                return f"{value} {row.progress:.0%}"
            return str(value) if index.column() < 2 else fmt(value)
        if role == SORT:
            return value if isinstance(value, (int, float)) else ("" if value is None
                                                                  else str(value))
        if role == Qt.ForegroundRole:
            if row.state == "FAIL":
                return theme.colors.error
            if row.state in ("PRUNED", "RUNNING", "WAITING"):
                return QApplication.palette().color(QPalette.PlaceholderText)
        if role == Qt.FontRole and row.number == self.best:
            font = QFont(QApplication.font())
            font.setBold(True)
            return font
        if role == Qt.TextAlignmentRole and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.ToolTipRole:
            return self.tip(row, index.column())
        return None

    def tip(self, row: TrialRow, column: int) -> str | None:
        """What a cell's tool-tip says: a running trial's progress, each fold's value, the
        steps trained, why a trial was pruned or failed, or where its run is."""
        name = self.headers()[column]
        if column == 1 and training(row):
            return (f"Trial {row.number} is training: {row.progress:.0%} done at its last "
                    "validation")
        if name in self.objectives[:1] and row.folds:
            each = ", ".join(f"fold {i} {fmt(v)}" for i, v in enumerate(row.folds, 1))
            return (f"The mean of {len(row.folds)} folds: {each} (the run folder "
                    f"{Path(row.run_dir).name if row.run_dir else ''} is fold 1's)")
        if name == "steps" and row.steps is not None:
            planned = f" of {row.max_steps:,}" if row.max_steps and \
                row.max_steps != row.steps else ""
            return f"Trial {row.number} trained {row.steps:,}{planned} steps"
        if row.reason and column in (1, self.columnCount() - 1):
            return row.reason
        if row.run_dir:
            return f"Trial {row.number}: {row.run_dir} (double-click opens it in the charts)"
        return None


class TrialsTable(QTableView):
    """The table widget; ``trial_activated(TrialRow)`` on a double-click or Enter, or from
    its menu, as ``use_requested(TrialRow)``."""

    trial_activated = Signal(object)
    trial_selected = Signal(object)
    use_requested = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.trials = TrialsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.trials)
        self.proxy.setSortRole(SORT)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(0, Qt.AscendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.Interactive)
        header.setHighlightSections(False)
        self.activated.connect(self._activated)
        self.selectionModel().currentRowChanged.connect(self._selected)
        self.trials.modelReset.connect(self.fit_columns)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    def _menu(self, pos) -> None:
        row = self.row_at(self.indexAt(pos))
        if row is None:
            return
        menu = QMenu(self)
        menu.addAction("Open Its Run in the Charts", lambda: self.trial_activated.emit(row)) \
            .setEnabled(bool(row.run_dir))
        menu.addAction("Use These Parameters", lambda: self.use_requested.emit(row)) \
            .setEnabled(bool(row.params))
        menu.exec(self.viewport().mapToGlobal(pos))

    def row_at(self, index) -> TrialRow | None:
        if not index.isValid():
            return None
        return self.trials.rows[self.proxy.mapToSource(index).row()]

    def selected(self) -> TrialRow | None:
        return self.row_at(self.currentIndex())

    def select_number(self, number: int) -> bool:
        for i, r in enumerate(self.trials.rows):
            if r.number == number:
                self.selectRow(self.proxy.mapFromSource(self.trials.index(i, 0)).row())
                return True
        return False

    def fit_columns(self) -> None:
        self.resizeColumnsToContents()
        last = self.trials.columnCount() - 1
        for c in range(last):  # long values stay readable without taking the whole width
            self.setColumnWidth(c, min(self.columnWidth(c), 180))
        if last > 1:  # room for the longest state and the front's star
            self.setColumnWidth(1, max(self.columnWidth(1),
                                       self.fontMetrics().horizontalAdvance("COMPLETE \u2605")
                                       + 16))

    def _activated(self, index) -> None:
        row = self.row_at(index)
        if row is not None:
            self.trial_activated.emit(row)

    def _selected(self, current, previous) -> None:
        self.trial_selected.emit(self.row_at(current))


def training(row: TrialRow) -> bool:
    """Whether ``row`` is a trial training now that has said how far it is."""
    return row.state == "RUNNING" and row.progress is not None


def _ahead_of_drawn(rows: list, objective: str, best: TrialRow, facts) -> TrialRow | None:
    """The complete trial that scored better than ``best`` when ``best`` is the design as
    drawn, kept by the one-standard-error rule; else ``None``."""
    if not best.drawn:
        return None
    sign = -1.0 if facts is not None and facts.direction(objective) == "maximize" else 1.0
    better = [r for r in rows if r.state == "COMPLETE" and objective in r.values
              and sign * r.values[objective] < sign * best.values[objective]]
    return min(better, key=lambda r: (sign * r.values[objective], r.number)) if better \
        else None


def summary(rows: list, facts, objective: str | None, best: TrialRow | None,
            running: bool = False) -> str:
    """The status line: trials finished (of how many), complete, pruned, failed, the best."""
    counts = {s: sum(r.state == s for r in rows) for s in FINISHED}
    total = f" of {facts.trials}" if running and facts is not None and facts.trials else ""
    n = sum(counts.values())
    parts = [f"{n} trial{'s' * (n != 1)}{total}", f"{counts['COMPLETE']} complete"]
    parts += [f"{counts[s]} {word}" for s, word in (("PRUNED", "pruned"), ("FAIL", "failed"))
              if counts[s]]
    parts += [f"trial {r.number} at {r.progress:.0%}" for r in rows if training(r)]
    if best is not None and objective in best.values:
        parts.append(f"best {objective} {fmt(best.values[objective])} (trial {best.number})")
        ahead = _ahead_of_drawn(rows, objective, best, facts)
        if ahead is not None:  # the one-standard-error rule kept the design as drawn
            parts[-1] = (f"kept the design as drawn, {objective} "
                         f"{fmt(best.values[objective])} (trial {best.number}), within one "
                         f"standard error of trial {ahead.number}'s "
                         f"{fmt(ahead.values[objective])}")
    return ("Searching: " if running else "") + ", ".join(parts) + "."


def ensemble_note(run_dirs: list, ensemble: dict | None = None) -> str:
    """What the status line adds when the pick was trained with several seeds, or beside
    the next best designs (``ensemble``: the ``best`` event's ``trials`` and ``seeds``)."""
    if len(run_dirs) < 2:
        return ""
    names = ", ".join(Path(d).name for d in run_dirs)
    trials = (ensemble or {}).get("trials") or []
    what = (f"The designs of trials {', '.join(map(str, trials))} were trained again"
            if len(trials) > 1 else f"The pick was trained with {len(run_dirs)} seeds")
    return (f" {what} ({names}): `rnn-designer evaluate` with all of them scores the "
            "ensemble.")
