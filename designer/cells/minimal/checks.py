"""A warning about MinGRU and MinLSTM layers that are valid but weaker than meant: one level
with no other recurrent layer before or after it.

Their gates and candidate read only the current input, so a single level can only blend
per-step features over time: no step's features depend on what came before it. Stacking levels
gives that back (the paper stacks three). Called from :func:`designer.graph.lint.lint`; the
warning's fix raises ``num_layers`` to 2.
"""
from __future__ import annotations

from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix
from designer.graph.lint import warns


@warns("MinGRU", "MinLSTM")
def min_warnings(graph, name: str) -> list[DesignWarning]:
    """The warning of one MinGRU or MinLSTM layer of one level alone."""
    layer = graph.layer(name)
    if layer.effective_params().get("num_layers", 1) > 1:
        return []
    if _recurrent_around(graph, name):
        return []
    fix = Fix("set", name, f"set {name}'s num_layers to 2", param="num_layers", value=2)
    w = DesignWarning(
        f"{name} is a {layer.type} of one level with no other recurrent layer before or after "
        "it: its gates and candidate see only the current input, so it can only blend "
        "per-step features over time, none of which depends on the steps before; stacked "
        f"levels give that back (the paper stacks three); {fix.text}", name)
    w.fix = fix
    return [w]


def _recurrent_around(graph, name: str) -> bool:
    """Whether a recurrent layer other than ``name`` feeds it or is fed by it, at any
    distance."""
    links = list(graph.links())
    for forward in (True, False):
        seen, todo = {name}, [name]
        while todo:
            here = todo.pop()
            for link in links:
                a, b = (link.src, link.dst) if forward else (link.dst, link.src)
                if a != here or b in seen:
                    continue
                if graph.layer(b).spec.category == "Recurrent":
                    return True
                seen.add(b)
                todo.append(b)
    return False
