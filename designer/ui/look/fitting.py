"""Pieces that let a panel fit a laptop's screen without cutting what it says: a column that
scrolls rather than demanding its whole height, a label that elides a long line (the whole of
it in its tool-tip) rather than widening the window, and a row of controls that wraps."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import (QFrame, QLabel, QLayout, QScrollArea, QSizePolicy, QSpacerItem,
                               QWidget)


def scrolling(widget: QWidget, min_height: int = 80) -> QScrollArea:
    """``widget`` in a frameless area that scrolls up and down when it is shorter than the
    widget (as wide as the widget wants, never scrolling sideways)."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setMinimumHeight(min_height)
    width = widget.minimumSizeHint().width()
    area.setMinimumWidth(max(width, widget.minimumWidth()) +
                         area.verticalScrollBar().sizeHint().width())
    area.setMaximumWidth(widget.maximumWidth() if widget.maximumWidth() < 16_777_215 else
                         16_777_215)
    return area


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as fits, ending in "…", and the whole
    text in its tool-tip when it is cut. Its minimum width is ``min_width``: a long text never
    widens what holds it."""

    def __init__(self, text: str = "", min_width: int = 60, parent=None, **kw) -> None:
        super().__init__(parent, **kw)
        self._full = ""
        self._min_width = min_width
        self._tip = ""
        self._giving_way = False
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text or ""
        self._fit()
        self.updateGeometry()

    def text(self) -> str:
        """The whole text (what is shown may be cut)."""
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self._tip = tip
        self._fit()

    def is_cut(self) -> bool:
        return super().text() != self._full

    def give_way(self, on: bool) -> None:
        """Ask for no more than the least width (a message beside it wants the room) or,
        ``on`` False, for the whole text again."""
        if on != self._giving_way:
            self._giving_way = on
            self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        if self._giving_way:
            return self.minimumSizeHint()
        m = self.contentsMargins()
        extra = m.left() + m.right() + max(0, self.indent()) + 2
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + extra,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        m = self.contentsMargins()
        whole = self.fontMetrics().horizontalAdvance(self._full) + m.left() + m.right() + \
            max(0, self.indent()) + 2
        return QSize(min(self._min_width, whole), super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        m = self.contentsMargins()
        room = self.width() - m.left() - m.right() - max(0, self.indent()) - 2
        shown = self.fontMetrics().elidedText(self._full, Qt.ElideRight, max(room, 0)) \
            if self._full and self.fontMetrics().horizontalAdvance(self._full) > room \
            else self._full
        QLabel.setText(self, shown)
        cut = shown != self._full
        QLabel.setToolTip(self, "\n".join(t for t in (self._full if cut else "", self._tip)
                                          if t))


class FlowLayout(QLayout):
    """Widgets in a row that wraps onto more rows when the row is too narrow for them (Qt's
    flow layout example): a bar of controls never makes its panel wider than its widest
    control. A stretch item (``add_stretch``) takes the room left on its row."""

    def __init__(self, parent=None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list = []
        self._stretch: set = set()
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def add_stretch(self) -> None:
        """Room that pushes what follows to the row's right end (a row that fits)."""
        spacer = QSpacerItem(0, 0, QSizePolicy.Expanding, QSizePolicy.Minimum)
        self._stretch.add(id(spacer))
        self.addItem(spacer)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802 - Qt's name
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802 - Qt's name
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._lay_out(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._lay_out(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        m = self.contentsMargins()
        shown = [i for i in self._items if not i.isEmpty() and id(i) not in self._stretch]
        width = sum(i.sizeHint().width() for i in shown) + self.spacing() * max(0,
                                                                              len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _lay_out(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        rows, row, used = [], [], 0
        for item in self._items:
            if item.isEmpty():
                continue
            w = 0 if id(item) in self._stretch else item.sizeHint().width()
            if row and used + self.spacing() + w > area.width():
                rows.append(row)
                row, used = [], 0
            used += (self.spacing() if row else 0) + w
            row.append(item)
        if row:
            rows.append(row)
        y = area.y()
        for row in rows:
            height = max(i.sizeHint().height() for i in row)
            fixed = sum(0 if id(i) in self._stretch else i.sizeHint().width() for i in row)
            spare = max(0, area.width() - fixed - self.spacing() * (len(row) - 1))
            stretches = [i for i in row if id(i) in self._stretch]
            x = area.x()
            for item in row:
                w = (spare // len(stretches) if id(item) in self._stretch
                     else min(item.sizeHint().width(), area.width()))
                if move:
                    h = item.sizeHint().height()
                    item.setGeometry(QRect(x, y + (height - h) // 2, w, h))
                x += w + self.spacing()
            y += height + self.spacing()
        return y - self.spacing() - area.y() + m.top() + m.bottom() if rows else \
            m.top() + m.bottom()
