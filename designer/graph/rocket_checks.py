"""A warning about a layer of fixed features (MiniRocket, Hydra) fed by layers that learn: it
passes no gradient back, so a layer before it whose only way to a loss runs through it never
trains.

Their features are fixed once fitted (its biases come from the data, not from a
gradient), and its output has no gradient to give its input. A layer with learned weights
before it (an Embed, a recurrent layer, an InnerProduct...) still trains when another path
leads from it to a loss; the warning names the nearest one that has none. Where a data layer
feeding the chain gives float sequences in the MiniRocket's layout, the fix reads them directly.

Called from :func:`designer.graph.lint.lint`.
"""
from __future__ import annotations

from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix

FIXED_FEATURES = ("MiniRocket", "Hydra")  # fitted from data, no gradient through them


def rocket_warnings(graph, name: str) -> list[DesignWarning]:
    """The warning of one layer of fixed features (none for other layers)."""
    if graph.layer(name).type not in FIXED_FEATURES or graph.info(name).problems:
        return []
    if not _reaches_loss(graph, name, name):
        return []  # nothing learns from its features yet: the net's own warnings say so
    untrained = [a for a in _before(graph, name)
                 if (graph.info(a).params or 0) and not _reaches_loss(graph, a, None)]
    if not untrained:
        return []
    also = f", nor do {_list(untrained[1:])}" if len(untrained) > 1 else ""
    fix = _read_data(graph, name)
    w = DesignWarning(f"{name} passes no gradient back, so {untrained[0]}'s weights never "
                      f"train{also}" + (f"; {fix.text}" if fix else ""), name)
    w.fix = fix
    return [w]


def _list(names: list) -> str:
    said = [f"{n}'s" for n in names[:3]] + ([f"{len(names) - 3} more"] if len(names) > 3
                                            else [])
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def _before(graph, name: str) -> list[str]:
    """The layers that feed ``name``'s input x, at any distance, nearest first."""
    order, todo = [], [name]
    while todo:
        here, todo = todo[0], todo[1:]
        ports = ("x",) if here == name else [p.name for p in graph.layer(here).spec.inputs]
        for port in ports:
            k = graph.link_into(here, port)
            if k is not None and k.src not in order:
                order.append(k.src)
                todo.append(k.src)
    return order


def _reaches_loss(graph, start: str, through: str | None) -> bool:
    """Whether a loss the net learns from follows ``start``, on a path that crosses no
    MiniRocket (other than ``through``, where the path starts at it)."""
    seen, todo = {start}, [start]
    while todo:
        here = todo.pop()
        for k in graph.links_out_of(here):
            layer = graph.layer(k.dst)
            if layer.spec.has_param("loss_weight"):
                return True
            if k.dst in seen or (layer.type in FIXED_FEATURES and k.dst != through):
                continue
            seen.add(k.dst)
            todo.append(k.dst)
    return False


def _read_data(graph, name: str) -> Fix | None:
    """Feed ``name`` from the data layer behind it, where that gives float sequences laid out
    as ``name`` reads them."""
    k = graph.link_into(name, "x")
    batch = 0 if graph.layer(name).get("batch_first") else 1
    for src in _before(graph, name):
        if not graph.layer(src).spec.is_source:
            continue
        for port in graph.layer(src).spec.outputs:
            out = graph.output(src, port.name)
            if port.name == "data" and out is not None and out.dtype == "float" and \
                    out.rank == 3 and out.batch == batch:
                return Fix("rewire", name, f"connect {src}.data to {name}.x instead",
                           link=k, new_source=(src, "data"))
    return None
