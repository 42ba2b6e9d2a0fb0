"""A layer on the canvas: a card with its name, type and output shape, and its ports.

Inputs sit on the top edge and outputs on the bottom edge, so a net reads from top to bottom.
The item only draws what the graph says (``refresh`` re-reads it); moving it by hand moves the
item, and the scene turns the finished drag into one undoable command.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyle

from designer.ui.editor import describe
from designer.ui.editor.layout import CARD_H, CARD_W, GRID
from designer.ui.look import theme

W, H = CARD_W, CARD_H  # one size for every card: the layout spaces the cards by it
PORT_R = 5.0
LOD_TEXT = 0.45  # below this zoom the card is drawn without text

NAME_FONT = theme.font(9.5, bold=True)
TYPE_FONT = theme.font(7.5)
SHAPE_FONT = theme.font(8.0, mono=True)
PORT_FONT = theme.font(6.8)
TEXT_W = W - 24  # the width the card's lines of text have


def wrapped(text: str, font, width: float, lines: int) -> list[str]:
    """``text`` broken at spaces into at most ``lines`` lines no wider than ``width``; the
    last line ends in "…" when the text goes on."""
    fm = QFontMetricsF(font)
    words, out = text.split(" "), []
    while words and len(out) < lines - 1:
        line = words.pop(0)
        while words and fm.horizontalAdvance(f"{line} {words[0]}") <= width:
            line += " " + words.pop(0)
        if fm.horizontalAdvance(line) > width:  # a word wider than a line: cut here
            words.insert(0, line)
            break
        out.append(line)
    if words:
        out.append(fm.elidedText(" ".join(words), Qt.ElideRight, width))
    return out


class PortItem(QGraphicsItem):
    """An input or output port: a dot on the edge of its node."""

    NORMAL, GOOD, BAD, HOVER = range(4)

    def __init__(self, node: "NodeItem", name: str, is_input: bool, x: float) -> None:
        super().__init__(node)
        self.node, self.name, self.is_input = node, name, is_input
        self.state = self.NORMAL
        self.setPos(x, 0.0 if is_input else H)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CrossCursor)
        self.setZValue(2)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    @property
    def key(self) -> tuple[str, str]:
        return self.node.name, self.name

    def boundingRect(self) -> QRectF:
        return QRectF(-9, -9, 18, 18)

    def shape(self) -> QPainterPath:
        p = QPainterPath()
        p.addEllipse(QPointF(0, 0), 9, 9)  # easier to hit than it looks
        return p

    def set_state(self, state: int) -> None:
        if state != self.state:
            self.state = state
            self.update()

    def hoverEnterEvent(self, event) -> None:
        self.setToolTip(self.node.port_tooltip(self.name, self.is_input))
        if self.state == self.NORMAL:
            self.set_state(self.HOVER)

    def hoverLeaveEvent(self, event) -> None:
        if self.state == self.HOVER:
            self.set_state(self.NORMAL)

    def paint(self, painter, option, widget=None) -> None:
        c = theme.colors
        cat = c.category(self.node.category)
        r = PORT_R
        pen = QPen(cat.darker(115), 1.6)
        brush = QBrush(c.node if self.is_input else cat)
        if self.state == self.GOOD:
            pen, brush, r = QPen(c.ok, 2.4), QBrush(c.ok.lighter(150)), PORT_R + 2
        elif self.state == self.BAD:
            pen, brush = QPen(c.error, 2.0), QBrush(c.node)
        elif self.state == self.HOVER:
            r = PORT_R + 1.5
        painter.setPen(pen)
        painter.setBrush(brush)
        painter.drawEllipse(QPointF(0, 0), r, r)


class NodeItem(QGraphicsItem):
    """One layer of the graph, drawn as a card."""

    def __init__(self, graph, name: str) -> None:
        super().__init__()
        self.graph, self.name = graph, name
        spec = graph.layer(name).spec
        self.type_id, self.category = spec.id, spec.category
        self.ports: dict[tuple[bool, str], PortItem] = {}
        for is_input, ports in ((True, spec.inputs), (False, spec.outputs)):
            n = len(ports)
            for i, p in enumerate(ports):
                self.ports[(is_input, p.name)] = PortItem(self, p.name, is_input,
                                                          W * (i + 1) / (n + 1))
        self.shape_text, self.error, self.warning = "", "", ""
        self.hovered = False
        self.setFlags(QGraphicsItem.ItemIsMovable | QGraphicsItem.ItemIsSelectable |
                      QGraphicsItem.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.setPos(*graph.layer(name).pos)
        self.refresh()

    # ----------------------------------------------------------------------- model --
    def refresh(self) -> None:
        """Re-read the name, output shapes and problems from the graph."""
        self.shape_text = describe.outputs_line(self.graph, self.name)
        errors = describe.errors_of(self.graph, self.name)
        self.error = errors[0] if errors else ""
        self.update()

    def set_warning(self, text: str) -> None:
        if text != self.warning:
            self.warning = text
            self.update()

    def set_error(self, text: str) -> None:
        if text != self.error:
            self.error = text
            self.update()

    def rename(self, new: str) -> None:
        self.name = new
        self.refresh()

    def port(self, name: str, is_input: bool) -> PortItem:
        return self.ports[(is_input, name)]

    def port_pos(self, name: str, is_input: bool):
        """The scene position of a port's centre."""
        return self.ports[(is_input, name)].scenePos()

    def message_lines(self) -> list[str]:
        """The card's error, in the lines under its name (the layer's name, which the card
        shows, left out): two lines, or one on a card whose outputs are labelled at its foot;
        cut with "…" where it is longer, the whole of it in the tool-tip."""
        if not self.error:
            return []
        text = self.error
        if text.startswith(f"{self.name}: "):
            text = text[len(self.name) + 2:]
        outputs = sum(1 for is_input, _ in self.ports if not is_input)
        return wrapped("\u26a0 " + text, TYPE_FONT, TEXT_W, 1 if outputs > 1 else 2)

    def tooltip_html(self) -> str:
        """The layer's tool-tip, with every message about it whole (an error found by
        running the net too)."""
        tip = describe.layer_tooltip(self.graph, self.name)
        told = describe.errors_of(self.graph, self.name) + \
            describe.warnings_of(self.graph, self.name)
        extra = [(text, color) for text, color in ((self.error, "#d93b3b"),
                                                   (self.warning, "#c07a00"))
                 if text and text not in told]
        if extra:
            from html import escape
            tip = tip.removesuffix("</qt>") + "".join(
                f"<p style='margin:0;color:{color};margin-top:3px'>\u26a0 {escape(text)}</p>"
                for text, color in extra) + "</qt>"
        return tip

    def port_tooltip(self, port: str, is_input: bool) -> str:
        return describe.port_tooltip(self.graph, self.name, port, is_input)

    # -------------------------------------------------------------------- geometry --
    def boundingRect(self) -> QRectF:
        return QRectF(-6, -8, W + 16, H + 14)

    def shape(self) -> QPainterPath:
        p = QPainterPath()
        p.addRoundedRect(QRectF(0, 0, W, H), 8, 8)
        return p

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionChange:
            return QPointF(round(value.x() / GRID) * GRID, round(value.y() / GRID) * GRID)
        if change == QGraphicsItem.ItemPositionHasChanged:
            scene = self.scene()
            if scene is not None and hasattr(scene, "node_moved"):
                scene.node_moved(self)
        return super().itemChange(change, value)

    def hoverEnterEvent(self, event) -> None:
        self.hovered = True
        self.setToolTip(self.tooltip_html())
        self.update()

    def hoverLeaveEvent(self, event) -> None:
        self.hovered = False
        self.update()

    # ----------------------------------------------------------------------- paint --
    def paint(self, painter, option, widget=None) -> None:
        c = theme.colors
        cat = c.category(self.category)
        selected = bool(option.state & QStyle.State_Selected)
        rect = QRectF(0, 0, W, H)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        border = c.error if self.error else cat.darker(110)
        if selected:
            glow = QColor(c.accent)
            glow.setAlpha(60)
            painter.setPen(Qt.NoPen)
            painter.setBrush(glow)
            painter.drawRoundedRect(rect.adjusted(-4, -4, 4, 4), 11, 11)
            border = c.accent
        painter.setPen(QPen(border, 2.2 if (selected or self.error) else
                            (1.6 if self.hovered else 1.1)))
        painter.setBrush(c.node)
        painter.drawRoundedRect(rect, 8, 8)
        if lod < LOD_TEXT:
            painter.setPen(Qt.NoPen)
            painter.setBrush(c.error if self.error else cat)
            painter.drawRoundedRect(rect.adjusted(4, 4, -4, -4), 5, 5)
            return
        strip = QPainterPath()
        strip.addRoundedRect(rect, 8, 8)
        painter.save()
        painter.setClipPath(strip)
        painter.fillRect(QRectF(0, 0, 6, H), cat)
        painter.restore()
        self._paint_text(painter, c, cat)
        if self.error or self.warning:
            badge = c.error if self.error else c.warning
            painter.setPen(QPen(c.node, 1.5))
            painter.setBrush(badge)
            painter.drawEllipse(QPointF(W - 2, 2), 7.5, 7.5)
            painter.setPen(QColor("white"))
            painter.setFont(NAME_FONT)
            painter.drawText(QRectF(W - 10, -6, 16, 16), Qt.AlignCenter, "!")

    def _paint_text(self, painter, c, cat) -> None:
        type_font = QFontMetricsF(TYPE_FONT)
        pill_w = type_font.horizontalAdvance(self.type_id) + 12
        pill = QRectF(W - pill_w - 8, 15, pill_w, 15)
        tint = QColor(cat)
        tint.setAlpha(c.tint)
        painter.setPen(Qt.NoPen)
        painter.setBrush(tint)
        painter.drawRoundedRect(pill, 7.5, 7.5)
        painter.setFont(TYPE_FONT)
        painter.setPen(cat.darker(135) if c.name == "light" else cat.lighter(135))
        painter.drawText(pill, Qt.AlignCenter, self.type_id)
        painter.setFont(NAME_FONT)
        painter.setPen(c.node_text)
        name_w = pill.left() - 18
        name = QFontMetricsF(NAME_FONT).elidedText(self.name, Qt.ElideRight, name_w)
        painter.drawText(QRectF(14, 13, name_w, 19), Qt.AlignLeft | Qt.AlignVCenter, name)
        if self.error:
            painter.setFont(TYPE_FONT)
            painter.setPen(c.error)
            step = QFontMetricsF(TYPE_FONT).height()
            for i, line in enumerate(self.message_lines()):
                painter.drawText(QRectF(14, 31 + i * step, W - 22, step),
                                 Qt.AlignLeft | Qt.AlignVCenter, line)
        else:
            painter.setFont(SHAPE_FONT)
            painter.setPen(c.node_dim)
            text = QFontMetricsF(SHAPE_FONT).elidedText(self.shape_text, Qt.ElideRight, TEXT_W)
            painter.drawText(QRectF(14, 33, W - 22, 16), Qt.AlignLeft | Qt.AlignVCenter, text)
        painter.setFont(PORT_FONT)
        painter.setPen(c.node_dim)
        for (is_input, name), port in self.ports.items():
            many = sum(1 for (i, _) in self.ports if i == is_input) > 1
            if not many:
                continue
            x = port.pos().x()
            r = QRectF(x + 7, 1 if is_input else H - 12, 60, 11)
            painter.drawText(r, Qt.AlignLeft | Qt.AlignVCenter, name)
