"""A layer's type swapped in place: the new layer takes its name, its place in the order and on
the canvas, the parameters both types have and the links to ports the new type has too (a
BatchNorm that trains on a batch of one becomes a LayerNorm, its 'lengths' link let go).

:func:`kept` says what survives (the window makes the swap from it as undoable steps);
:func:`replace_layer` makes it on a graph directly.
"""
from __future__ import annotations

from designer.graph import registry
from designer.graph.elements import Link
from designer.graph.errors import GraphError


def kept(graph, name: str, type_id: str, params: dict | None = None
         ) -> tuple[dict, list[Link]]:
    """``(parameters, links)`` a layer keeps when it becomes a ``type_id``: the parameters set
    on it that the new type has and accepts, ``params`` on top, and its links whose port on
    it the new type has."""
    layer, spec = graph.layer(name), registry.get(type_id)
    out = {}
    for key, value in layer.params.items():
        if spec.has_param(key):
            try:
                out[key] = spec.param(key).check(value)
            except GraphError:
                continue
    out.update(params or {})
    ins, outs = {p.name for p in spec.inputs}, {p.name for p in spec.outputs}
    links = [k for k in graph.links_into(name) if k.dst_port in ins] + \
        [k for k in graph.links_out_of(name) if k.src_port in outs]
    return out, links


def replace_layer(graph, name: str, type_id: str, params: dict | None = None) -> None:
    """Make ``name`` a ``type_id`` layer, keeping what :func:`kept` says."""
    new_params, links = kept(graph, name, type_id, params)
    index, pos = graph.index_of(name), graph.layer(name).pos
    with graph.bulk():
        graph.remove_layer(name)
        graph.add_layer(type_id, name, new_params, pos, index)
        for k in links:
            graph.connect(k.src, k.src_port, k.dst, k.dst_port)
