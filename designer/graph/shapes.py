"""Shape propagation over symbolic dims: one layer at a time, in topological order.

``infer_layer`` computes what one layer outputs, its parameter count and FLOPs from what feeds it;
the graph model calls it incrementally (only a changed layer and what lies downstream of it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from designer.graph import dims as D
from designer.graph.errors import GraphError, ParamError, ShapeError, UnconnectedInputError
from designer.graph.spec import ANY, FLOAT, INDEX, InferContext, LayerSpec, TensorInfo


@dataclass
class LayerInfo:
    """What the graph knows about one layer after inference."""

    inputs: list = field(default_factory=list)   # TensorInfo | None per input port
    outputs: list = field(default_factory=list)  # TensorInfo | None per output port
    params: int | None = 0                       # None: depends on an unknown dim
    flops: Any = 0                               # forward FLOPs per sample; None if unknown
    problems: list = field(default_factory=list)  # GraphError

    @property
    def ok(self) -> bool:
        return not self.problems


def resolve_params(spec: LayerSpec, params: dict, dims: dict) -> dict:
    """The effective parameters, with dimension symbols (``V``) replaced where bound."""
    out = spec.defaults()
    out.update(params)
    for p in spec.params:
        if p.kind == "dim":
            out[p.name] = D.bind(out[p.name], dims)
    return out


def _bind(t: TensorInfo | None, dims: dict) -> TensorInfo | None:
    if t is None:
        return None
    values = None if t.values is None else D.bind(t.values, dims)
    return TensorInfo(tuple(D.bind(d, dims) for d in t.shape), t.dtype, values, t.batch)


def _dtype_problem(ctx: InferContext) -> None:
    for port, t in zip(ctx.spec.inputs, ctx.inputs):
        if t is None or port.dtype == ANY:
            continue
        if port.dtype == FLOAT and t.dtype == INDEX:
            ctx.fail(port.name, "real-valued features",
                     "token ids must go through an Embed layer first")
        if port.dtype == INDEX and t.dtype == FLOAT:
            ctx.fail(port.name, "integer ids")


def infer_layer(name: str, spec: LayerSpec, params: dict, inputs: list, sources: list,
                connected: list, dims: dict) -> LayerInfo:
    """Infer one layer.

    Parameters
    ----------
    name, spec, params
        The layer, its spec and its explicitly set parameters.
    inputs, sources
        Per input port: what arrives (``None`` if nothing does) and the layer it comes from.
    connected
        Per input port: whether a link feeds it (a link whose source failed gives ``None``
        without being a new problem here).
    dims
        The dims bound by the data layers.
    """
    info = LayerInfo(inputs=list(inputs), outputs=[None] * len(spec.outputs))
    eff = resolve_params(spec, params, dims)
    ctx = InferContext(name, spec, eff, list(inputs), list(sources), dims)
    if spec.check_params is not None:
        try:
            spec.check_params(eff)
        except ParamError as e:
            info.problems.append(e.for_layer(name))
    blocked = bool(info.problems)
    for port, t, linked in zip(spec.inputs, inputs, connected):
        if t is None and not port.optional:
            blocked = True
            if not linked:
                info.problems.append(UnconnectedInputError(
                    f"{name}: input '{port.name}' is not connected ({port.help})", name))
    if blocked:
        info.params, info.flops = None, None
        return info
    try:
        _dtype_problem(ctx)
        outs = [_bind(t, dims) for t in spec.infer(ctx)]
    except GraphError as e:
        if e.layer is None:
            e.layer = name
        info.problems.append(e)
        info.params, info.flops = None, None
        return info
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError) as e:
        info.problems.append(ShapeError(name, f"{name}: cannot work out its shapes ({e})"))
        info.params, info.flops = None, None
        return info
    info.outputs = outs
    info.params = spec.count_params(ctx, outs)
    info.flops = per_sample(spec.flops(ctx, outs), dims)
    return info


def per_sample(total: Any, dims: dict) -> Any:
    """Whole-batch FLOPs divided by the batch size N (when it is bound)."""
    if total is None:
        return None
    total = D.bind(total, dims)
    n = dims.get("N")
    if not n:
        return total
    if D.known(total):
        return total // n if total % n == 0 else round(total / n)
    return D.div(total, n) or total


def infer_at_steps(graph, steps: int) -> dict[str, LayerInfo]:
    """Every layer's shapes when the data layers serve ``steps`` time steps.

    The graph's own shapes hold for the data's T (a number, or the symbol ``T`` when only the
    data knows it); a fixed-length export needs them for a chosen number of steps instead. The
    layers' shape rules are replayed in topological order with ``T`` bound to ``steps`` (and
    the data layers' ``seq_len`` set to it), so a layer that changes the number of steps (a
    strided or 'valid' Conv1D, T' = ceil((T - reach) / stride)) tells the layers behind it how
    many they get. The graph itself is not changed.

    Returns
    -------
    dict
        Layer name -> :class:`LayerInfo`, whose ``problems`` say what does not work at that
        many steps (a kernel longer than the sequence).
    """
    dims = {**graph.dims, "T": steps}
    infos: dict[str, LayerInfo] = {}
    for name in graph.topological_order():
        layer = graph.layer(name)
        params = dict(layer.params)
        if layer.spec.is_source and layer.spec.has_param("seq_len"):
            params["seq_len"] = steps
        inputs, sources, connected = [], [], []
        for port in layer.spec.inputs:
            link = graph.link_into(name, port.name)
            src = None if link is None else infos[link.src]
            index = None if link is None else graph.layer(link.src).spec.output_index(
                link.src_port)
            inputs.append(None if src is None or index >= len(src.outputs)
                          else src.outputs[index])
            sources.append(None if link is None else link.src)
            connected.append(link is not None)
        infos[name] = infer_layer(name, layer.spec, params, inputs, sources, connected, dims)
    return infos
