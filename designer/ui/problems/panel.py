"""The problems panel: every error and warning of the design, in words; clicking one selects
the layer it is about, and a problem that one change mends has a Fix button that makes it (one
undoable step). Below the design's own problems, what the smoke step found on a real batch,
its traceback behind a "Details" disclosure."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (QHeaderView, QStyledItemDelegate, QToolButton, QTreeWidget,
                               QTreeWidgetItem)

from designer.graph.validate import severity
from designer.ui.look import resources, theme

EVENTS = ("layer_added", "layer_removed", "layer_renamed", "link_added", "link_removed",
          "shapes_changed", "dims_changed", "param_changed")
SMOKE_LAYER = Qt.UserRole + 1  # marks the smoke step's row


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


class WrapDelegate(QStyledItemDelegate):
    """Rows as tall as their sentence needs at the column's width (no "..." cut-offs)."""

    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view

    def sizeHint(self, option, index) -> QSize:
        size = super().sizeHint(option, index)
        width = self.view.columnWidth(index.column()) - 8
        text = index.data(Qt.DisplayRole) or ""
        if width > 40 and text:
            rect = option.fontMetrics.boundingRect(QRect(0, 0, width, 100000),
                                                   Qt.TextWordWrap, text)
            size.setHeight(max(size.height(), rect.height() + 6))
        return size


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


class ProblemsPanel(QTreeWidget):
    """A list of the graph's problems, refreshed after every change.

    Signals
    -------
    layer_clicked(str)
        A problem about a layer was clicked.
    count_changed(int, int)
        The number of errors and of warnings (the smoke step's failure counts as an error).
    fix_requested(object)
        A Fix button was pressed: the ``designer.graph.hints.Fix`` to make.
    """

    layer_clicked = Signal(str)
    count_changed = Signal(int, int)
    fix_requested = Signal(object)

    def __init__(self, doc, parent=None) -> None:
        super().__init__(parent)
        self.doc, self.graph = doc, None
        self.smoke: dict | None = None
        self.smoke_enabled = True
        self.setColumnCount(3)
        self.setHeaderLabels(["Layer", "Problem", ""])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setWordWrap(True)
        self.setUniformRowHeights(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.header().setSectionResizeMode(1, QHeaderView.Stretch)
        self.header().setSectionResizeMode(2, QHeaderView.ResizeToContents)
        self.header().setStretchLastSection(False)
        self.setTextElideMode(Qt.ElideNone)  # long sentences wrap onto more lines
        self.setItemDelegateForColumn(1, WrapDelegate(self))
        self.header().sectionResized.connect(lambda *_: self.scheduleDelayedItemsLayout())
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

    def set_smoke(self, result: dict | None) -> None:
        """Show what the smoke step found (``None``: a step is due or running)."""
        self.smoke = result
        self._timer.start()

    def refresh(self) -> None:
        """List the problems again (changes arrive in bursts; this runs once after each)."""
        self.clear()
        errors = warnings = 0
        c = theme.colors
        for p in self.graph.problems():
            sev = severity(p)
            item = self._row(p.layer, str(p), c.error if sev == "error" else c.warning,
                             error=sev == "error")
            fix = getattr(p, "fix", None)
            if fix is not None:
                self._fix_button(item, fix)
            errors += sev == "error"
            warnings += sev != "error"
        failed = self._smoke_rows(errors)
        errors += failed
        if not errors and not warnings:
            text = "No problems: the net is valid."
            if self.smoke is not None and self.smoke["status"] == "ok":
                text = (f"No problems: the net is valid, and {self.smoke['message']} in "
                        f"{self.smoke['seconds']:.2f} s.")
            item = self._row("", text, c.ok)
            item.setFlags(Qt.ItemIsEnabled)
        self.count_changed.emit(errors, warnings)

    # ------------------------------------------------------------------------ rows --
    def _row(self, layer: str | None, text: str, color: QColor, error: bool = False
             ) -> QTreeWidgetItem:
        item = QTreeWidgetItem([layer or "(net)" if layer is not None else "", text, ""])
        item.setIcon(0, _dot(color))
        item.setData(0, Qt.UserRole, layer)
        item.setToolTip(1, text)
        if error:
            item.setForeground(1, QBrush(theme.colors.error))
        self.addTopLevelItem(item)
        return item

    def _fix_button(self, item: QTreeWidgetItem, fix) -> None:
        button = QToolButton()
        button.setText("Fix")
        button.setIcon(resources.icon("fix"))
        button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        button.setAutoRaise(True)
        button.setToolTip(sentence(fix.text) + " (undoable)")
        button.clicked.connect(lambda *_, f=fix: self.fix_requested.emit(f))
        self.setItemWidget(item, 2, button)

    def _smoke_rows(self, errors: int) -> int:
        """The smoke step's row: a failure (with its Details), or a note; 1 if it failed."""
        if not self.smoke_enabled or errors:
            return 0
        c = theme.colors
        s = self.smoke
        if s is None:
            item = self._row("", "Checking the net on a real batch\u2026", c.node_dim)
            item.setFlags(Qt.ItemIsEnabled)
            return 0
        if s["status"] == "skipped":
            item = self._row("", f"Smoke step skipped: {s['message']}.", c.node_dim)
            item.setFlags(Qt.ItemIsEnabled)
            return 0
        if s["status"] != "failed":
            return 0
        item = self._row(s["layer"], sentence(s["message"]) + " (found by running a real "
                         "batch before training)", c.error, error=True)
        item.setData(0, SMOKE_LAYER, True)
        if s.get("details"):
            self.setRootIsDecorated(True)
            more = QTreeWidgetItem(["", "Details"])
            more.setFlags(Qt.ItemIsEnabled)
            trace = QTreeWidgetItem(["", s["details"].rstrip()])
            trace.setFont(1, QFont("DejaVu Sans Mono", 8))
            trace.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            more.addChild(trace)
            item.addChild(more)
        return 1

    def _clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        name = item.data(0, Qt.UserRole)
        if name and name in self.doc.graph:
            self.layer_clicked.emit(name)
