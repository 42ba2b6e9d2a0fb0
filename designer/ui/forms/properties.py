"""The properties editor: the selected layer's name, shapes and parameters (a form generated from
its spec), or, with nothing selected, the project; and the solver and training settings in tabs
of their own. Every change goes through the document's undo stack."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QFrame, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QScrollArea, QTabWidget, QVBoxLayout, QWidget)

from designer.engines.expansion.expand import unrolls
from designer.graph import dims as D
from designer.graph import settings as S
from designer.graph.errors import GraphError
from designer.ui.editor import describe
from designer.ui.look import resources, theme

from designer.ui.forms.design_choices import DesignChoices
from designer.ui.forms.param_form import PageSized, ParamForm, caption
from designer.ui.forms.search_over import describe as describe_range
from designer.ui.forms.search_over import edit_search, rename_layer


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setWidget(widget)
    return area


def _heading(text: str) -> QLabel:
    label = QLabel(text)
    font = QFont(label.font())
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(0, 8, 0, 2)
    return label


class LayerPanel(QWidget):
    """The selected layer."""

    unroll_requested = Signal(str)

    def __init__(self, doc, parent=None, memory=None) -> None:
        super().__init__(parent)
        self.doc, self.name, self.memory = doc, None, memory
        self.name_edit = QLineEdit(objectName="layer_name")
        big = QFont(self.name_edit.font())
        big.setPointSizeF(big.pointSizeF() * 1.25)
        big.setBold(True)
        self.name_edit.setFont(big)
        self.name_edit.setToolTip("The layer's name (letters, digits, _ and -); Enter renames")
        self.name_edit.editingFinished.connect(self._rename)
        self.name_error = caption("", self, error=True)
        self.kind = QLabel(textFormat=Qt.RichText, wordWrap=True)  # wraps in a narrow dock
        self.design = DesignChoices(doc, self)  # its type, the inputs a join keeps ...
        self.summary = QLabel(wordWrap=True)
        self.help = caption("", self)
        self.readout = QLabel(textFormat=Qt.RichText, wordWrap=True)
        self.readout.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.problems = caption("", self, error=True)
        self.unroll = resources.themed(QPushButton("Show the unrolled net"), "unroll")
        self.unroll.setToolTip("The net the CAFFE engine runs: SCALE, INNER_PRODUCT, ELTWISE "
                               "and LSTM_UNIT layers for every time step")
        self.unroll.clicked.connect(lambda: self.unroll_requested.emit(self.name))
        self.forms = PageSized()
        self._forms: dict[str, ParamForm] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 10)
        lay.setSpacing(4)
        for w in (self.name_edit, self.name_error, self.kind, self.summary, self.help,
                  _heading("Shapes"), self.readout, self.problems, self.unroll,
                  _heading("Parameters"), self.forms, self.design):
            lay.addWidget(w)
        lay.addStretch(1)

    def form(self) -> ParamForm | None:
        return self._forms.get(self.doc.graph.layer(self.name).type) if self.name else None

    def show_layer(self, name: str) -> None:
        self.name = name
        layer = self.doc.graph.layer(name)
        spec = layer.spec
        if spec.id not in self._forms:
            form = ParamForm(spec.params, self, searchable=True)
            form.edited.connect(self._edited)
            form.search_requested.connect(self._search)
            self._forms[spec.id] = form
            self.forms.addWidget(form)
        self.forms.setCurrentWidget(self._forms[spec.id])
        color = theme.colors.category(spec.category).name()
        self.kind.setText(f"<span style='color:{color}'>\u25a0</span> <b>{spec.id}</b> "
                          f"&nbsp;\u00b7&nbsp; {spec.category}"
                          + (f" &nbsp;\u00b7&nbsp; Caffe {spec.caffe_type}"
                             if spec.caffe_type and spec.caffe_type != spec.id else ""))
        self.summary.setText(spec.summary)
        self.help.setText(spec.help if spec.help != spec.summary else "")
        self.name_error.hide()
        self._forms[spec.id].clear_errors()
        self.refresh()

    def refresh(self) -> None:
        """Re-read everything about the layer from the graph."""
        if self.name is None or self.name not in self.doc.graph:
            return
        g = self.doc.graph
        layer, info = g.layer(self.name), g.info(self.name)
        if not self.name_edit.hasFocus():
            self.name_edit.setText(self.name)
        self._forms[layer.type].set_values(layer.effective_params(), set(layer.params))
        self.show_searched()
        rows = []
        for port, t in zip(layer.spec.inputs, info.inputs or [None] * len(layer.spec.inputs)):
            feed = g.link_into(self.name, port.name)
            if feed is not None:
                text = f"{escape(describe.shape(t))} &nbsp;<span style='color:gray'>from " \
                       f"{escape(feed.src)}</span>"
            else:
                text = "<span style='color:gray'>not connected" + \
                       (" (optional)" if port.optional else "") + "</span>"
            rows.append(f"<tr><td>in <b>{port.name}</b>&nbsp;</td><td>{text}</td></tr>")
        for port, t in zip(layer.spec.outputs, info.outputs or [None] * len(layer.spec.outputs)):
            rows.append(f"<tr><td>out <b>{port.name}</b>&nbsp;</td>"
                        f"<td>{escape(describe.shape(t))}</td></tr>")
        params = describe.exact(info.params)
        rows.append(f"<tr><td>parameters&nbsp;</td><td><b>{params}</b></td></tr>")
        rows.append(f"<tr><td>compute&nbsp;</td><td><b>{escape(describe.flops(info.flops))}"
                    "</b> per sample</td></tr>")
        kept = self._kept()
        if kept is not None:
            rows.append(f"<tr><td>memory&nbsp;</td><td><b>{escape(kept)}</b> kept for the "
                        "backward pass</td></tr>")
        self.readout.setText("<table cellspacing=0 cellpadding=1>" + "".join(rows) + "</table>")
        problems = describe.errors_of(g, self.name) + describe.warnings_of(g, self.name)
        self.problems.setText("\n".join("\u26a0 " + p for p in problems))
        self.problems.setVisible(bool(problems))
        self.unroll.setVisible(unrolls(layer.type))

    def show_searched(self) -> None:
        """Mark the parameters the project's search varies."""
        form, head = self.form(), f"{self.name}."
        if form is None:
            return
        mine = {k[len(head):]: v for k, v in self.doc.project.search.items()
                if k.startswith(head)}
        form.set_searched(mine, describe_range)
        self.design.show_layer(self.name, form.searches)

    def _search(self, key: str) -> None:
        layer = self.doc.graph.layer(self.name)
        edit_search(self, self.doc, f"{self.name}.{key}", layer.spec.param(key),
                    layer.effective_params().get(key))

    def _kept(self) -> str | None:
        """The activations this layer alone keeps while training, on the chosen device."""
        est = self.memory.estimate if self.memory is not None else None
        if est is None or self.name not in est.layers:
            return None
        from designer.graph.memory import size_text
        return size_text(est.layers[self.name])

    def _rename(self) -> None:
        new = self.name_edit.text().strip()
        if self.name is None or new == self.name:
            self.name_error.hide()
            return
        try:
            rename_layer(self.doc, self.name, new)
        except GraphError as e:
            self.name_error.setText(str(e))
            self.name_error.show()
            self.name_edit.setText(self.name)
            return
        self.name_error.hide()

    def _edited(self, key: str, value) -> None:
        form = self.form()
        try:
            self.doc.set_param(self.name, key, value)
        except GraphError as e:
            form.show_error(key, str(e))
            self.refresh()
            return
        form.show_error(key, "")


