"""The problems panel: every error and warning of the design, in words; clicking one selects
the layer it is about."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from designer.graph.validate import severity
from designer.ui import theme

EVENTS = ("layer_added", "layer_removed", "layer_renamed", "link_added", "link_removed",
          "shapes_changed", "dims_changed", "param_changed")


def _dot(color: QColor) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(Qt.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(Qt.NoPen)
    p.setBrush(color)
    p.drawEllipse(1, 1, 10, 10)
    p.end()
    return QIcon(pix)


class ProblemsPanel(QTreeWidget):
    """A list of the graph's problems, refreshed after every change.

    Signals
    -------
    layer_clicked(str)
        A problem about a layer was clicked.
    count_changed(int, int)
        The number of errors and of warnings.
    """

    layer_clicked = Signal(str)
    count_changed = Signal(int, int)

    def __init__(self, doc, parent=None) -> None:
        super().__init__(parent)
        self.doc, self.graph = doc, None
        self.setColumnCount(2)
        self.setHeaderLabels(["Layer", "Problem"])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setWordWrap(True)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.header().setStretchLastSection(True)
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.refresh)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        doc.graph_replaced.connect(self._bind)
        self._bind(doc.graph)

    def _bind(self, graph) -> None:
        if self.graph is not None:
            for name in EVENTS:
                getattr(self.graph, name).disconnect(self._later)
        self.graph = graph
        for name in EVENTS:
            getattr(graph, name).connect(self._later)
        self.refresh()

    def _later(self, *args) -> None:
        self._timer.start()

    def refresh(self) -> None:
        """List the problems again (changes arrive in bursts; this runs once after each)."""
        self.clear()
        errors = warnings = 0
        c = theme.colors
        for p in self.graph.problems():
            sev = severity(p)
            item = QTreeWidgetItem([p.layer or "(net)", str(p)])
            item.setIcon(0, _dot(c.error if sev == "error" else c.warning))
            item.setData(0, Qt.UserRole, p.layer)
            item.setToolTip(1, str(p))
            if sev == "error":
                errors += 1
                item.setForeground(1, QBrush(c.error))
            else:
                warnings += 1
            self.addTopLevelItem(item)
        if not errors and not warnings:
            item = QTreeWidgetItem(["", "No problems: the net is valid."])
            item.setIcon(0, _dot(c.ok))
            item.setFlags(Qt.ItemIsEnabled)
            self.addTopLevelItem(item)
        self.count_changed.emit(errors, warnings)

    def _clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        name = item.data(0, Qt.UserRole)
        if name and name in self.doc.graph:
            self.layer_clicked.emit(name)
