"""Whether a link can be made, and what it would leave the layer it feeds: the judgement the
canvas shows while a wire is dragged (green, refused with a reason, or not yet judgeable).

The layer is judged as a whole, as it would be with the link made: a port whose layer still
lacks another required input is not called good, since what it carries can only be checked
against that input (a recurrent layer's ``cont`` against its ``x``); what can be checked
already (the kind of values the port takes) is.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from designer.graph.errors import CycleError, GraphError, PortError
from designer.graph.shapes import infer_layer
from designer.graph.spec import ANY, FLOAT, INDEX


@dataclass(frozen=True)
class ConnectVerdict:
    """What linking ``src.port`` to ``dst.port`` would do.

    Attributes
    ----------
    problem
        Why the link cannot be made, or the sentence of the problem it would give ``dst``;
        ``None`` when there is none.
    pending
        When ``dst`` still lacks another required input, what (the link can be made, but it is
        checked only once that input is there); else ``None``.
    """

    problem: str | None = None
    pending: str | None = None

    @property
    def ok(self) -> bool:
        """Good as a whole: no problem and nothing left to connect first."""
        return self.problem is None and self.pending is None


def check_connect(graph, src: str, src_port: str, dst: str, dst_port: str) -> None:
    """Raise ``PortError`` or ``CycleError`` if this link cannot be made."""
    s, d = graph.layer(src).spec, graph.layer(dst).spec
    if not any(p.name == src_port for p in s.outputs):
        raise PortError(f"{src} ({s.id}) has no output '{src_port}'", src)
    if not any(p.name == dst_port for p in d.inputs):
        raise PortError(f"{dst} ({d.id}) has no input '{dst_port}'", dst)
    existing = graph.link_into(dst, dst_port)
    if existing is not None:
        raise PortError(f"{dst}.{dst_port} is already fed by {existing.src}.{existing.src_port}"
                        "; disconnect that first", dst)
    g = graph._g
    if src == dst or nx.has_path(g, dst, src):
        path = [src] if src == dst else nx.shortest_path(g, dst, src)
        loop = " -> ".join(path + [dst])
        raise CycleError(f"linking {src} to {dst} would close a cycle: {loop}", dst)


def connect_verdict(graph, src: str, src_port: str, dst: str, dst_port: str) -> ConnectVerdict:
    """Judge the link and the whole layer it feeds, changing nothing (see the module doc)."""
    try:
        check_connect(graph, src, src_port, dst, dst_port)
    except GraphError as e:
        return ConnectVerdict(str(e))
    layer = graph.layer(dst)
    spec = layer.spec
    inputs, sources, connected = graph._gather(dst)
    i = spec.input_index(dst_port)
    inputs[i], sources[i], connected[i] = graph.output(src, src_port), src, True
    arriving = inputs[i]
    if arriving is None:
        return ConnectVerdict()  # the source itself has a problem; say nothing new
    port = spec.inputs[i]
    wrong = _kind_problem(dst, port, src, arriving)
    if wrong:
        return ConnectVerdict(wrong)
    info = infer_layer(dst, spec, layer.params, inputs, sources, connected, graph.dims)
    for p in info.problems:
        if p.kind != "unconnected":
            return ConnectVerdict(str(p))
    missing = [q.name for q, t, linked in zip(spec.inputs, inputs, connected)
               if t is None and not q.optional and not linked]
    if missing:
        names = " and ".join(f"'{m}'" for m in missing)
        return ConnectVerdict(None, f"{dst} still needs {names} connected; this link is "
                                    "checked against it then")
    return ConnectVerdict()


def _kind_problem(dst: str, port, src: str, t) -> str | None:
    """Ids into a port for real values, or the other way round (checkable on its own)."""
    if port.dtype == ANY:
        return None
    if port.dtype == FLOAT and t.dtype == INDEX:
        return (f"{dst} expects real-valued features on '{port.name}', but {src} gives {t} "
                "(token ids must go through an Embed layer first)")
    if port.dtype == INDEX and t.dtype == FLOAT:
        return f"{dst} expects integer ids on '{port.name}', but {src} gives {t}"
    return None
