"""Pictures of the canvas or of an unrolled view: PNG (at twice the screen resolution) or SVG."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMarginsF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

MARGIN = 24.0
PNG_SCALE = 2.0


def picture_rect(scene: QGraphicsScene) -> QRectF:
    return scene.itemsBoundingRect().marginsAdded(QMarginsF(MARGIN, MARGIN, MARGIN, MARGIN))


def save_picture(scene: QGraphicsScene, path: str | Path, background: QColor) -> Path:
    """Render everything on ``scene`` to ``path`` (.svg, else PNG); raises ``OSError``."""
    path = Path(path)
    rect = picture_rect(scene)
    selected = scene.selectedItems()
    for item in selected:  # a picture shows the net, not the selection
        item.setSelected(False)
    cached = [(item, item.cacheMode()) for item in scene.items()
              if item.cacheMode() != QGraphicsItem.NoCache]
    for item, _ in cached:  # drawn afresh: vectors in an SVG, sharp at twice the size in a PNG
        item.setCacheMode(QGraphicsItem.NoCache)
    try:
        if path.suffix.lower() == ".svg":
            _svg(scene, rect, path, background)
        else:
            _png(scene, rect, path, background)
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)
        for item in selected:
            item.setSelected(True)
    return path


def _png(scene, rect: QRectF, path: Path, background: QColor) -> None:
    size = QSize(max(1, int(rect.width() * PNG_SCALE)), max(1, int(rect.height() * PNG_SCALE)))
    image = QImage(size, QImage.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(1.0)
    image.fill(background)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing
                           | QPainter.SmoothPixmapTransform)
    scene.render(painter, QRectF(0, 0, size.width(), size.height()), rect, Qt.KeepAspectRatio)
    painter.end()
    tmp = path.with_name(f".{path.name}.tmp.png")
    if not image.save(str(tmp), "PNG"):
        raise OSError(f"{path} cannot be written")
    tmp.replace(path)


def _svg(scene, rect: QRectF, path: Path, background: QColor) -> None:
    from PySide6.QtSvg import QSvgGenerator
    tmp = path.with_name(f".{path.name}.tmp.svg")
    gen = QSvgGenerator()
    gen.setFileName(str(tmp))
    gen.setSize(QSize(int(rect.width()), int(rect.height())))
    gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    gen.setTitle("rnn-designer")
    painter = QPainter(gen)
    if not painter.isActive():
        raise OSError(f"{path} cannot be written")
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
    painter.fillRect(QRectF(0, 0, rect.width(), rect.height()), background)
    scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect, Qt.KeepAspectRatio)
    painter.end()
    tmp.replace(path)


def save_net_picture(graph, path: str | Path) -> Path:
    """``graph`` as the canvas draws it, laid out in rows, in the light theme, saved as a PNG
    (the documentation's picture of a layer); raises ``OSError``."""
    from designer.graph.project import Project
    from designer.ui.editor.document import Document
    from designer.ui.editor.layout import layered_positions
    from designer.ui.editor.scene import GraphScene
    from designer.ui.look import theme

    for name, pos in layered_positions(graph).items():
        graph.move_layer(name, pos)
    kept, theme.colors = theme.colors, theme.LIGHT
    try:
        scene = GraphScene(Document(Project(graph, "picture")))
        return save_picture(scene, path, theme.colors.canvas)
    finally:
        theme.colors = kept
