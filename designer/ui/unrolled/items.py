"""The items of the unrolled view: nodes, SLICE/CONCAT rails, input blobs and step groups.

They paint with a level of detail: text only when it can be read, plain boxes when zoomed
out, so 600+ nodes stay quick to draw.
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from designer.engines.expansion.expand import drawn_as
from designer.graph import dims as D
from designer.ui.look import theme

TYPE_FONT = theme.font(7.6, bold=True)
SMALL_FONT = theme.font(7.0)
MONO_FONT = theme.font(6.8, mono=True)
LOD_TEXT = 0.42
RAIL_LABEL_EVERY = 1400.0


def short(name: str) -> str:
    """``L1/unit_3`` -> ``unit_3`` (the band already says which layer)."""
    return name.split("/", 1)[1] if "/" in name else name


def color_of(node_type: str) -> QColor:
    """The colour of a node type: a cell's node is coloured as the generic node it is drawn
    as (its units alike, its own products as INNER_PRODUCT)."""
    return theme.colors.unrolled(drawn_as(node_type))


def _tint(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


class UnrolledNode(QGraphicsItem):
    """A node, a rail or an input blob of the expansion."""

    def __init__(self, view, name: str, kind: str, node_type: str, box, shape_text: str,
                 label: str = "") -> None:
        super().__init__()
        self.view, self.name, self.kind, self.node_type = view, name, kind, node_type
        self.shape_text, self.label = shape_text, label
        self.w, self.h = box.w, box.h
        self.setPos(box.x, box.y)
        self.setAcceptHoverEvents(True)
        if kind == "node":
            self.setFlags(QGraphicsItem.ItemIsMovable | QGraphicsItem.ItemSendsGeometryChanges)
            self.setCursor(Qt.OpenHandCursor)
        if kind == "rail":
            self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption)
        self.setZValue(1 if kind != "rail" else 0.5)
        if kind != "rail":  # rails are long: they paint only what is exposed
            self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_box(self, box) -> None:
        if (box.w, box.h) != (self.w, self.h):
            self.prepareGeometryChange()
            self.w, self.h = box.w, box.h
        self.setPos(box.x, box.y)

    def boundingRect(self) -> QRectF:
        return QRectF(-1, -1, self.w + 2, self.h + 2)

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionHasChanged and self.view is not None:
            self.view.node_moved(self)
        return super().itemChange(change, value)

    def hoverEnterEvent(self, event) -> None:
        if not self.toolTip() and self.view is not None:
            self.setToolTip(self.view.tooltip(self.name))

    def paint(self, painter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        c = theme.colors
        color = color_of(self.node_type)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = QRectF(0, 0, self.w, self.h)
        if self.kind == "rail":
            self._paint_rail(painter, option, c, color, rect, lod)
            return
        radius = self.h / 2 if self.kind == "input" else 6
        painter.setPen(QPen(color.darker(115), 1.2 if lod >= LOD_TEXT else 0))
        painter.setBrush(c.node if lod >= LOD_TEXT else color)
        painter.drawRoundedRect(rect, radius, radius)
        if lod < LOD_TEXT:
            return
        painter.setPen(Qt.NoPen)
        painter.setBrush(_tint(color, c.tint))
        painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), radius, radius)
        if self.kind == "input":
            painter.setFont(TYPE_FONT)
            painter.setPen(c.node_text)
            painter.drawText(rect.adjusted(10, 0, -8, 0), Qt.AlignLeft | Qt.AlignVCenter,
                             short(self.label))
            painter.setFont(MONO_FONT)
            painter.setPen(c.node_dim)
            painter.drawText(rect.adjusted(10, 0, -10, 0), Qt.AlignRight | Qt.AlignVCenter,
                             self.shape_text)
            return
        painter.setFont(TYPE_FONT)
        painter.setPen(color.darker(140) if c.name == "light" else color.lighter(140))
        painter.drawText(QRectF(8, 2, self.w - 12, 13), Qt.AlignLeft | Qt.AlignVCenter,
                         self.node_type)
        painter.setFont(SMALL_FONT)
        painter.setPen(c.node_text)
        name = QFontMetricsF(SMALL_FONT).elidedText(short(self.name), Qt.ElideRight,
                                                    self.w - 14)
        painter.drawText(QRectF(8, 14, self.w - 12, 13), Qt.AlignLeft | Qt.AlignVCenter, name)
        painter.setFont(MONO_FONT)
        painter.setPen(c.node_dim)
        painter.drawText(QRectF(8, 26, self.w - 12, 13), Qt.AlignLeft | Qt.AlignVCenter,
                         self.shape_text)

    def _paint_rail(self, painter, option, c, color, rect, lod) -> None:
        painter.setPen(QPen(color.darker(110), 1.0))
        painter.setBrush(_tint(color, 70 if c.name == "light" else 90))
        painter.drawRoundedRect(rect, self.h / 2, self.h / 2)
        if lod < LOD_TEXT:
            return
        exposed = option.exposedRect if option.exposedRect.isValid() else rect
        painter.setFont(SMALL_FONT)
        painter.setPen(c.node_text)
        start = max(0.0, (exposed.left() // RAIL_LABEL_EVERY) * RAIL_LABEL_EVERY)
        x = start
        while x < min(exposed.right(), self.w):
            painter.drawText(QRectF(x + 12, 0, 900, self.h), Qt.AlignLeft | Qt.AlignVCenter,
                             self.label)
            x += RAIL_LABEL_EVERY


class StepGroup(QGraphicsItem):
    """The background of one time step in one band; click its header to fold or unfold it."""

    def __init__(self, view, band: int, step: int, box, rows: list,
                 backward: bool = False) -> None:
        super().__init__()
        self.view, self.band, self.step, self.backward = view, band, step, backward
        self.rows = rows  # (node type, y offset of the row's centre) per row
        self.collapsed = False
        self.w, self.h = box.w, box.h
        self.setPos(box.x, box.y)
        self.setZValue(-2)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.PointingHandCursor)

    def set_box(self, box, collapsed: bool) -> None:
        self.prepareGeometryChange()
        self.w, self.h, self.collapsed = box.w, box.h, collapsed
        self.setPos(box.x, box.y)
        self.setZValue(1 if collapsed else -2)
        self.setToolTip(f"Step {self.step}: click to {'unfold' if collapsed else 'fold'} it")

    def boundingRect(self) -> QRectF:
        return QRectF(-1, -1, self.w + 2, self.h + 2)

    def mousePressEvent(self, event) -> None:
        if self.collapsed or event.pos().y() <= 24:
            self.view.toggle_step(self.step)
            event.accept()
            return
        event.ignore()

    def paint(self, painter, option, widget=None) -> None:
        c = theme.colors
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = QRectF(0, 0, self.w, self.h)
        painter.setPen(QPen(c.group_border, 1.0))
        painter.setBrush(c.group)
        painter.drawRoundedRect(rect, 8, 8)
        if self.collapsed:
            for node_type, y in self.rows:
                painter.setPen(Qt.NoPen)
                painter.setBrush(color_of(node_type))
                painter.drawRoundedRect(QRectF(self.w / 2 - 7, y - 7, 14, 14), 3, 3)
            if lod >= LOD_TEXT:
                painter.setFont(SMALL_FONT)
                painter.setPen(c.node_dim)
                painter.drawText(QRectF(0, 4, self.w, 14), Qt.AlignCenter, str(self.step))
            return
        if lod >= LOD_TEXT:
            painter.setFont(TYPE_FONT)
            painter.setPen(c.node_dim)
            text = f"\u2190 t = {self.step}" if self.backward else f"t = {self.step}"
            painter.drawText(QRectF(10, 3, self.w - 20, 18), Qt.AlignLeft | Qt.AlignVCenter,
                             text)
            painter.drawText(QRectF(10, 3, self.w - 20, 18), Qt.AlignRight | Qt.AlignVCenter,
                             "\u25be")


class Caption(QGraphicsItem):
    """A small heading on the canvas (which stacked layer a band is)."""

    def __init__(self, text: str, x: float, y: float) -> None:
        super().__init__()
        self.text = text
        self.setPos(x, y)
        self._w = QFontMetricsF(TYPE_FONT).horizontalAdvance(text) + 4

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self._w, 16)

    def paint(self, painter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < LOD_TEXT:
            return
        painter.setFont(TYPE_FONT)
        painter.setPen(theme.colors.node_dim)
        painter.drawText(self.boundingRect(), Qt.AlignLeft | Qt.AlignVCenter, self.text)


def shape_text(shape) -> str:
    return D.shape_str(shape)


def node_tooltip(exp, node) -> str:
    """Bottoms and tops of a node, with their shapes."""
    def blobs(names):
        return "<br>".join(f"&nbsp;&nbsp;{escape(b)} &nbsp;<b>{D.shape_str(exp.shapes[b])}</b>"
                           for b in names)
    where = (f"step {node.step}" if node.step is not None else "once for all steps") + \
        (f", layer {node.level + 1}" if exp.levels > 1 else "") + \
        (", backward chain" if node.direction == 1 else "")
    extra = ""
    weights = node.params.get("weights")
    if weights:
        extra = "<br>weights: " + ", ".join(
            f"{escape(w)} {D.shape_str(exp.weights[w])}" for w in weights)
    return (f"<qt><b>{escape(node.name)}</b> &nbsp;{node.type} <span style='color:gray'>"
            f"({where})</span><br>in:<br>{blobs(node.bottoms)}<br>out:<br>{blobs(node.tops)}"
            f"{extra}</qt>")
