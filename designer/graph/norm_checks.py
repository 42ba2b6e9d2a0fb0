"""Warnings about BatchNorm and LayerNorm layers that are valid but will not do what is meant:
a BatchNorm training on a batch of one (mended by a bigger batch or, where the data layer's
batch_size cannot be raised, by a LayerNorm in its place), and a layer whose channel count is
not known yet.

Called from :func:`designer.graph.lint.lint`; each warning names the layer, and comes with its
:class:`designer.graph.hints.Fix` when one edit mends it.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import DesignWarning
from designer.graph.hints import Fix

NORMS = ("BatchNorm", "LayerNorm")
FALLBACK_BATCH = 32  # what a fix raises batch_size to when the data layer's default is 1


def norm_warnings(graph, name: str) -> list[DesignWarning]:
    """The warnings of one BatchNorm or LayerNorm layer (none for other layers)."""
    layer = graph.layer(name)
    if layer.type not in NORMS:
        return []
    x = graph.info(name).inputs[0]
    if x is None or not x.shape:
        return []
    c = x.shape[-1]
    if not D.known(c):
        what = "statistics" if layer.type == "BatchNorm" else "scale and shift"
        return [DesignWarning(
            f"{name} cannot size its per-channel {what} yet: its input {x} has '{c}' "
            "channels (its last dim), a number known only once the data is read", name)]
    if layer.type == "BatchNorm":
        return _batch_of_one(graph, name, x)
    return []


def _batch_of_one(graph, name: str, x) -> list[DesignWarning]:
    """A BatchNorm whose batch holds one sequence normalises by that sequence's own
    statistics in training (a vector's: by itself), not by the batch's."""
    first = graph.layer(name).effective_params().get("batch_first", False)
    axis = x.batch if x.batch is not None else (0 if x.rank == 2 or first else 1)
    if x.shape[axis] != 1:
        return []
    what = ("each channel holds a single value, which a batch norm cannot normalise (torch "
            "stops the training step with an error)" if x.rank == 2
            else "its statistics are those of a single sequence, unlike the running "
            "statistics it uses at evaluation")
    fix = _raise_batch(graph)
    tail = f"{fix.text}, or use a LayerNorm" if fix else f"replace {name} with a LayerNorm"
    w = DesignWarning(f"{name} trains on a batch of one (N = 1): {what}; {tail}, which "
                      "needs no batch", name)
    w.fix = fix or _to_layer_norm(name)
    return [w]


def _to_layer_norm(name: str) -> Fix:
    """Make the BatchNorm a LayerNorm of the same name (where no batch_size can be raised)."""
    return Fix("replace", name, f"replace {name} with a LayerNorm", insert_type="LayerNorm")


def _raise_batch(graph) -> Fix | None:
    """Set the data layer's batch_size of 1 to its default (or 32)."""
    for src in graph.sources():
        layer = graph.layer(src)
        if not layer.spec.has_param("batch_size") or layer.get("batch_size") != 1:
            continue
        default = layer.spec.param("batch_size").default
        value = default if isinstance(default, int) and default > 1 else FALLBACK_BATCH
        return Fix("set", src, f"set {src}'s batch_size to {value}", param="batch_size",
                   value=value)
    return None
