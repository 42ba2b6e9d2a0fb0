"""The layer palette: every layer type by category, with a search box.

Dragging an entry carries only its type id (in a private MIME type); the canvas looks the spec
up when it is dropped. Double-clicking (or Enter) asks for the layer to be added.
"""
from __future__ import annotations

from PySide6.QtCore import QMimeData, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPalette, QPen
from PySide6.QtWidgets import (QAbstractItemView, QLineEdit, QStyle, QStyledItemDelegate,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from designer.graph import registry
from designer.ui.editor import describe, mime
from designer.ui.look import resources, theme

SPEC_ROLE = Qt.UserRole + 1


class _Delegate(QStyledItemDelegate):
    """Two lines per layer type: its id in bold and its summary, beside a category chip."""

    def sizeHint(self, option, index) -> QSize:
        if index.data(SPEC_ROLE) is None:
            return QSize(100, 26)
        return QSize(100, 40)

    def paint(self, painter, option, index) -> None:
        type_id = index.data(SPEC_ROLE)
        if type_id is None:
            super().paint(painter, option, index)
            return
        spec = registry.get(type_id)
        pal = option.palette
        painter.save()
        r = QRectF(option.rect)
        if option.state & QStyle.State_Selected:
            painter.fillRect(r, pal.highlight())
            text, dim = pal.highlightedText().color(), pal.highlightedText().color()
        else:
            if option.state & QStyle.State_MouseOver:
                painter.fillRect(r, pal.alternateBase())
            text, dim = pal.text().color(), pal.color(QPalette.PlaceholderText)
        chip = QRectF(r.left() + 2, r.top() + 9, 4, r.height() - 18)
        painter.setPen(Qt.NoPen)
        painter.setBrush(theme.colors.category(spec.category))
        painter.drawRoundedRect(chip, 2, 2)
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(QPen(text))
        painter.drawText(QRectF(r.left() + 12, r.top() + 3, r.width() - 14, 18),
                         Qt.AlignLeft | Qt.AlignVCenter, spec.id)
        small = QFont(option.font)
        small.setPointSizeF(option.font.pointSizeF() * 0.88)
        painter.setFont(small)
        painter.setPen(QPen(dim))
        summary = QFontMetrics(small).elidedText(spec.summary, Qt.ElideRight,
                                                 int(r.width() - 16))
        painter.drawText(QRectF(r.left() + 12, r.top() + 20, r.width() - 14, 16),
                         Qt.AlignLeft | Qt.AlignVCenter, summary)
        painter.restore()


class _Tree(QTreeWidget):
    def mimeTypes(self) -> list[str]:
        return [mime.LAYER_TYPE]

    def mimeData(self, items) -> QMimeData:
        data = QMimeData()
        type_id = items[0].data(0, SPEC_ROLE) if items else None
        if type_id:
            data.setData(mime.LAYER_TYPE, type_id.encode("utf-8"))
        return data


class LayerPalette(QWidget):
    """The palette widget.

    Signals
    -------
    add_requested(str)
        The user double-clicked a layer type (or pressed Enter on it).
    """

    add_requested = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(placeholderText="Search layers\u2026", clearButtonEnabled=True)
        resources.themed(self.search.addAction(resources.icon("search"),
                                               QLineEdit.LeadingPosition), "search")
        self.tree = _Tree(headerHidden=True, rootIsDecorated=True, indentation=10)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragOnly)
        self.tree.setItemDelegate(_Delegate(self.tree))
        self.tree.setMouseTracking(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(6)
        lay.addWidget(self.search)
        lay.addWidget(self.tree)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._build()
        self.search.textChanged.connect(self.filter)
        self.search.returnPressed.connect(self._add_first_match)
        self.tree.itemActivated.connect(self._activated)

    def _build(self) -> None:
        head = QFont(self.font())
        head.setBold(True)
        for category, specs in registry.by_category().items():
            top = QTreeWidgetItem([f"{category}  ({len(specs)})"])
            top.setFlags(Qt.ItemIsEnabled)
            top.setFont(0, head)
            top.setData(0, Qt.UserRole, category)
            self.tree.addTopLevelItem(top)
            for spec in specs:
                item = QTreeWidgetItem([spec.id])
                item.setData(0, SPEC_ROLE, spec.id)
                item.setToolTip(0, describe.spec_tooltip(spec))
                item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsDragEnabled)
                top.addChild(item)
                self._items[spec.id] = item
        self.tree.expandAll()

    def item(self, type_id: str) -> QTreeWidgetItem:
        return self._items[type_id]

    def visible_types(self) -> list[str]:
        return [t for t, item in self._items.items() if not item.isHidden()]

    def filter(self, text: str) -> None:
        """Show the layer types whose id, summary or category contain every word of ``text``."""
        words = text.lower().split()
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            category = top.data(0, Qt.UserRole).lower()
            shown = 0
            for j in range(top.childCount()):
                child = top.child(j)
                spec = registry.get(child.data(0, SPEC_ROLE))
                hay = f"{spec.id} {spec.summary} {category} {spec.caffe_type}".lower()
                ok = all(w in hay for w in words)
                child.setHidden(not ok)
                shown += ok
            top.setHidden(shown == 0)
        self.tree.expandAll()

    def _activated(self, item: QTreeWidgetItem) -> None:
        type_id = item.data(0, SPEC_ROLE)
        if type_id:
            self.add_requested.emit(type_id)

    def _add_first_match(self) -> None:
        shown = self.visible_types()
        if len(shown) >= 1 and self.search.text().strip():
            self.add_requested.emit(shown[0])

    def sizeHint(self) -> QSize:
        return QSize(240, 500)
