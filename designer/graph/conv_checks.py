"""Warnings about a Conv1D whose kernel reaches further than the shortest sequence of its data.

The shapes check the kernel against the padded length T, the longest sequence's; a file of
sequences of different lengths also holds shorter ones (``designer.graph.sequence_lengths``
finds the shortest). Where the kernel spans more steps than that one:

- with padding valid, those sequences give no valid output step: every step the convolution
  keeps for them reads the padding after their end;
- with padding same or causal, the padding after their end is read as data unless the
  convolution is given the sequences' lengths (it then zeroes the padded steps).

Called from :func:`designer.graph.lint.lint`; each warning names the layer, the kernel, the
shortest length and its file, and comes with its :class:`designer.graph.hints.Fix`.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.elements import Link
from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix
from designer.graph.layers.conv import span
from designer.graph.sequence_lengths import shortest_sequence


def padded_source(graph, name: str, port: str) -> str | None:
    """The data layer with a 'lengths' output (padded sequences) that feeds ``port``."""
    seen, stack = set(), [graph.link_into(name, port)]
    while stack:
        k = stack.pop()
        if k is None or k.src in seen:
            continue
        seen.add(k.src)
        spec = graph.layer(k.src).spec
        if spec.is_source:
            if any(p.name == "lengths" for p in spec.outputs):
                return k.src
            continue
        stack.extend(graph.links_into(k.src))
    return None


def conv_warnings(graph, name: str) -> list[DesignWarning]:
    """The warnings of one Conv1D layer (none for other layers)."""
    layer = graph.layer(name)
    if layer.type != "Conv1D" or graph.info(name).problems:
        return []
    p = layer.effective_params()
    src = padded_source(graph, name, "x")
    if src is None or graph.layer(src).type != "SequenceClasses":
        return []
    x, data = graph.info(name).inputs[0], graph.output(src, "data")
    if x is None or data is None or x.rank != 3 or \
            not D.same(x.shape[1 if p["batch_first"] else 0], data.shape[0]):
        return []  # its steps are not the data's one for one: the shortest tells nothing
    params = graph.layer(src).effective_params()
    shortest = shortest_sequence(params, graph.project_dir)
    if shortest is None:
        return []
    steps = -(-shortest.steps // params["frame"])
    if span(p) < steps:
        return []
    kernel = (f"{name}'s kernel spans {span(p) + 1} steps (kernel_size {p['kernel_size']}, "
              f"dilation {p['dilation']}), more than the {steps} steps of the shortest "
              f"sequence in {shortest.path.name}")
    if p["padding"] == "valid":
        fix = Fix("set", name, f"set {name}'s padding to same", param="padding", value="same")
        return [_warn(f"{kernel}: with padding valid, those sequences give no valid output "
                      f"step; {fix.text}", name, fix)]
    if graph.link_into(name, "lengths") is not None or p["stride"] != 1:
        return []  # given the lengths, it zeroes the padding; with a stride it cannot be
    text = f"connect {src}.lengths to {name}.lengths"
    fix = Fix("connect", name, text, link=Link(src, "lengths", name, "lengths"))
    return [_warn(f"{kernel}, and {name} is not given the sequences' lengths: the "
                  f"padding after those sequences' end is read as data; {text}", name, fix)]


def _warn(message: str, layer: str, fix: Fix) -> DesignWarning:
    w = DesignWarning(message, layer)
    w.fix = fix
    return w
