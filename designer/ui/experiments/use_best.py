"""A trial's parameters put into the design as one undoable step ("Use best"), with the steps it
trained where the search fixed them (`trained_values`).

What a trial's values mean is the search's own business (`designer.search.design.apply`:
``layer.param`` a layer's parameter, ``solver.param`` or ``training.param`` a setting,
``layer.type`` the layer retyped in place, a SequencePool's ``last``, a join's ``inputs``
keeping one branch, a convolution block's ``residual``). That gives the design the trial
trained; the difference from the document's design is then made through the document,
command by command, inside one undo macro: layers retyped (as the Problems panel's "replace"
fix does), layers dropped, layers added (a residual block's, the design then laid out as the
trial's was), links changed, parameters and settings set. One Undo takes it all back.
"""
from __future__ import annotations

from designer.graph.errors import GraphError
from designer.graph.hints import Fix, value_text
from designer.graph.settings import SECTIONS
from designer.ui.editor.commands import UNSET


STEPS = "solver.max_steps"


def trained_values(project, row) -> tuple[dict, str]:
    """What trial ``row`` trained: its parameters, with ``solver.max_steps`` set to the steps
    it was to train where that differs from what its parameters leave (a search run with a
    fixed number of steps a trial); and a few words saying so, or ''."""
    params = dict(row.params)
    held = params.get(STEPS, project.solver_settings().get("max_steps"))
    if row.max_steps and row.max_steps != held:
        params[STEPS] = int(row.max_steps)
        return params, f"max_steps {row.max_steps:,}, as trial {row.number} trained"
    return params, ""


def trained_design(project, params: dict):
    """The project ``params`` make of ``project`` (a copy); `GraphError` in one sentence."""
    from designer.search.design import DesignError, apply
    from designer.search.space import SpaceError, parse_space
    if not params:
        raise GraphError("the trial has no parameters")
    pinned = {key: {"choice": [value]} for key, value in params.items()}
    try:
        return apply(project, parse_space(pinned, project), params)
    except SpaceError as e:
        raise GraphError(e.problems[0]) from None
    except DesignError as e:
        raise GraphError(str(e)) from None


def use_params(doc, params: dict, text: str) -> int:
    """Make the document's design what ``params`` make of it, as one undo step named
    ``text``; the number of edits (0: it already was, and nothing is pushed).

    Raises `GraphError` (one sentence) and changes nothing when the values cannot be used.
    """
    target = trained_design(doc.project, params)
    if not _differs(doc, target):
        return 0
    before = doc.stack.index()
    doc.stack.beginMacro(text)
    try:
        edits = _make(doc, target)
    except GraphError:
        doc.stack.endMacro()
        if doc.stack.index() > before:
            doc.stack.undo()  # what was made of the step goes back
        raise
    doc.stack.endMacro()
    return edits


def _make(doc, target) -> int:
    g, t = doc.graph, target.graph
    edits = 0
    for name in list(g.names()):
        if name in t and t.layer(name).type != g.layer(name).type:
            new = t.layer(name).type
            doc.apply_fix(Fix("replace", name, f"make {name} a {new}", insert_type=new))
            edits += 1
    gone = [n for n in g.names() if n not in t]
    if gone:
        doc.remove(gone)
        edits += 1
    added = [n for n in t.names() if n not in g]
    for name in added:
        layer = t.layer(name)
        doc.add_layer(layer.type, layer.pos, name, dict(layer.params))
        edits += 1
    if added:  # the trial's design was laid out again around the layers it added
        doc.move({n: (g.layer(n).pos, t.layer(n).pos) for n in t.names()})
    old, new = set(g.links()), set(t.links())
    for link in sorted(old - new, key=str):
        doc.disconnect(link)
        edits += 1
    for link in sorted(new - old, key=str):
        doc.connect(link.src, link.src_port, link.dst, link.dst_port)
        edits += 1
    for name in t.names():
        have, want = g.layer(name).params, t.layer(name).params
        for key in sorted(set(have) | set(want)):
            if have.get(key, UNSET) != want.get(key, UNSET):
                value = want.get(key, UNSET)
                doc.set_param(name, key, value, None if value is UNSET else
                              f"Set {name}.{key} to {value_text(value, g.dims)}")
                edits += 1
    for section in SECTIONS:
        have, want = getattr(doc.project, section), getattr(target, section)
        for key in sorted(set(have) | set(want)):
            if have.get(key, UNSET) != want.get(key, UNSET):
                doc.set_setting(section, key, want.get(key, UNSET))
                edits += 1
    return edits


def _differs(doc, target) -> bool:
    g, t = doc.graph, target.graph

    def layers(graph) -> dict:
        return {la.name: (la.type, la.params) for la in graph.layers()}

    return layers(g) != layers(t) or set(g.links()) != set(t.links()) or \
        any(getattr(doc.project, s) != getattr(target, s) for s in SECTIONS)
