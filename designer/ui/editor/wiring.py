"""Wiring ports by dragging, with live feedback.

Pressing on a port starts a wire; compatible ports in sight turn green, and hovering one that
would be refused shows why next to the cursor. Pressing on an input that is already fed picks
up that link's end: drop it on another input to move it, or on empty canvas to disconnect it.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from designer.graph.connecting import ConnectVerdict
from designer.graph.errors import GraphError
from designer.ui.editor import describe
from designer.ui.look import theme

from designer.ui.editor.link_item import route
from designer.ui.editor.node_item import PortItem

SNAP = 16.0  # how near the cursor must be to a port to aim at it
TIP_FONT = theme.font(8.5)
MAX_TIP_W = 420.0  # a tip wraps its text at this width (less on a narrow canvas)


class TipItem(QGraphicsItem):
    """A short message beside the cursor: why a port is refused, or what a link would carry."""

    def __init__(self) -> None:
        super().__init__()
        self.text, self.good, self.pending = "", True, False
        self.setZValue(20)
        self._rect = QRectF()

    def show_text(self, text: str, good: bool, at: QPointF, pending: bool = False,
                  area: QRectF | None = None) -> None:
        """Show ``text`` beside ``at``: below and to the right of it, or on whichever side
        keeps the whole tip inside ``area`` (the part of the canvas in sight)."""
        fm = QFontMetricsF(TIP_FONT)
        most = MAX_TIP_W if area is None else max(120.0, min(MAX_TIP_W, area.width() - 40))
        room = fm.boundingRect(QRectF(0, 0, most, 10_000), Qt.TextWordWrap, text)
        self.prepareGeometryChange()
        self._rect = QRectF(0, 0, room.width() + 16, room.height() + 8)
        self.text, self.good, self.pending = text, good, pending
        x, y = at.x() + 14, at.y() + 12
        if area is not None:
            w, h = self._rect.width(), self._rect.height()
            if x + w > area.right():
                x = max(area.left(), min(at.x() - 14 - w, area.right() - w))
            if y + h > area.bottom():
                y = max(area.top(), at.y() - 12 - h)
        self.setPos(x, y)
        self.setVisible(bool(text))
        self.update()

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-2, -2, 2, 2)

    def paint(self, painter, option, widget=None) -> None:
        c = theme.colors
        color = c.warning if self.pending else c.ok if self.good else c.error
        painter.setPen(QPen(color, 1.2))
        bg = QColor(c.node)
        painter.setBrush(bg)
        painter.drawRoundedRect(self._rect, 6, 6)
        painter.setFont(TIP_FONT)
        painter.setPen(color if not self.good else c.node_text)
        painter.drawText(self._rect.adjusted(8, 4, -8, -4), Qt.TextWordWrap, self.text)


class WireDrag:
    """One drag of a wire from a port; created by the scene on a press on a port."""

    def __init__(self, scene, port: PortItem) -> None:
        self.scene, self.graph = scene, scene.graph
        self.old = None
        fixed = port
        if port.is_input:
            old = self.graph.link_into(port.node.name, port.name)
            if old is not None:  # pick up the end of the existing link
                self.old = old
                fixed = scene.node(old.src).port(old.src_port, False)
                scene.link_item(old).setVisible(False)
        self.fixed = fixed
        self.from_output = not fixed.is_input
        self.wire = QGraphicsPathItem()
        pen = QPen(theme.colors.accent, 2.0, Qt.DashLine)
        pen.setCapStyle(Qt.RoundCap)
        self.wire.setPen(pen)
        self.wire.setZValue(10)
        self.tip = TipItem()
        scene.addItem(self.wire)
        scene.addItem(self.tip)
        self.tip.setVisible(False)
        self.problems: dict = {}
        self.target: PortItem | None = None
        self._mark_visible_candidates()

    # ------------------------------------------------------------------ candidates --
    def _ends(self, port: PortItem) -> tuple[str, str, str, str]:
        if self.from_output:
            return self.fixed.node.name, self.fixed.name, port.node.name, port.name
        return port.node.name, port.name, self.fixed.node.name, self.fixed.name

    def is_candidate(self, port: PortItem) -> bool:
        return port.is_input == self.from_output and port.node is not self.fixed.node

    def verdict(self, port: PortItem) -> ConnectVerdict:
        """The link to ``port`` judged with the whole layer it would feed."""
        if port.key not in self.problems:
            src, sp, dst, dp = self._ends(port)
            if self.old is not None and (dst, dp) == (self.old.dst, self.old.dst_port) and \
                    (src, sp) == (self.old.src, self.old.src_port):
                found = ConnectVerdict()  # dropped back where it was
            else:
                found = self.graph.connect_verdict(src, sp, dst, dp)
            self.problems[port.key] = found
        return self.problems[port.key]

    def problem(self, port: PortItem) -> str | None:
        """Why linking to ``port`` would be refused (``None``: it can be made)."""
        return self.verdict(port).problem

    def _mark_visible_candidates(self) -> None:
        """Green for the ports a link would leave good as a whole (not those whose layer
        still lacks another input: what they carry is checked only then)."""
        area = self.scene.visible_rect()
        for node in self.scene.nodes_in(area):
            for port in node.ports.values():
                if self.is_candidate(port) and self.verdict(port).ok:
                    port.set_state(PortItem.GOOD)

    def _port_near(self, pos: QPointF) -> PortItem | None:
        best, best_d = None, SNAP
        area = QRectF(pos.x() - SNAP, pos.y() - SNAP, 2 * SNAP, 2 * SNAP)
        for item in self.scene.items(area):
            if isinstance(item, PortItem) and self.is_candidate(item):
                d = (item.scenePos() - pos).manhattanLength()
                if d < best_d:
                    best, best_d = item, d
        return best

    # ------------------------------------------------------------------------ drag --
    def move(self, pos: QPointF) -> None:
        target = self._port_near(pos)
        if self.target is not None and self.target is not target:
            ok = self.verdict(self.target).ok
            self.target.set_state(PortItem.GOOD if ok else PortItem.NORMAL)
        self.target = target
        end = target.scenePos() if target is not None else pos
        here = self.fixed.scenePos()
        path = (route(here, end, []) if self.from_output else route(end, here, []))[0]
        self.wire.setPath(path)
        if target is None:
            self.tip.setVisible(False)
            return
        found = self.verdict(target)
        why = found.problem
        if why is None:
            target.set_state(PortItem.GOOD if found.ok else PortItem.HOVER)
            src, sp, dst, dp = self._ends(target)
            t = describe.output(self.graph, src, sp)
            text = f"{src}.{sp} \u2192 {dst}.{dp}   {'' if t is None else t}"
            if found.pending:
                text += f"\n{found.pending}"
            self.tip.show_text(text, True, pos, pending=bool(found.pending),
                               area=self.scene.visible_rect())
        else:
            target.set_state(PortItem.BAD)
            self.tip.show_text(why, False, pos, area=self.scene.visible_rect())

    def finish(self, pos: QPointF) -> str:
        """Make, move or remove the link; returns a message for the status bar."""
        self.move(pos)
        target = self.target
        doc = self.scene.doc
        self._clean_up()
        try:
            if target is None:
                if self.old is not None:
                    doc.disconnect(self.old)
                    return f"Disconnected {self.old}"
                return ""
            why = self.problem(target)
            if why is not None:
                return why
            src, sp, dst, dp = self._ends(target)
            if self.old is not None:
                if (src, sp, dst, dp) == (self.old.src, self.old.src_port, self.old.dst,
                                          self.old.dst_port):
                    return ""
                doc.reconnect(self.old, src, sp, dst, dp)
            else:
                doc.connect(src, sp, dst, dp)
            return f"Connected {src}.{sp} to {dst}.{dp}"
        except GraphError as e:
            return str(e)

    def cancel(self) -> None:
        self._clean_up()

    def _clean_up(self) -> None:
        for node in self.scene.nodes():
            for port in node.ports.values():
                port.set_state(PortItem.NORMAL)
        if self.old is not None:
            item = self.scene.link_item(self.old)
            if item is not None:
                item.setVisible(True)
        self.scene.removeItem(self.wire)
        self.scene.removeItem(self.tip)
