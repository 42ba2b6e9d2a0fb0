"""Warnings about nets that are valid but almost certainly not what was meant.

Each comes with the fix (a :class:`designer.graph.hints.Fix`) the window offers in one click.
The checks register per layer type (:func:`warns`); a cell registers its own when it loads.
"""
from __future__ import annotations

from typing import Callable

from designer.graph.conv_checks import conv_warnings, padded_source
from designer.graph.dead_ends import dead_end_warnings
from designer.graph.elements import Link
from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix
from designer.graph.norm_checks import norm_warnings
from designer.graph.rocket_checks import FIXED_FEATURES, rocket_warnings

Check = Callable[[object, str], list]  # (graph, layer name) -> its warnings
CHECKS: dict[str, list[Check]] = {}  # layer type -> the checks of its layers


def warns(*type_ids: str):
    """Register ``check(graph, name) -> [DesignWarning]`` for the layers of ``type_ids``."""
    def register(check: Check) -> Check:
        for t in type_ids:
            CHECKS.setdefault(t, []).append(check)
        return check
    return register


def lint(graph) -> list[DesignWarning]:
    """Every design warning of ``graph``, in layer order."""
    out: list[DesignWarning] = []
    for layer in graph.layers():
        for check in CHECKS.get(layer.type, ()):
            out.extend(check(graph, layer.name))
        out.extend(norm_warnings(graph, layer.name))
    out.extend(dead_end_warnings(graph))
    return out


def _warn(message: str, layer: str, fix: Fix) -> DesignWarning:
    w = DesignWarning(message, layer)
    w.fix = fix
    return w


@warns("SoftmaxWithLoss", "Accuracy")
def _softmax_before(graph, name: str) -> list[DesignWarning]:
    """A Softmax feeding a loss that applies its own softmax (probabilities squashed twice)."""
    k = graph.link_into(name, "logits")
    if k is None or graph.layer(k.src).type != "Softmax" or graph.layer(name).type != \
            "SoftmaxWithLoss" or graph.link_into(k.src, "x") is None:
        return []
    src = graph.link_into(k.src, "x").src
    fix = Fix("bypass", k.src, f"remove {k.src} and connect {src} straight to {name}")
    return [_warn(f"{k.src} turns the scores into probabilities before {name}, which applies "
                  f"its own softmax: the net would learn from squashed scores and train "
                  f"slowly, if at all; {fix.text}", k.src, fix)]


@warns("SoftmaxWithLoss", "Accuracy")
def _labels_are_inputs(graph, name: str) -> list[DesignWarning]:
    """A loss whose labels are the very ids the net reads (it would learn to copy them)."""
    k = graph.link_into(name, "label")
    if k is None or not graph.layer(k.src).spec.is_source:
        return []
    spec = graph.layer(k.src).spec
    ports = [p.name for p in spec.outputs]
    if k.src_port != "data" or "label" not in ports:
        return []
    fed = [d for d in graph.links_out_of(k.src) if d.src_port == "data" and d.dst != name]
    if not fed:
        return []
    text = f"connect {k.src}.label to {name}.label instead of {k.src}.data"
    fix = Fix("rewire", name, text, link=k, new_source=(k.src, "label"))
    return [_warn(f"{name} scores the net against {k.src}.data, the very input it reads "
                  f"(through {fed[0].dst}): it would learn to copy, not to predict; {text}",
                  name, fix)]


POOLED_PADDING = {
    "mean": "their padded steps are averaged in, pulling short sequences towards the padding",
    "max": "their padded steps can win the max",
    "attention": "their padded steps get attention weights too",
}


@warns("SequencePool")
def _pool_without_lengths(graph, name: str) -> list[DesignWarning]:
    """A SequencePool over padded sequences whose 'lengths' input is left unconnected."""
    if graph.link_into(name, "lengths") is not None:
        return []
    src = padded_source(graph, name, "x")
    if src is None:
        return []
    method = graph.layer(name).get("method")
    text = f"connect {src}.lengths to {name}.lengths"
    fix = Fix("connect", name, text, link=Link(src, "lengths", name, "lengths"))
    return [_warn(f"{name} pools {src}'s sequences over every step, but {src} pads them to "
                  f"the longest and {name} is not given their lengths: "
                  f"{POOLED_PADDING[method]}; {text}", name, fix)]


warns("Conv1D")(conv_warnings)
for _kind in FIXED_FEATURES:
    warns(_kind)(rocket_warnings)
