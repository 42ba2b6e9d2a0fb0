"""The dims the data layers bind (T, N, V...), with a note for each that cannot be bound."""
from __future__ import annotations

from .errors import DataWarning, GraphError


def bind_dims(graph) -> tuple[dict[str, int], list[GraphError]]:
    """What the graph's data layers (and the dims pinned from outside) bind, and the notes.

    A data layer that cannot read its data binds what it can and says why (a warning); two
    data layers that bind one dim differently are told; a pinned dim (a checkpoint's V) wins
    over what the data says, and is told when they differ.
    """
    dims: dict[str, int] = {}
    notes: list[GraphError] = []
    for name in graph.sources():
        layer = graph.layer(name)
        found, warning = layer.spec.source_dims(layer.effective_params(), graph.project_dir)
        if warning:
            notes.append(DataWarning(f"{name}: {warning}", name))
        for k, v in found.items():
            if k in dims and dims[k] != v:
                notes.append(DataWarning(
                    f"{name}: binds {k} = {v} but another data layer binds {k} = {dims[k]}",
                    name))
                continue
            dims[k] = v
    pinned = graph._pinned
    for k, v in pinned.items():
        if k in dims and dims[k] != v:
            notes.append(DataWarning(f"the data now gives {k} = {dims[k]}, but {k} is "
                                     f"fixed at {v}"))
        dims[k] = v
    if pinned:  # what the data could not say is known now: drop those notes
        notes = [n for n in notes if "is unknown" not in str(n) or "V" not in pinned]
    return dims, notes
