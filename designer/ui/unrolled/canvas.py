"""The canvas of the unrolled view and its overview strip (the whole expansion in
miniature, with the part in view framed)."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsView, QWidget

from designer.ui.look import theme


class UnrolledCanvas(QGraphicsView):
    """Wheel zooms, dragging empty space pans, dragging a node moves it."""

    def __init__(self, scene) -> None:
        super().__init__(scene)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.DontSavePainterState)
        self.setFrameShape(QGraphicsView.NoFrame)

    def wheelEvent(self, event) -> None:
        step = 1.0015 ** event.angleDelta().y()
        z = self.transform().m11() * step
        if 0.03 <= z <= 3.0:
            self.scale(step, step)
        event.accept()

    def drawBackground(self, painter, rect) -> None:
        painter.fillRect(rect, theme.colors.canvas)


class Overview(QWidget):
    """The whole expansion in miniature, with the visible part framed; click to go there."""

    def __init__(self, view) -> None:
        super().__init__()
        self.view = view
        self.pixmap = QPixmap()
        self.setFixedHeight(64)
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("The whole unrolled net: click or drag to move the view")

    def render_scene(self) -> None:
        scene = self.view.scene
        src = scene.sceneRect()
        if src.isEmpty() or self.width() < 10:
            return
        s = min((self.width() - 8) / src.width(), (self.height() - 8) / src.height())
        w, h = max(1, int(src.width() * s)), max(1, int(src.height() * s))
        self.pixmap = QPixmap(w, h)
        self.pixmap.fill(theme.colors.canvas)
        p = QPainter(self.pixmap)
        p.setRenderHint(QPainter.Antialiasing)
        scene.render(p, QRectF(0, 0, w, h), src)
        p.end()
        self.update()

    def _map(self) -> tuple[float, float, float]:
        src = self.view.scene.sceneRect()
        s = self.pixmap.width() / src.width() if src.width() else 1.0
        ox = (self.width() - self.pixmap.width()) / 2
        oy = (self.height() - self.pixmap.height()) / 2
        return s, ox, oy

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().window())
        if self.pixmap.isNull():
            return
        s, ox, oy = self._map()
        p.drawPixmap(int(ox), int(oy), self.pixmap)
        src = self.view.scene.sceneRect()
        r = self.view.canvas.mapToScene(self.view.canvas.viewport().rect()).boundingRect()
        frame = QRectF(ox + (r.left() - src.left()) * s, oy + (r.top() - src.top()) * s,
                       r.width() * s, r.height() * s)
        p.setPen(QPen(theme.colors.accent, 1.5))
        fill = QColor(theme.colors.accent)
        fill.setAlpha(30)
        p.setBrush(fill)
        p.drawRect(frame.intersected(QRectF(ox, oy, self.pixmap.width(),
                                            self.pixmap.height())).adjusted(0, 0, -1, -1))

    def mousePressEvent(self, event) -> None:
        self._go(event.position())

    def mouseMoveEvent(self, event) -> None:
        if event.buttons():
            self._go(event.position())

    def _go(self, pos: QPointF) -> None:
        if self.pixmap.isNull():
            return
        s, ox, oy = self._map()
        src = self.view.scene.sceneRect()
        self.view.canvas.centerOn((pos.x() - ox) / s + src.left(),
                                  (pos.y() - oy) / s + src.top())

    def resizeEvent(self, event) -> None:
        self.render_scene()
