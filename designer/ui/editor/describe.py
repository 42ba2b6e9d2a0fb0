"""Words for the canvas: counts, shapes, and the tool-tips of layers, ports, links and specs.

Everything here reads the graph model and returns text (tool-tips are small HTML); nothing
changes the model.
"""
from __future__ import annotations

from html import escape

from designer.graph import dims as D
from designer.graph.errors import GraphWarning

MAX_TIP_PARAMS = 12


count = D.count_text  # "3.21 M", "33.3 k", "990", "?"


def exact(n) -> str:
    """``3,184,640``; ``?`` when unknown; a symbolic count as it is."""
    if n is None:
        return "?"
    return f"{n:,}" if D.known(n) else str(n)


def flops(n) -> str:
    return "? FLOPs" if n is None else f"{count(n)}FLOPs" if D.known(n) and n >= 1000 \
        else f"{count(n)} FLOPs"


def shape(t) -> str:
    return "?" if t is None else str(t)


def output(graph, name: str, port: str):
    """What an output port carries, or ``None`` (also while a bulk change is half done)."""
    info = graph.info(name)
    i = graph.layer(name).spec.output_index(port)
    return info.outputs[i] if i < len(info.outputs) else None


def outputs_line(graph, name: str) -> str:
    """What a node shows under its name: its output shape(s), and its spec's caption (how a
    choice of its parameters makes it work)."""
    layer = graph.layer(name)
    caption = layer.spec.caption(layer.effective_params()) if layer.spec.caption else ""
    return _outputs(graph, name) + (f" \u00b7 {caption}" if caption else "")


def _outputs(graph, name: str) -> str:
    info = graph.info(name)
    outs = [shape(t) for t in info.outputs]
    if not outs:
        return "no outputs"
    if len(outs) == 1:
        return outs[0]
    bare = {"?" if t is None else D.shape_str(t.shape) for t in info.outputs}
    if len(bare) == 1:
        return f"{len(outs)} outputs {bare.pop()}"
    return "  ".join(outs)


def errors_of(graph, name: str) -> list[str]:
    """The errors told about a layer: found on it, or found downstream and mended here."""
    return [str(p) for p in graph.problems()
            if p.layer == name and not isinstance(p, GraphWarning)]


def warnings_of(graph, name: str) -> list[str]:
    """Warnings about a layer (a corpus that cannot be read, a softmax before the loss)."""
    return [str(p) for p in graph.problems() if isinstance(p, GraphWarning) and p.layer == name]


def link_problem(graph, link) -> str | None:
    """The problem of the link's destination that is about this link's port, if any."""
    if link.dst not in graph:
        return None
    for p in graph.info(link.dst).problems:
        text = str(p)
        if f"on '{link.dst_port}'" in text:
            return text
    return None


def _p(text: str, style: str = "") -> str:
    return f"<p style='margin:0;{style}'>{text}</p>"


