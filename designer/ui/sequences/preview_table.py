"""The first rows of a data file as a table: each column headed by its name and kind (number,
time or text; once the file is scanned, its empty cells), empty cells marked, the chosen
target or label column drawn in bold."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from designer.graph.headers import is_missing

KIND_LABELS = {"number": "number", "time": "time", "text": "text"}


class PreviewModel(QAbstractTableModel):
    """The head of a `designer.training.new_from_data.preview.Preview`."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.look = None
        self.chosen: set[str] = set()

    def set_preview(self, look) -> None:
        self.beginResetModel()
        self.look = look
        self.endResetModel()

    def set_chosen(self, names) -> None:
        """Columns drawn in bold: the targets of a forecast, or the label."""
        self.chosen = set(names)
        if self.look is not None and self.columnCount():
            self.headerDataChanged.emit(Qt.Horizontal, 0, self.columnCount() - 1)
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(self.rowCount() - 1, self.columnCount() - 1))

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if self.look is None or parent.isValid() else len(self.look.head)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if self.look is None or parent.isValid() else len(self.look.head_columns)

    def _name(self, column: int) -> str:
        return self.look.head_columns[column]

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid() or self.look is None:
            return None
        row = self.look.head[index.row()]
        cell = row[index.column()] if index.column() < len(row) else ""
        table = not self.look.one_a_line
        if role == Qt.DisplayRole:
            return "(empty)" if table and is_missing(cell) else cell
        if role == Qt.ToolTipRole and table and is_missing(cell):
            return "An empty cell: init fills it in linearly (or drops its row, as the data " \
                   "layer's missing setting says); forecasts are not scored on it"
        if role == Qt.ForegroundRole and table and is_missing(cell):
            return QBrush(QColor("#c0392b"))
        if role == Qt.BackgroundRole and table and is_missing(cell):
            return QBrush(QColor(217, 59, 59, 40))
        if role == Qt.FontRole and self._name(index.column()) in self.chosen:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.TextAlignmentRole and table and self._kind(index.column()) == "number":
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def _kind(self, column: int) -> str | None:
        cols = self.look.columns
        return cols[column].kind if column < len(cols) else None

    def headerData(self, section: int, orientation, role=Qt.DisplayRole):
        if self.look is None:
            return None
        if orientation == Qt.Vertical:
            return str(section + 1) if role == Qt.DisplayRole else None
        if section >= self.columnCount():
            return None
        name = self._name(section)
        column = self.look.columns[section] if section < len(self.look.columns) else None
        if role == Qt.DisplayRole:
            if column is None:
                return name
            kind = KIND_LABELS[column.kind]
            if self.look.scanned and column.missing:
                kind += f", {column.missing:,} empty"
            return f"{name}\n{kind}"
        if role == Qt.ToolTipRole and column is not None:
            what = {"number": "numbers: an input or a target",
                    "time": "the time of each row (its spacing gives the season)",
                    "text": "text: a label or an id, not an input"}[column.kind]
            return f"{name}: {what}"
        if role == Qt.FontRole and name in self.chosen:
            font = QFont()
            font.setBold(True)
            return font
        return None


class PreviewTable(QTableView):
    """A read-only view of `PreviewModel`."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.preview_model = PreviewModel(self)
        self.setModel(self.preview_model)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.NoSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.horizontalHeader().setDefaultAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)

    def set_preview(self, look) -> None:
        self.preview_model.set_preview(look)
        self.resizeColumnsToContents()
        for i in range(self.preview_model.columnCount()):
            self.setColumnWidth(i, min(self.columnWidth(i), 260))
