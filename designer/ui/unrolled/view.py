"""The unrolled-net view: the per-time-step net the CAFFE engine runs for one recurrent layer.

It draws ``designer.engines.expansion.expand.expand``'s nodes with their real blob shapes, time steps
as columns (see ``layout``), each step foldable; the number of steps can be changed.
An overview strip under the canvas shows the whole expansion and where the view is.
**Engine parity** opens a chart under it: for the current weights, how far the cuDNN and the
unrolled engine are apart at every step (`designer.ui.inspect.parity_panel`).
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsPathItem, QGraphicsScene, QHBoxLayout, QLabel,
                               QSizePolicy, QSpinBox, QSplitter, QStackedWidget, QToolButton,
                               QVBoxLayout, QWidget)

from designer.engines.expansion.expand import expand
from designer.graph import dims as D
from designer.ui.editor.link_item import rounded_polyline
from designer.ui.forms.param_form import caption
from designer.ui.look import resources, theme
from designer.ui.unrolled import layout as U

from designer.ui.unrolled.canvas import Overview, UnrolledCanvas
from designer.ui.unrolled.items import (Caption, StepGroup, UnrolledNode, color_of, node_tooltip,
                                        short)

MAX_STEPS = 500


class UnrolledView(QWidget):
    """The unrolled net of one recurrent layer of the document's graph.

    Signals
    -------
    closed(name)
        The layer is gone (removed, or the document replaced).
    renamed(old, new)
        The layer was renamed; the view follows it.
    """

    closed = Signal(str)
    renamed = Signal(str, str)

    def __init__(self, doc, layer: str, steps: int | None = None, parent=None,
                 weights_for=None) -> None:
        super().__init__(parent)
        self.doc, self.layer, self.graph = doc, layer, doc.graph
        self.weights_for = weights_for  # layer -> (run_dir, label) of a run to measure, or None
        self.parity = None              # the parity panel, made when first opened
        self.exp = None
        self.lay: U.UnrolledLayout | None = None
        self.collapsed: set[int] | None = None
        self.nodes: dict[str, UnrolledNode] = {}
        self.groups: dict = {}
        self.edges: list = []           # (src, dst, blob, path item)
        self.edges_of: dict = {}        # node -> indices into edges
        self.scene = QGraphicsScene(self)
        self.scene.setItemIndexMethod(QGraphicsScene.NoIndex)
        self.canvas = UnrolledCanvas(self.scene)
        self.overview = Overview(self)
        self.title = QLabel(textFormat=Qt.RichText)
        self.legend = QLabel(textFormat=Qt.RichText)
        for label in (self.title, self.legend):  # long texts must not widen the window
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
            label.setWordWrap(True)
        self.steps_box = QSpinBox(minimum=1, maximum=MAX_STEPS, keyboardTracking=False)
        self.steps_box.setToolTip("How many time steps to unroll (the data gives T)")
        self.steps_box.setPrefix("steps: ")
        self.message = caption("", self, error=True)
        self.message.setAlignment(Qt.AlignCenter)
        self.stack = QStackedWidget()
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(0)
        v.addWidget(self.canvas, 1)
        v.addWidget(self.overview)
        self.stack.addWidget(page)
        self.stack.addWidget(self.message)
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 6, 8, 4)
        bar.addWidget(self.title, 1)
        bar.addWidget(self.steps_box)
        self.buttons = {}
        for key, text, icon, slot in (
                ("expand", "Unfold all", "expand", self.expand_all),
                ("collapse", "Fold middle", "collapse", self.collapse_middle),
                ("fit", "Fit", "fit", self.fit),
                ("parity", "Engine parity", "inspect", self.toggle_parity)):
            b = resources.themed(QToolButton(text=text, autoRaise=True), icon)
            b.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            b.clicked.connect(slot)
            bar.addWidget(b)
            self.buttons[key] = b
        self.buttons["parity"].setCheckable(True)
        self.buttons["parity"].setToolTip(
            "For the current weights (the latest run's, or freshly initialised ones), how far "
            "the fused (cuDNN, or the parallel scan) and the unrolled engine are apart at "
            "every step")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(bar)
        legend_row = QHBoxLayout()
        legend_row.setContentsMargins(10, 0, 8, 4)
        legend_row.addWidget(self.legend, 1)
        lay.addLayout(legend_row)
        self.split = QSplitter(Qt.Vertical)
        self.split.addWidget(self.stack)
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        self._rebuild_timer = QTimer(self, singleShot=True, interval=200)
        self._rebuild_timer.timeout.connect(self.rebuild)
        self.steps_box.valueChanged.connect(lambda _: self._rebuild_timer.start())
        self.canvas.horizontalScrollBar().valueChanged.connect(self.overview.update)
        self.canvas.verticalScrollBar().valueChanged.connect(self.overview.update)
        for name, slot in self._slots().items():
            getattr(self.graph, name).connect(slot)
        self._steps_wanted = steps
        self.rebuild(first=True)

    # ------------------------------------------------------------------ the model --
    def _slots(self) -> dict:
        return {"shapes_changed": self._shapes_changed, "param_changed": self._param_changed,
                "layer_renamed": self._renamed, "layer_removed": self._removed}

    def _shapes_changed(self, names) -> None:
        if self.layer in names:
            self._rebuild_timer.start()

    def _param_changed(self, name, key, old, new) -> None:
        if name == self.layer:
            self._rebuild_timer.start()

    def _renamed(self, old: str, new: str) -> None:
        if old == self.layer:
            self.layer = new
            if self.parity is not None:
                self.parity.set_layer(new)
            self.renamed.emit(old, new)
            self._rebuild_timer.start()

    def _removed(self, name: str) -> None:
        if name == self.layer:
            self._rebuild_timer.stop()
            self.closed.emit(name)

    def deleteLater(self) -> None:
        for name, slot in self._slots().items():
            getattr(self.graph, name).disconnect(slot)
        if self.parity is not None:
            self.parity.shutdown()
        super().deleteLater()

    def shutdown(self) -> None:
        """Stop the parity measurement's thread (the window is closing)."""
        if self.parity is not None:
            self.parity.shutdown()

    # -------------------------------------------------------------------- parity --
    def toggle_parity(self, show: bool | None = None) -> None:
        """Show (and measure) or hide the per-step engine parity chart."""
        show = self.buttons["parity"].isChecked() if show is None else show
        self.buttons["parity"].setChecked(show)
        if show and self.parity is None:
            from designer.ui.inspect.parity_panel import ParityPanel
            self.parity = ParityPanel(self.doc, self.layer, self.weights_for)
            self.split.addWidget(self.parity)
            self.split.setSizes([max(200, self.height() - 330), 300])
        if self.parity is None:
            return
        self.parity.setVisible(show)
        if show:
            self.parity.measure()

    # -------------------------------------------------------------------- building --
    def set_steps(self, steps: int) -> None:
        self.steps_box.setValue(steps)
        self.rebuild()

    def rebuild(self, first: bool = False) -> None:
        """Expand the layer again and redraw everything."""
        self._rebuild_timer.stop()
        steps = self._steps_wanted if first else self.steps_box.value()
        try:
            exp = expand(self.graph, self.layer, steps=steps)
        except ValueError as e:
            self.message.setText(str(e))
            self.stack.setCurrentIndex(1)
            self.title.setText(f"<b>{self.layer}</b>")
            return
        self.stack.setCurrentIndex(0)
        if first:
            self.steps_box.blockSignals(True)
            self.steps_box.setMaximum(max(MAX_STEPS, exp.steps))
            self.steps_box.setValue(exp.steps)
            self.steps_box.blockSignals(False)
        if self.collapsed is None or (self.exp is not None and exp.steps != self.exp.steps):
            self.collapsed = U.default_collapsed(exp.steps)
        self.exp = exp
        self._populate()
        self._describe()
        if first:
            QTimer.singleShot(0, self.show_start)

    def _populate(self) -> None:
        exp = self.exp
        self.scene.clear()
        self.nodes, self.groups, self.edges, self.edges_of = {}, {}, [], {}
        self.lay = U.layout(exp, self.collapsed)
        lay = self.lay
        rows: dict = {}
        for n in exp.nodes:
            if n.step is not None:
                rows.setdefault((exp.chain_of(n), n.step), []).append(n)
        for key, box in lay.groups.items():
            members = rows.get(key, [])
            marks = [(n.type, lay.boxes[n.name].cy - box.y) for n in members]
            group = StepGroup(self, key[0], key[1], box, marks, key[0] in lay.backward)
            group.set_box(box, key[1] in self.collapsed)
            self.scene.addItem(group)
            self.groups[key] = group
        for x, y, text in lay.captions:
            self.scene.addItem(Caption(text, x, y))
        for n in exp.nodes:
            kind = lay.kinds[n.name]
            top = exp.shapes[n.tops[0]]
            text = D.shape_str(top)
            label = ""
            if kind == "rail":
                if n.type == "SLICE":
                    src = n.bottoms[0]
                    label = (f"SLICE  {short(n.name)}   \u2192  {len(n.tops)} \u00d7 {text}"
                             f"   from {short(src)} {D.shape_str(exp.shapes[src])}")
                else:
                    label = (f"CONCAT  {short(n.name)}   \u2190  {len(n.bottoms)} steps  \u2192  "
                             f"{short(n.tops[0])} {text}")
            item = UnrolledNode(self, n.name, kind, n.type, lay.boxes[n.name], text, label)
            item.setVisible(n.name not in lay.hidden)
            self.scene.addItem(item)
            self.nodes[n.name] = item
        for blob in exp.inputs:
            name = U.input_name(blob)
            if name in lay.boxes:
                item = UnrolledNode(self, name, "input", "INPUT", lay.boxes[name],
                                    D.shape_str(exp.shapes[blob]), blob)
                self.scene.addItem(item)
                self.nodes[name] = item
        pairs = [(a, b, blob) for a, b, blob in exp.edges()]
        by_blob = {U.input_name(b): b for b in exp.inputs}
        for n in exp.nodes:
            for b in n.bottoms:
                if U.input_name(b) in lay.boxes and U.input_name(b) in by_blob:
                    pairs.append((U.input_name(b), n.name, b))
        self.boxes = dict(lay.boxes)
        for a, b, blob in pairs:
            item = QGraphicsPathItem()
            item.setZValue(0)
            item.setToolTip(f"{blob}  {D.shape_str(exp.shapes[blob])}")
            self.scene.addItem(item)
            i = len(self.edges)
            self.edges.append((a, b, blob, item))
            self.edges_of.setdefault(a, []).append(i)
            self.edges_of.setdefault(b, []).append(i)
        self._route_all()
        self.scene.setSceneRect(QRectF(-40, -40, lay.width + 80, lay.height + 80))
        self.overview.render_scene()

    def _pen(self, src: str, dst: str, blob: str) -> QPen:
        c = theme.colors
        recurrent = (self.lay.group_of.get(src, (0, 0))[1] != self.lay.group_of.get(dst, (0, 0))[1]
                     and src in self.lay.group_of and dst in self.lay.group_of)
        pen = QPen(QColor(theme.UNROLLED_COLORS["UNIT"]) if recurrent else c.link,
                   1.8 if recurrent else 1.3)
        pen.setCapStyle(Qt.RoundCap)
        return pen

    def _route(self, i: int, seen: set | None = None) -> None:
        a, b, blob, item = self.edges[i]
        pts = U.edge_points(self.lay, self.boxes, a, b)
        key = tuple(pts) if pts else None
        if pts is None or (seen is not None and key in seen):
            item.setVisible(False)
            return
        if seen is not None:
            seen.add(key)
        item.setVisible(True)
        item.setPen(self._pen(a, b, blob))
        item.setPath(rounded_polyline([QPointF(x, y) for x, y in pts], 8.0)
                     if len(pts) > 2 else _line(pts))

    def _route_all(self) -> None:
        seen: set = set()
        for i in range(len(self.edges)):
            self._route(i, seen)

    def node_moved(self, item: UnrolledNode) -> None:
        """A node was dragged: its edges follow."""
        if self.lay is None or item.name not in self.boxes:
            return
        old = self.boxes[item.name]
        self.boxes[item.name] = U.Box(item.pos().x(), item.pos().y(), old.w, old.h)
        for i in self.edges_of.get(item.name, ()):
            self._route(i)

    def tooltip(self, name: str) -> str:
        if name.startswith("in:"):
            blob = name[3:]
            shape = D.shape_str(self.exp.shapes[blob])
            return f"<qt><b>{blob}</b> (fed from outside) &nbsp;{shape}</qt>"
        node = next(n for n in self.exp.nodes if n.name == name)
        return node_tooltip(self.exp, node)

    def _describe(self) -> None:
        exp = self.exp
        counts = exp.counts()
        edges = len(exp.edges())
        dot = " &nbsp;\u00b7&nbsp; "
        both = ", both directions" if exp.directions == 2 else ""
        padded = ", padded by lengths" if "lengths" in exp.inputs else ""
        self.title.setText(
            f"<b>{self.layer}</b> as the CAFFE engine runs it{dot}{exp.levels} \u00d7 {exp.kind} "
            f"{exp.hidden}{both}, batch {exp.batch}{padded}{dot}<b>{len(exp.nodes):,}</b> "
            f"nodes, {edges:,} edges")
        chips = []
        for t, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            color = color_of(t).name()
            chips.append(f"<span style='color:{color}'>\u25a0</span>&nbsp;{t}&nbsp;{n}")
        folded = len(self.collapsed)
        note = (f" &nbsp;&nbsp;<span style='color:gray'>\u2014 {folded} step{'s' * (folded > 1)} "
                "folded (click one to unfold it)</span>") if folded else ""
        self.legend.setText(" &nbsp;&nbsp; ".join(chips) + note)

    # ------------------------------------------------------------------ folding --
    def relayout(self) -> None:
        """Place everything again after steps were folded or unfolded."""
        self.lay = U.layout(self.exp, self.collapsed)
        self.boxes = dict(self.lay.boxes)
        for key, group in self.groups.items():
            group.set_box(self.lay.groups[key], key[1] in self.collapsed)
        for name, item in self.nodes.items():
            item.set_box(self.lay.boxes[name])
            item.setVisible(name not in self.lay.hidden)
        self._route_all()
        self.scene.setSceneRect(QRectF(-40, -40, self.lay.width + 80, self.lay.height + 80))
        self._describe()
        self.overview.render_scene()

    def toggle_step(self, step: int) -> None:
        self.collapsed ^= {step}
        self.relayout()

    def set_collapsed(self, steps) -> None:
        self.collapsed = set(steps)
        self.relayout()

    def expand_all(self) -> None:
        self.set_collapsed(())

    def collapse_middle(self) -> None:
        self.set_collapsed(U.default_collapsed(self.exp.steps) or range(2, self.exp.steps))

    def fit(self) -> None:
        self.canvas.fitInView(self.scene.sceneRect(), Qt.KeepAspectRatio)
        self.overview.update()

    def show_start(self) -> None:
        """Readable zoom, at the first steps."""
        self.canvas.resetTransform()
        view_h = self.canvas.viewport().height()
        z = min(1.0, max(0.6, view_h / (self.lay.height + 60)))
        self.canvas.scale(z, z)
        self.canvas.centerOn(self.canvas.mapToScene(self.canvas.viewport().rect().center()))
        self.canvas.horizontalScrollBar().setValue(self.canvas.horizontalScrollBar().minimum())
        self.canvas.verticalScrollBar().setValue(self.canvas.verticalScrollBar().minimum())
        self.overview.update()

    def refresh_theme(self) -> None:
        if self.parity is not None:
            self.parity.refresh_theme()
        if self.exp is not None:
            self._route_all()
            self._describe()
        for item in self.scene.items():
            item.update()
        self.overview.render_scene()


def _line(pts) -> QPainterPath:
    path = QPainterPath(QPointF(*pts[0]))
    path.lineTo(QPointF(*pts[1]))
    return path