class ProjectPanel(QWidget):
    """With no layer selected: the project's name, description and totals."""

    def __init__(self, doc, parent=None, memory=None) -> None:
        super().__init__(parent)
        self.doc, self.memory = doc, memory
        self.name_edit = QLineEdit(objectName="project_name")
        self.name_edit.editingFinished.connect(
            lambda: self._set("name", self.name_edit.text().strip() or "untitled"))
        self.description = QPlainTextEdit(objectName="project_description")
        self.description.setMaximumHeight(90)
        self.description.installEventFilter(self)
        self.totals = QLabel(textFormat=Qt.RichText, wordWrap=True)
        self.hint = caption("Select a layer on the canvas to edit it; drag layers from the "
                            "palette to add them.", self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 10)
        for w in (_heading("Project"), self.name_edit, _heading("Description"),
                  self.description, _heading("The net"), self.totals, self.hint):
            lay.addWidget(w)
        lay.addStretch(1)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.description and event.type() == QEvent.FocusOut:
            self._set("description", self.description.toPlainText())
        return False

    def _set(self, key: str, value: str) -> None:
        self.doc.set_setting("project", key, value)

    def refresh(self) -> None:
        p, g = self.doc.project, self.doc.graph
        if not self.name_edit.hasFocus():
            self.name_edit.setText(p.name)
        if not self.description.hasFocus() and self.description.toPlainText() != p.description:
            self.description.setPlainText(p.description)
        total = g.total_params()
        flops = [g.info(n).flops for n in g.names()]
        known = all(f is not None and D.known(f) for f in flops)
        dims = " &nbsp;".join(f"{k} = {v}" for k, v in g.dims.items()) or "none bound yet"
        errors = len(g.errors())
        self.totals.setText(
            f"{len(g)} layers, {len(g.links())} links<br>"
            f"<b>{'?' if total is None else f'{total:,}'}</b> learned parameters<br>"
            f"<b>{describe.flops(sum(flops)) if known else '?'}</b> per sample<br>"
            f"dims: {dims}<br>"
            + ("<span style='color:#2e9d57'>\u2714 valid</span>" if not errors else
               f"<span style='color:#d93b3b'>{errors} error{'s' * (errors > 1)}</span>")
            + self._memory_html())

    def _memory_html(self) -> str:
        """Training memory on the chosen device, its parts, and a warning when it cannot fit."""
        m = self.memory
        if m is None or m.estimate is None:
            return ""
        from designer.graph.memory import parts_text, size_text
        est = m.estimate
        text = (f"<br><br><b>{size_text(est.total)}</b> to train on {escape(m.where)} "
                f"({est.optimizer}, {est.precision})<br><span style='color:gray'>"
                f"{escape(parts_text(est))}</span>")
        if m.room is not None:
            text += f"<br>{escape(m.where)} has {size_text(m.room.total)}"
        if m.message:
            text += (f"<br><span style='color:#d93b3b'>\u26a0 It cannot train there: with the "
                     f"process around it, it needs about {size_text(est.needed)}. Make it "
                     "smaller (fewer units or layers, a smaller batch_size or seq_len), or "
                     "pick a larger device.</span>")
        return text


