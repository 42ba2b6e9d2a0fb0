"""The design choices a search can make of the selected layer, beside its parameters' "Search
over" buttons: a recurrent layer's type, which inputs a join keeps, and a convolution block
plain or residual (the search space's ``LAYER.type``, ``JOIN.inputs`` and ``CONV.residual``).

Each choice the layer allows has a button that opens the same range editor as a parameter's
(its values checked as ``rnn-designer search`` checks them, written as one undoable step);
under the buttons, what the project's search varies of the layer beyond the form's rows.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QVBoxLayout, QWidget

from designer.graph.spec import ParamSpec
from designer.ui.look import resources, theme

from designer.ui.forms.param_form import caption
from designer.ui.forms.search_over import check_entry, describe, edit_search

TEXT = {"type": "Search its type", "inputs": "Search its branches",
        "residual": "Search plain or residual"}


def choices_of(doc, name: str) -> list[ParamSpec]:
    """The design choices ``name`` allows (those ``rnn-designer search`` takes for it), each
    as the spec the range editor edits."""
    from designer.search.design import retyping_kinds
    from designer.search.residual import residual_parts
    graph = doc.graph
    layer = graph.layer(name)
    kinds = retyping_kinds()
    ports = tuple(p.name for p in layer.spec.inputs if not p.optional)
    candidates = [
        ParamSpec("type", "choice", layer.type, "each trial makes the layer one of these "
                  "types, keeping its links and the parameters they share", choices=kinds),
        ParamSpec("inputs", "choice", "both", "a trial keeps one branch (what fed only the "
                  "other goes) or both", choices=ports + ("both",)),
        ParamSpec("residual", "bool", residual_parts(graph, name) is not None, "true makes "
                  "the Conv1D -> BatchNorm -> ReLU block a residual block: two more "
                  "convolutions and a shortcut added around it"),
    ]
    offered = {"type": layer.type in kinds, "residual": True,
               "inputs": not layer.spec.has_param("inputs")}  # a data layer's own parameter
    return [s for s in candidates if offered[s.name] and not check_entry(
        doc.project, f"{name}.{s.name}", {"choice": list(s.choices) or [False, True]})]


class DesignChoices(QWidget):
    """The buttons for the layer's design choices and the caption of those searched."""

    def __init__(self, doc, parent=None) -> None:
        super().__init__(parent)
        self.doc, self.name, self.specs = doc, None, {}
        self.buttons: dict[str, QToolButton] = {}
        lay = QVBoxLayout(self)  # a button a line: a row of three outgrows the dock
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        for key, text in TEXT.items():
            button = resources.themed(QToolButton(self, autoRaise=True), "search")
            button.setObjectName(f"search_design_{key}")
            button.setText(text)
            button.setToolButtonStyle(button.toolButtonStyle().ToolButtonTextBesideIcon)
            button.clicked.connect(lambda _=False, k=key: self._edit(k))
            self.buttons[key] = button
            button.hide()  # shown for the layers that have the choice
            lay.addWidget(button, 0, Qt.AlignLeft)
        self.searched = caption("", self)
        self.searched.setStyleSheet(f"color: {theme.colors.accent.name()};")
        lay.addWidget(self.searched)

    def show_layer(self, name: str, form_keys) -> None:
        """Offer ``name``'s choices and say what the search varies of it beyond
        ``form_keys`` (the parameters its form marks itself)."""
        self.name = name
        self.specs = {s.name: s for s in choices_of(self.doc, name)}
        for key, button in self.buttons.items():
            button.setVisible(key in self.specs)
            entry = self.doc.project.search.get(f"{name}.{key}")
            button.setToolTip(f"{self.specs[key].help}; searched over: {describe(entry)}"
                              if key in self.specs and entry else
                              self.specs[key].help if key in self.specs else "")
        head = f"{name}."
        other = [f"\u21c4 searched over: its {k[len(head):]}: {describe(v)}"
                 for k, v in self.doc.project.search.items()
                 if k.startswith(head) and k[len(head):] not in form_keys]
        self.searched.setText("\n".join(other))
        self.searched.setVisible(bool(other))
        self.setVisible(bool(self.specs) or bool(other))

    def _edit(self, key: str) -> None:
        spec = self.specs[key]
        edit_search(self, self.doc, f"{self.name}.{key}", spec, spec.default)
