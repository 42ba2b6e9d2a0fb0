"""The canvas view: zoom with the wheel, pan with the middle button (or Space + drag), fit to
view, rubber-band selection, and drops from the palette (onto empty canvas, or onto a link to
insert the layer there)."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsView

from designer.graph.errors import GraphError
from designer.ui.editor import mime
from designer.ui.look import theme

from designer.ui.editor.layout import ROW
from designer.ui.editor.node_item import GRID, H, W

MIN_ZOOM, MAX_ZOOM = 0.1, 3.0
LABELS_FROM = 0.45  # zoomed out further, links are drawn without their shape labels


class CanvasView(QGraphicsView):
    """Shows a :class:`~designer.ui.editor.scene.GraphScene`.

    Signals
    -------
    zoom_changed(float)
        The zoom factor (1.0: one scene unit per pixel).
    layer_dropped(str)
        A layer was added by a drop from the palette.
    context_requested(scene_pos, global_pos)
        The user asked for a context menu.
    """

    zoom_changed = Signal(float)
    layer_dropped = Signal(str)
    context_requested = Signal(QPointF, QPoint)

    def __init__(self, scene, parent=None) -> None:
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing |
                            QPainter.SmoothPixmapTransform)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.IntersectsItemShape)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.DontSavePainterState)
        self.setAcceptDrops(True)
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.zoom_changed.connect(lambda z: scene.show_labels(z >= LABELS_FROM))
        self._pan_from: QPointF | None = None
        self._space = False
        self.fitted = False  # the net was fitted and not zoomed or panned since: kept fitted
        self._drop_link = None

    # ------------------------------------------------------------------------ zoom --
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        self.fitted = False
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        self.scale(factor / self.zoom(), factor / self.zoom())
        self.zoom_changed.emit(self.zoom())

    def zoom_by(self, step: float) -> None:
        self.set_zoom(self.zoom() * step)

    def fit(self, max_zoom: float = 1.0) -> None:
        """Show every layer, no larger than ``max_zoom``."""
        rect = self.scene().content_rect()
        if rect.isNull():
            self.resetTransform()
            self.centerOn(0, 0)
            self.zoom_changed.emit(1.0)
            return
        rect = rect.adjusted(-40, -40, 40, 40)
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.zoom() > max_zoom:
            self.set_zoom(max_zoom)
        self.centerOn(rect.center())
        self.zoom_changed.emit(self.zoom())
        self.fitted = True

    def resizeEvent(self, event) -> None:
        """A net fitted to the view stays fitted when the view changes size (a dock shown or
        resized, another workspace): it is never left cut off at an edge."""
        super().resizeEvent(event)
        if self.fitted and self.isVisible():
            self.fit()

    def centre_on_layer(self, name: str) -> None:
        self.fitted = False
        self.centerOn(self.scene().node(name).sceneBoundingRect().center())

    def wheelEvent(self, event) -> None:
        delta = event.angleDelta()
        if delta.y() == 0 and delta.x() != 0:  # sideways wheel: scroll
            super().wheelEvent(event)
            return
        self.zoom_by(1.0015 ** delta.y())
        event.accept()

    # ------------------------------------------------------------------------- pan --
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self.fitted = False
            self._space = True
            self.setDragMode(QGraphicsView.ScrollHandDrag)
            return
        if event.key() == Qt.Key_Escape and self.scene().cancel_wire():
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self._space = False
            self.setDragMode(QGraphicsView.RubberBandDrag)
            return
        super().keyReleaseEvent(event)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MiddleButton:
            self.fitted = False
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._pan_from is not None:
            d = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(d.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(d.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MiddleButton and self._pan_from is not None:
            self._pan_from = None
            self.viewport().unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:
        self.context_requested.emit(self.mapToScene(event.pos()), event.globalPos())
        event.accept()

    # ----------------------------------------------------------------------- drops --
    def _accepts(self, event) -> bool:
        return event.mimeData().hasFormat(mime.LAYER_TYPE)

    def dragEnterEvent(self, event) -> None:
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        if not self._accepts(event):
            super().dragMoveEvent(event)
            return
        link = self.scene().link_at(self.mapToScene(event.position().toPoint()))
        self._highlight(link)
        event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:
        self._highlight(None)
        super().dragLeaveEvent(event)

    def _highlight(self, link) -> None:
        scene = self.scene()
        if self._drop_link is not None and scene.link_item(self._drop_link) is not None:
            item = scene.link_item(self._drop_link)
            item.hovered = False
            item.update()
        self._drop_link = link
        if link is not None:
            item = scene.link_item(link)
            item.hovered = True
            item.update()

    def dropEvent(self, event) -> None:
        if not self._accepts(event):
            super().dropEvent(event)
            return
        type_id = bytes(event.mimeData().data(mime.LAYER_TYPE)).decode("utf-8", "replace")
        pos = self.mapToScene(event.position().toPoint())
        self._highlight(None)
        event.acceptProposedAction()
        self.drop_layer(type_id, pos)

    def drop_layer(self, type_id: str, pos: QPointF) -> str | None:
        """Add a layer of ``type_id`` centred at ``pos`` (spliced into a link under it)."""
        scene = self.scene()
        top_left = (round((pos.x() - W / 2) / GRID) * GRID, round((pos.y() - H / 2) / GRID) * GRID)
        link = scene.link_at(pos)
        try:
            if link is not None:
                top_left, room = self.room_on_link(link, top_left)
                name = scene.doc.insert_on_link(type_id, link, top_left, room)
            else:
                name = scene.doc.add_layer(type_id, top_left)
        except GraphError as e:
            scene.message.emit(str(e))
            return None
        scene.select_layers([name])
        self.layer_dropped.emit(name)
        return name

    def room_on_link(self, link, top_left) -> tuple[tuple, dict]:
        """Where a layer spliced into ``link`` goes, and the moves that make room for it.

        When the link runs down between two layers too close for a third, the new layer
        takes the row under the link's source and everything from the destination on moves
        down one row (one undo step with the insertion).
        """
        g = self.scene().graph
        src, dst = g.layer(link.src).pos, g.layer(link.dst).pos
        if dst[1] - src[1] < H or dst[1] - src[1] >= 2 * ROW:
            return top_left, {}
        new = (dst[0], src[1] + ROW)
        shift = new[1] + ROW - dst[1]
        if shift <= 0:
            return new, {}
        below, todo = set(), [link.dst]
        while todo:  # the destination and everything downstream of it
            name = todo.pop()
            if name not in below:
                below.add(name)
                todo.extend(k.dst for k in g.links_out_of(name))
        moves = {n: (g.layer(n).pos, (g.layer(n).pos[0], g.layer(n).pos[1] + shift))
                 for n in below if g.layer(n).pos[1] >= dst[1]}
        return new, moves

    def drawForeground(self, painter, rect: QRectF) -> None:
        if self.scene().nodes():
            return
        painter.save()
        painter.resetTransform()
        c = theme.colors
        painter.setPen(c.node_dim)
        font = painter.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        painter.setFont(font)
        painter.drawText(QRectF(self.viewport().rect()), Qt.AlignCenter | Qt.TextWordWrap,
                         "An empty net.\nDrag layers here from the palette on the left, "
                         "then wire an output port (bottom) to an input port (top).\n"
                         "Or open an example project with Ctrl+O.")
        painter.restore()

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()
