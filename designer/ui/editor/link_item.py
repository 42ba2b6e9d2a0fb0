"""A link on the canvas: a curve from an output port down to an input port, labelled with the
shape of the tensor it carries.

A link whose straight course would cross other layers takes a lane beside them instead. A link
into a port whose layer rejects what it carries is drawn in the error colour.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyle

from designer.ui.editor import describe
from designer.ui.look import theme

LABEL_FONT = theme.font(7.2, mono=True)
LANE_GAP = 22.0
CORNER = 10.0


def rounded_polyline(points: list[QPointF], radius: float = CORNER) -> QPainterPath:
    """A path through ``points`` with its corners rounded."""
    path = QPainterPath(points[0])
    for i in range(1, len(points) - 1):
        a, b, c = points[i - 1], points[i], points[i + 1]
        r = min(radius, _dist(a, b) / 2, _dist(b, c) / 2)
        path.lineTo(_toward(b, a, r))
        path.quadTo(b, _toward(b, c, r))
    path.lineTo(points[-1])
    return path


def _dist(a: QPointF, b: QPointF) -> float:
    return ((a.x() - b.x()) ** 2 + (a.y() - b.y()) ** 2) ** 0.5


def _toward(a: QPointF, b: QPointF, r: float) -> QPointF:
    d = _dist(a, b)
    if d == 0:
        return QPointF(a)
    return QPointF(a.x() + (b.x() - a.x()) * r / d, a.y() + (b.y() - a.y()) * r / d)


def route(p1: QPointF, p2: QPointF, obstacles: list[QRectF], lane: int = 0, boxes_in=None):
    """The course of a link from ``p1`` (an output, below its node) to ``p2`` (an input).

    A link with ``obstacles`` (boxes of layers in its way) takes a lane beside them; when
    ``boxes_in(rect)`` is given, the lane also steps past layers standing where it runs.
    Returns ``(path, label_point, vertical)``: a link in a lane is labelled along the lane.
    """
    dy = p2.y() - p1.y()
    if obstacles and dy > 0:
        left = min(r.left() for r in obstacles)
        right = max(r.right() for r in obstacles)
        mid = (p1.x() + p2.x()) / 2
        go_right = mid >= (left + right) / 2
        x = right + LANE_GAP * (lane + 1) if go_right else left - LANE_GAP * (lane + 1)
        ya, yb = p1.y() + 16, p2.y() - 16
        for _ in range(8 if boxes_in is not None else 0):
            hit = boxes_in(QRectF(x - 14, ya, 28, yb - ya))
            if not hit:
                break
            x = (max(r.right() for r in hit) + LANE_GAP) if go_right else \
                (min(r.left() for r in hit) - LANE_GAP)
        pts = [p1, QPointF(p1.x(), ya), QPointF(x, ya), QPointF(x, yb), QPointF(p2.x(), yb), p2]
        return rounded_polyline(pts), QPointF(x, (ya + yb) / 2), True
    path = QPainterPath(p1)
    if dy > 20:
        d = max(25.0, min(dy * 0.5, 120.0))
    else:  # into a layer above: leave downwards, come round, enter from above
        d = 70.0 + min(abs(dy), 300.0) * 0.3
    path.cubicTo(QPointF(p1.x(), p1.y() + d), QPointF(p2.x(), p2.y() - d), p2)
    return path, path.pointAtPercent(0.5), False


def separate_labels(links) -> None:
    """Move each curve's label sideways off the labels placed before it: two links from
    neighbouring ports, as a data layer's data and lengths, meet at the same height, and a
    new link may cross a lane's label. The labels along lanes stay where they are (placed
    first); a curve's label moves right, past whatever it would cover."""
    rows: dict[int, list[QRectF]] = {}  # the placed labels by the 16 px rows they span

    def spanned(rect: QRectF) -> range:
        return range(int(rect.top() // 16), int(rect.bottom() // 16) + 1)

    def near(rect: QRectF) -> list[QRectF]:
        return [o for r in spanned(rect) for o in rows.get(r, ()) if rect.intersects(o)]

    order = sorted(links, key=lambda k: (not k.vertical, k.label_at.x(), k.label_at.y()))
    for item in order:
        label = item.label_item
        if not label.wanted:
            continue
        rect = label.sceneBoundingRect()
        start = rect.left()
        while not item.vertical and (hit := near(rect)):
            rect.moveLeft(max(o.right() for o in hit) + 2)
        if rect.left() != start:
            item.shift_label(rect.left() - start)
        for r in spanned(rect):
            rows.setdefault(r, []).append(rect)


class LinkLabel(QGraphicsItem):
    """The shape a link carries, in a pill; above every line, below every layer."""

    def __init__(self, link: "LinkItem") -> None:
        super().__init__()
        self.link = link
        self.rect = QRectF()
        self.wanted = True  # False where another link's label already names the lane
        self.setZValue(-0.5)
        self.setAcceptedMouseButtons(Qt.NoButton)  # clicks go to the link underneath
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def place(self, text: str, at: QPointF, vertical: bool) -> None:
        fm = QFontMetricsF(LABEL_FONT)
        w, h = fm.horizontalAdvance(text) + 10, fm.height() + 3
        if vertical:  # along a lane: turned a quarter, so neighbouring lanes stay clear
            w, h = h, w
        self.prepareGeometryChange()
        self.rect = QRectF(-w / 2, -h / 2, w, h)
        self.setPos(at)
        self.update()

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-1, -1, 1, 1)

    def paint(self, painter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < 0.45:
            return
        c, link = theme.colors, self.link
        color = c.error if link.problem else c.accent if link.isSelected() else c.link
        rect = self.rect
        if link.vertical:
            painter.rotate(-90)
            rect = QRectF(-rect.height() / 2, -rect.width() / 2, rect.height(), rect.width())
        painter.setPen(QPen(color, 1.0))
        painter.setBrush(QColor(c.link_label))
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setFont(LABEL_FONT)
        painter.setPen(c.error if link.problem else c.node_dim)
        painter.drawText(rect, Qt.AlignCenter, link.label)


class LinkItem(QGraphicsItem):
    """The drawing of one ``Link``; its label is a separate item (:attr:`label_item`) so that
    no line is drawn over a label. The scene adds and removes both."""

    def __init__(self, link, src, dst) -> None:
        super().__init__()
        self.link, self.src, self.dst = link, src, dst  # src and dst are NodeItems
        self.label, self.problem, self.unknown = "", None, False
        self.hovered = False
        self.path = QPainterPath()
        self.label_at = QPointF()
        self.vertical = False
        self.label_item = LinkLabel(self)
        self._bounds = QRectF()
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setAcceptHoverEvents(True)
        self.setZValue(-1)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def refresh(self, graph) -> None:
        """Re-read the tensor the link carries and whether its destination accepts it."""
        t = describe.output(graph, self.link.src, self.link.src_port)
        self.unknown = t is None
        self.label = describe.shape(t)
        self.problem = describe.link_problem(graph, self.link)
        self._place_label()
        self.update()

    def update_path(self) -> None:
        """Follow the ports (after either node moved)."""
        scene = self.scene()
        p1 = self.src.port_pos(self.link.src_port, False)
        p2 = self.dst.port_pos(self.link.dst_port, True)
        obstacles = scene.obstacles(p1, p2, (self.src, self.dst)) if scene is not None else []
        lane = [p.name for p in self.src.graph.layer(self.link.src).spec.outputs] \
            .index(self.link.src_port) if self.link.src in self.src.graph else 0
        self.prepareGeometryChange()
        self.path, self.label_at, self.vertical = route(
            p1, p2, obstacles, lane, scene.boxes_in if scene is not None else None)
        self._place_label()

    def _place_label(self) -> None:
        self.label_item.place(self.label, self.label_at, self.vertical)
        self._label_bounds()

    def shift_label(self, dx: float) -> None:
        """Move the label ``dx`` sideways (off another link's label)."""
        self.label_item.moveBy(dx, 0)
        self._label_bounds()

    def _label_bounds(self) -> None:
        self.prepareGeometryChange()
        self._bounds = self.path.boundingRect().united(
            self.label_item.sceneBoundingRect()).adjusted(-4, -4, 4, 4)

    # -------------------------------------------------------------------- Qt API --
    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        out = stroker.createStroke(self.path)
        if self.label_item.isVisible():
            out.addRect(self.label_item.sceneBoundingRect())
        return out

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemSelectedHasChanged:
            self.label_item.update()
        return super().itemChange(change, value)

    def hoverEnterEvent(self, event) -> None:
        self.hovered = True
        graph = self.src.graph
        if self.link.src in graph and self.link.dst in graph:
            self.setToolTip(describe.link_tooltip(graph, self.link))
        self.update()

    def hoverLeaveEvent(self, event) -> None:
        self.hovered = False
        self.update()

    def paint(self, painter, option, widget=None) -> None:
        c = theme.colors
        selected = bool(option.state & QStyle.State_Selected)
        color = c.error if self.problem else c.accent if selected else c.link
        width = 2.8 if (selected or self.hovered) else 1.8
        pen = QPen(color, width)
        pen.setCapStyle(Qt.RoundCap)
        if self.unknown:
            pen.setStyle(Qt.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.path)
