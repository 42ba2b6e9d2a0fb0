"""A warning about layers computed for nothing: a layer whose output goes nowhere, so that no
path from it reaches a loss (or a metric). The net still trains, and the layer's parameters
train to no end and cost their memory and time; the warning's fix removes the layer.

Only the end of such a branch is told (a layer with none of its outputs connected): removing
it makes the layer before it the end, told in turn. A layer nothing feeds has an error of its
own (its input is not connected), a layer with an output leading on is no dead end (a slice's
other half, a unit's cell state ``c`` may go unused), and a net with no loss has no dead ends (it
is told it has no loss). A branch that learns nothing (no layer of it has parameters: the
class probabilities a model computes for prediction beside its loss, a fixed transform) is
no dead end either: it trains nothing and may be read. Called from
:func:`designer.graph.lint.lint`.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix

SINKS = "Loss"  # the category of the layers a net's branches end in: losses and metrics


def dead_end_warnings(graph) -> list[DesignWarning]:
    """A warning for each layer that ends a branch leading to no loss, in layer order."""
    reach = _reaching_a_sink(graph)
    if not reach:  # a net with no loss yet is told so; its layers are no dead ends before
        return []
    out = []
    for layer in graph.layers():
        name = layer.name
        if name in reach or layer.spec.category == SINKS or layer.spec.is_source:
            continue
        if not graph.links_into(name) or graph.links_out_of(name):
            continue
        learned = _branch_params(graph, name, reach)
        if learned == 0:
            continue
        port = layer.spec.outputs[0].name
        fix = Fix("bypass", name, f"remove {name}")
        w = DesignWarning(
            f"{name}'s output reaches no loss: it is computed and trained for nothing "
            f"({D.count_text(learned)} parameters); {fix.text}, or connect "
            f"{name}.{port} to a layer on the way to the loss", name)
        w.fix = fix
        out.append(w)
    return out


def _branch_params(graph, end: str, reach: set):
    """The parameters of the branch that ends at ``end``: the layers above it that reach no
    loss either (a count, or a symbolic one where a size is not known yet)."""
    total, todo, seen = 0, [end], {end}
    while todo:
        name = todo.pop()
        params = graph.info(name).params
        total = total + params if isinstance(params, int) and isinstance(total, int) else \
            (params if total == 0 else total)
        for link in graph.links_into(name):
            if link.src not in seen and link.src not in reach:
                seen.add(link.src)
                todo.append(link.src)
    return total


def _reaching_a_sink(graph) -> set:
    """The layers from which some path reaches a loss or a metric (the "Loss" layers)."""
    todo = [la.name for la in graph.layers() if la.spec.category == SINKS]
    seen = set(todo)
    while todo:
        for link in graph.links_into(todo.pop()):
            if link.src not in seen:
                seen.add(link.src)
                todo.append(link.src)
    return seen