class SettingsPanel(QWidget):
    """The solver or the training settings of the project."""

    def __init__(self, doc, section: str, parent=None) -> None:
        super().__init__(parent)
        self.doc, self.section = doc, section
        self.form = ParamForm(S.SECTIONS[section], self, searchable=section == "solver")
        self.form.edited.connect(self._edited)
        self.form.search_requested.connect(self._search)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 10)
        note = {"solver": "How the weights are updated.",
                "training": "How a training run is driven, logged and checkpointed."}[section]
        lay.addWidget(caption(note + " Bold settings are set in the project; the others are "
                              "defaults.", self))
        self.warning = caption("", self, error=True)  # Adam with a strong weight decay
        self.warning.setVisible(False)
        lay.addWidget(self.warning)
        lay.addWidget(self.form)
        lay.addStretch(1)

    def refresh(self) -> None:
        values = self.doc.effective(self.section)
        self.form.set_values(values, set(getattr(self.doc.project, self.section)))
        note = S.adam_l2_note(values) if self.section == "solver" else None
        self.warning.setText(note or "")
        self.warning.setVisible(bool(note))
        head = f"{self.section}."
        self.form.set_searched({k[len(head):]: v for k, v in self.doc.project.search.items()
                                if k.startswith(head)}, describe_range)

    def _search(self, key: str) -> None:
        spec = self.form.specs[key]
        edit_search(self, self.doc, f"{self.section}.{key}", spec,
                    self.doc.effective(self.section).get(key))

    def _edited(self, key: str, value) -> None:
        try:
            self.doc.set_setting(self.section, key, value)
        except GraphError as e:
            self.form.show_error(key, str(e))
            self.refresh()
            return
        self.form.show_error(key, "")