def layer_tooltip(graph, name: str) -> str:
    """What the layer does, its parameters, input and output shapes, parameters and FLOPs."""
    layer, info = graph.layer(name), graph.info(name)
    spec = layer.spec
    rows = [f"<b>{escape(name)}</b> &nbsp;<span style='color:gray'>{escape(spec.id)} "
            f"({escape(spec.category)})</span>", _p(escape(spec.summary), "margin-top:3px")]
    if spec.help and spec.help != spec.summary:
        rows.append(_p(escape(spec.help), "color:gray;margin-top:2px"))
    shapes = []
    for port, t in zip(spec.inputs, info.inputs or [None] * len(spec.inputs)):
        shapes.append(f"<tr><td>in&nbsp;<b>{port.name}</b></td><td>{escape(shape(t))}</td></tr>")
    for port, t in zip(spec.outputs, info.outputs or [None] * len(spec.outputs)):
        shapes.append(f"<tr><td>out&nbsp;<b>{port.name}</b></td><td>{escape(shape(t))}"
                      "</td></tr>")
    if shapes:
        rows.append("<table cellspacing=0 cellpadding=1 style='margin-top:4px'>"
                    + "".join(shapes) + "</table>")
    eff = layer.effective_params()
    items = []
    for p in spec.params[:MAX_TIP_PARAMS]:
        value = escape(repr(eff[p.name]) if isinstance(eff[p.name], str) else str(eff[p.name]))
        mark = "<b>" if p.name in layer.params else ""
        end = "</b>" if mark else ""
        items.append(f"{p.name} = {mark}{value}{end}")
    if items:
        rows.append(_p("Parameters: " + ", ".join(items), "margin-top:4px"))
    rows.append(_p(f"<b>{exact(info.params)}</b> learned parameters &nbsp;\u00b7&nbsp; "
                   f"<b>{escape(flops(info.flops))}</b> per sample", "margin-top:4px"))
    for text in errors_of(graph, name):
        rows.append(_p("\u26a0 " + escape(text), "color:#d93b3b;margin-top:3px"))
    for text in warnings_of(graph, name):
        rows.append(_p("\u26a0 " + escape(text), "color:#c07a00;margin-top:3px"))
    rows.append(_p(escape(spec.read_more()), "color:gray;margin-top:4px"))
    return "<qt>" + "".join(rows) + "</qt>"


def port_tooltip(graph, name: str, port: str, is_input: bool) -> str:
    layer, info = graph.layer(name), graph.info(name)
    spec = layer.spec
    if is_input:
        i = spec.input_index(port)
        pspec, t = spec.inputs[i], (info.inputs[i] if info.inputs else None)
        feed = graph.link_into(name, port)
        where = f"fed by {feed.src}.{feed.src_port}" if feed else \
            ("optional, not connected" if pspec.optional else "not connected")
    else:
        i = spec.output_index(port)
        pspec, t = spec.outputs[i], (info.outputs[i] if info.outputs else None)
        n = sum(1 for link in graph.links_out_of(name) if link.src_port == port)
        where = f"feeds {n} input{'s' if n != 1 else ''}"
    kind = "input" if is_input else "output"
    return (f"<qt><b>{escape(name)}.{escape(port)}</b> &nbsp;<span style='color:gray'>{kind}, "
            f"{escape(where)}</span>" + _p(f"shape <b>{escape(shape(t))}</b>", "margin-top:3px")
            + _p(escape(pspec.help), "color:gray") + "</qt>")


def link_tooltip(graph, link) -> str:
    t = output(graph, link.src, link.src_port) if link.src in graph else None
    rows = [f"<b>{escape(str(link))}</b>", _p(f"shape <b>{escape(shape(t))}</b>")]
    problem = link_problem(graph, link)
    if problem:
        rows.append(_p("\u26a0 " + escape(problem), "color:#d93b3b"))
    return "<qt>" + "".join(rows) + "</qt>"


def spec_tooltip(spec) -> str:
    """The palette's tool-tip: what the layer does, its ports and parameters."""
    ports = []
    if spec.inputs:
        ports.append("in: " + ", ".join(p.name + (" (optional)" if p.optional else "")
                                        for p in spec.inputs))
    if spec.outputs:
        ports.append("out: " + ", ".join(p.name for p in spec.outputs))
    params = "".join(f"<tr><td><b>{p.name}</b></td><td>{escape(str(p.default))}</td>"
                     f"<td style='color:gray'>{escape(p.help)}</td></tr>" for p in spec.params)
    return (f"<qt><b>{escape(spec.id)}</b> <span style='color:gray'>({escape(spec.category)})"
            f"</span>" + _p(escape(spec.help), "margin-top:3px")
            + _p(escape(" \u00b7 ".join(ports)), "margin-top:3px")
            + (f"<table cellspacing=0 cellpadding=2 style='margin-top:3px'>{params}</table>"
               if params else "") + _p(escape(spec.read_more()), "color:gray;margin-top:4px")
            + "</qt>")
