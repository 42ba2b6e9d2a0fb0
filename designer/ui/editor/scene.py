"""The canvas scene: it draws the graph and nothing else.

It subscribes to the graph's events, keeps a name -> node item and a link -> link item dict,
and replays the existing layers when a graph is set (the pattern of orange-canvas-core's
``CanvasScene``). Items never change the model: a finished drag becomes one ``move`` and a
finished wire one ``connect`` on the document.
"""
from __future__ import annotations

import bisect
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPixmap
from PySide6.QtWidgets import QGraphicsScene

from designer.graph.errors import GraphWarning
from designer.ui.look import theme

from designer.ui.editor.link_item import LinkItem, separate_labels
from designer.ui.editor.node_item import H, W, NodeItem, PortItem
from designer.ui.editor.wiring import WireDrag

MARGIN = 1500.0


class GraphScene(QGraphicsScene):
    """The items of one document's graph.

    Signals
    -------
    message(str)
        Something to show in the status bar (why a link was refused, say).
    layer_activated(str)
        A layer was double-clicked.
    """

    message = Signal(str)
    layer_activated = Signal(str)

    def __init__(self, doc, parent=None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.graph = None
        self._nodes: dict[str, NodeItem] = {}
        self._links: dict = {}
        self._wire: WireDrag | None = None
        self._index = None  # node boxes by height, for routing links round layers
        self._labels_shown = True  # off when zoomed out too far to read them
        self.run_errors: dict[str, str] = {}
        self._warn_timer = QTimer(self, singleShot=True, interval=0)
        self._warn_timer.timeout.connect(self.refresh_warnings)
        self._route_timer = QTimer(self, singleShot=True, interval=0)
        self._route_timer.timeout.connect(self.reroute_all)
        self._label_timer = QTimer(self, singleShot=True, interval=0)
        self._label_timer.timeout.connect(self._separate_labels)
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        doc.graph_replaced.connect(self.set_graph)
        self.set_graph(doc.graph)

    # ---------------------------------------------------------------------- set-up --
    def _slots(self) -> dict:
        return {"layer_added": self._on_layer_added, "layer_removed": self._on_layer_removed,
                "layer_renamed": self._on_layer_renamed, "layer_moved": self._on_layer_moved,
                "link_added": self._on_link_added, "link_removed": self._on_link_removed,
                "shapes_changed": self._on_shapes_changed, "dims_changed": self._on_dims_changed,
                "param_changed": self._on_param_changed}

    def set_graph(self, graph) -> None:
        """Show ``graph``: forget the old items and replay its layers and links."""
        if self.graph is not None:
            for signal, slot in self._slots().items():
                getattr(self.graph, signal).disconnect(slot)
        if self._wire is not None:
            self._wire.cancel()
            self._wire = None
        self.clear()
        self._nodes, self._links, self._index = {}, {}, None
        self.graph = graph
        for signal, slot in self._slots().items():
            getattr(graph, signal).connect(slot)
        for name in graph.names():
            self._on_layer_added(name, route=False)
        for link in graph.links():
            self._on_link_added(link, route=False)
        self.reroute_all()
        self.refresh_warnings()

    # --------------------------------------------------------------------- queries --
    def node(self, name: str) -> NodeItem:
        return self._nodes[name]

    def nodes(self) -> list[NodeItem]:
        return list(self._nodes.values())

    def link_item(self, link) -> LinkItem | None:
        return self._links.get(link)

    def link_items(self) -> list[LinkItem]:
        return list(self._links.values())

    def nodes_in(self, rect: QRectF) -> list[NodeItem]:
        return [i for i in self.items(rect) if isinstance(i, NodeItem)]

    def visible_rect(self) -> QRectF:
        views = self.views()
        if not views:
            return self.sceneRect()
        v = views[0]
        return v.mapToScene(v.viewport().rect()).boundingRect()

    def selected_names(self) -> list[str]:
        order = {n: i for i, n in enumerate(self._nodes)}
        names = [i.name for i in self.selectedItems() if isinstance(i, NodeItem)]
        return sorted(names, key=order.__getitem__)

    def selected_links(self) -> list:
        return [i.link for i in self.selectedItems() if isinstance(i, LinkItem)]

    def select_layers(self, names) -> None:
        self.clearSelection()
        for name in names:
            if name in self._nodes:
                self._nodes[name].setSelected(True)

    def link_at(self, pos: QPointF, radius: float = 8.0):
        """The link passing within ``radius`` of ``pos`` (for dropping a layer onto it)."""
        area = QRectF(pos.x() - radius, pos.y() - radius, 2 * radius, 2 * radius)
        for item in self.items(area):
            if isinstance(item, LinkItem) and item.isVisible() and \
                    item.shape().intersects(area):
                return item.link
        return None

    def obstacles(self, p1: QPointF, p2: QPointF, exclude) -> list[QRectF]:
        """Boxes of the layers a link from ``p1`` down to ``p2`` would cross."""
        if p2.y() - p1.y() < 40:
            return []
        corridor = QRectF(min(p1.x(), p2.x()) - 3, p1.y() + 6, abs(p2.x() - p1.x()) + 6,
                          p2.y() - p1.y() - 12)
        tops, boxes = self._box_index()
        first = bisect.bisect_left(tops, corridor.top() - H)
        last = bisect.bisect_right(tops, corridor.bottom())
        return [rect for rect, item in boxes[first:last]
                if item not in exclude and rect.intersects(corridor)]

    def boxes_in(self, rect: QRectF) -> list[QRectF]:
        """Boxes of the layers that overlap ``rect``."""
        tops, boxes = self._box_index()
        first = bisect.bisect_left(tops, rect.top() - H)
        last = bisect.bisect_right(tops, rect.bottom())
        return [r for r, _ in boxes[first:last] if r.intersects(rect)]

    def _box_index(self):
        """Node boxes sorted by their top edge (rebuilt after anything moved)."""
        if self._index is None:
            boxes = sorted(((QRectF(n.pos().x() + 6, n.pos().y() + 2, W - 16, H - 4), n)
                            for n in self._nodes.values()), key=lambda b: b[0].top())
            self._index = ([b[0].top() for b in boxes], boxes)
        return self._index

    def content_rect(self) -> QRectF:
        rect = QRectF()
        for n in self._nodes.values():
            rect = rect.united(n.sceneBoundingRect())
        for k in self._links.values():
            rect = rect.united(k.sceneBoundingRect())
        return rect

    # ------------------------------------------------------------------ graph events --
    def _on_layer_added(self, name: str, route: bool = True) -> None:
        self._index = None
        item = NodeItem(self.graph, name)
        self._nodes[name] = item
        self.addItem(item)
        if route:
            self._grow()
            self._reroute_later()  # links may have to step round the newcomer

    def _on_layer_removed(self, name: str) -> None:
        self._index = None
        item = self._nodes.pop(name)
        self.removeItem(item)
        self._reroute_later()

    def _on_layer_renamed(self, old: str, new: str) -> None:
        self._nodes = {(new if k == old else k): v for k, v in self._nodes.items()}
        self._nodes[new].rename(new)
        links = {}
        for link, item in self._links.items():
            if old in (link.src, link.dst):
                link = type(link)(new if link.src == old else link.src, link.src_port,
                                  new if link.dst == old else link.dst, link.dst_port)
                item.link = link
            links[link] = item
        self._links = links

    def _on_layer_moved(self, name: str, pos) -> None:
        item = self._nodes[name]
        if (item.pos().x(), item.pos().y()) != tuple(pos):
            item.setPos(*pos)
        self._reroute_later()

    def _on_link_added(self, link, route: bool = True) -> None:
        item = LinkItem(link, self._nodes[link.src], self._nodes[link.dst])
        self._links[link] = item
        self.addItem(item)
        self.addItem(item.label_item)
        item.label_item.setVisible(self._labels_shown)
        item.refresh(self.graph)
        if route:
            item.update_path()

    def _on_link_removed(self, link) -> None:
        item = self._links.pop(link, None)
        if item is not None:
            self.removeItem(item.label_item)
            self.removeItem(item)

    def _on_shapes_changed(self, names) -> None:
        for name in names:
            if name in self._nodes:
                self._nodes[name].refresh()
        for link, item in self._links.items():
            if link.src in names or link.dst in names:
                item.refresh(self.graph)
        self._label_timer.start()  # new texts, new widths: off each other again
        self._warn_timer.start()

    def _on_dims_changed(self, dims) -> None:
        self._warn_timer.start()

    def _on_param_changed(self, name, key, old, new) -> None:
        self._warn_timer.start()

    def refresh_warnings(self) -> None:
        """Mark each layer with the first error and warning told about it (an error found
        downstream is told on the layer whose change mends it)."""
        if self.graph is None:
            return
        warned: dict[str, str] = {}
        failed: dict[str, str] = {}
        for p in self.graph.problems():
            if p.layer:
                (warned if isinstance(p, GraphWarning) else failed).setdefault(p.layer, str(p))
        for name, text in self.run_errors.items():  # found by running the net
            failed.setdefault(name, text)
        for name, item in self._nodes.items():
            item.set_warning(warned.get(name, ""))
            item.set_error(failed.get(name, ""))

    def set_run_errors(self, errors: dict[str, str]) -> None:
        """Errors found by running the net (the smoke step), by layer, shown like the others."""
        self.run_errors = dict(errors)
        self._warn_timer.start()

    # ----------------------------------------------------------------- movement --
    def node_moved(self, item: NodeItem) -> None:
        """An item moved (dragged, or following the model): its links follow it."""
        self._index = None
        if item.name not in self.graph:
            return
        for link in self.graph.links_into(item.name) + self.graph.links_out_of(item.name):
            k = self._links.get(link)
            if k is not None:
                k.update_path()

    def reroute_all(self) -> None:
        """Route every link again, and label a lane shared by links from one port once."""
        for item in self._links.values():
            item.update_path()
        shared: dict = {}
        for item in sorted(self._links.values(), key=lambda k: k.path.length()):
            key = (item.link.src, item.link.src_port, round(item.label_at.x())) \
                if item.vertical else item
            item.label_item.wanted = key not in shared
            item.label_item.setVisible(item.label_item.wanted and self._labels_shown)
            shared.setdefault(key, item)
        self._separate_labels()
        self._grow()

    def _separate_labels(self) -> None:
        separate_labels(self._links.values())

    def show_labels(self, shown: bool) -> None:
        """Show the links' shape labels (the view hides them when they could not be read)."""
        if shown != self._labels_shown:
            self._labels_shown = shown
            for item in self._links.values():
                item.label_item.setVisible(shown and item.label_item.wanted)

    def _reroute_later(self) -> None:
        self._route_timer.start()

    def _grow(self) -> None:
        rect = self.content_rect()
        if rect.isNull():
            rect = QRectF(-400, -300, 800, 600)
        self.setSceneRect(rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN).united(
            self.sceneRect()))

    def _finish_move(self) -> None:
        moves = {}
        for item in self.selectedItems():
            if isinstance(item, NodeItem) and item.name in self.graph:
                old = self.graph.layer(item.name).pos
                new = (item.pos().x(), item.pos().y())
                if tuple(old) != new:
                    moves[item.name] = (old, new)
        if moves:
            self.doc.move(moves)

    # -------------------------------------------------------------------- mouse --
    def mousePressEvent(self, event) -> None:
        views = self.views()
        readable = not views or views[0].transform().m11() >= 0.35  # ports too small below
        if event.button() == Qt.LeftButton and readable:
            port = next((i for i in self.items(event.scenePos()) if isinstance(i, PortItem)),
                        None)
            if port is not None:
                self._wire = WireDrag(self, port)
                self._wire.move(event.scenePos())
                event.accept()
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._wire is not None:
            self._wire.move(event.scenePos())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._wire is not None:
            wire, self._wire = self._wire, None
            text = wire.finish(event.scenePos())
            if text:
                self.message.emit(text)
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self._finish_move()

    def mouseDoubleClickEvent(self, event) -> None:
        item = self.itemAt(event.scenePos(), self.views()[0].transform()) if self.views() \
            else None
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        if item is not None:
            self.layer_activated.emit(item.name)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def cancel_wire(self) -> bool:
        if self._wire is None:
            return False
        self._wire.cancel()
        self._wire = None
        return True

    def drawBackground(self, painter, rect: QRectF) -> None:
        c = theme.colors
        painter.fillRect(rect, c.canvas)
        if painter.worldTransform().m11() >= 0.5:
            painter.fillRect(rect, _dot_brush(c.canvas.name(), c.grid.name()))


@lru_cache(maxsize=4)
def _dot_brush(canvas: str, grid: str) -> QBrush:
    """A 20 px tile with one dot: the canvas grid, drawn by the painter as a texture."""
    pix = QPixmap(20, 20)
    pix.fill(QColor(canvas))
    p = QPainter(pix)
    p.setPen(Qt.NoPen)
    p.setBrush(QColor(grid))
    p.drawEllipse(QPointF(0, 0), 1.3, 1.3)
    p.drawEllipse(QPointF(20, 0), 1.3, 1.3)
    p.drawEllipse(QPointF(0, 20), 1.3, 1.3)
    p.drawEllipse(QPointF(20, 20), 1.3, 1.3)
    p.end()
    return QBrush(pix)