class PropertiesPanel(QTabWidget):
    """The dock's contents: Layer (or Project), Solver and Training tabs."""

    def __init__(self, doc, parent=None, memory=None) -> None:
        super().__init__(parent)
        self.doc, self.graph = doc, None
        self.layer_panel = LayerPanel(doc, memory=memory)
        self.project_panel = ProjectPanel(doc, memory=memory)
        if memory is not None:
            memory.changed.connect(self._changed)
        self.first = PageSized()
        self.first.addWidget(self.project_panel)
        self.first.addWidget(self.layer_panel)
        self.solver, self.training = SettingsPanel(doc, "solver"), SettingsPanel(doc, "training")
        self.addTab(_scrolling(self.first), "Layer")
        self.addTab(_scrolling(self.solver), "Solver")
        self.addTab(_scrolling(self.training), "Training")
        self.setDocumentMode(True)
        self._project_timer = QTimer(self, singleShot=True, interval=0)
        self._project_timer.timeout.connect(self.project_panel.refresh)
        doc.graph_replaced.connect(self._bind)
        doc.settings_changed.connect(self._settings_changed)
        self._bind(doc.graph)

    @property
    def layer(self) -> str | None:
        return self.layer_panel.name if self.first.currentWidget() is self.layer_panel else None

    def _bind(self, graph) -> None:
        slots = (("layer_renamed", self._renamed), ("layer_removed", self._removed),
                 ("param_changed", self._changed), ("shapes_changed", self._changed),
                 ("dims_changed", self._changed), ("layer_added", self._changed),
                 ("link_added", self._changed), ("link_removed", self._changed))
        if self.graph is not None:
            for signal, slot in slots:
                getattr(self.graph, signal).disconnect(slot)
        self.graph = graph
        for signal, slot in slots:
            getattr(graph, signal).connect(slot)
        self.set_selection([])
        self.solver.refresh()
        self.training.refresh()

    def set_selection(self, names) -> None:
        """Show the one selected layer, or the project when none (or several) are selected."""
        names = list(names)
        if len(names) == 1 and names[0] in self.doc.graph:
            self.layer_panel.show_layer(names[0])
            self.first.setCurrentWidget(self.layer_panel)
            self.setTabText(0, "Layer")
        else:
            self.layer_panel.name = None
            self.project_panel.refresh()
            self.first.setCurrentWidget(self.project_panel)
            self.setTabText(0, "Project" if not names else f"{len(names)} layers")

    def _changed(self, *args) -> None:
        if self.layer is not None:
            self.layer_panel.refresh()
        else:  # totals walk the whole graph: once per burst of changes
            self._project_timer.start()

    def _renamed(self, old: str, new: str) -> None:
        if self.layer_panel.name == old:
            self.layer_panel.name = new
            self.layer_panel.name_edit.setText(new)
            self.layer_panel.refresh()

    def _removed(self, name: str) -> None:
        if self.layer_panel.name == name:
            self.set_selection([])

    def _settings_changed(self, section: str) -> None:
        if section == "project":
            self.project_panel.refresh()
        elif section == "solver":
            self.solver.refresh()
        elif section == "training":
            self.training.refresh()
        elif section == "search":  # a parameter marked or unmarked "Search over"
            self.solver.refresh()
            if self.layer is not None:
                self.layer_panel.show_searched()
