"""Weight conversion between the engines of a recurrent layer, both ways.

Engines that hold the same tensors (:attr:`designer.graph.cell.CellSpec.holds`) need none: a
checkpoint of one loads into the other as it is. Where a cell's engines hold different
tensors, the cell registers a converter for its layer types with :func:`converter`; a model
trained on one engine then loads and runs on the other, computing the same function.
"""
from __future__ import annotations

from typing import Callable

from designer.graph import parts, registry
from designer.graph.cell import article
from designer.graph.once import put

# (kind, tensors with module-relative keys, levels, source layout, destination layout) -> tensors
Converter = Callable[[str, dict, int, str, str], dict]
CONVERTERS: dict[str, Converter] = {}


def converter(*kinds: str):
    """Register ``fn(kind, sd, levels, src, dst) -> dict`` as the weight converter of the
    layer types ``kinds``: it takes a layer's tensors (module-relative keys) held as engine
    ``src`` holds them to those ``dst`` holds (``src`` and ``dst`` are layouts: two engines
    that hold different tensors)."""
    def register(fn: Converter) -> Converter:
        for kind in kinds:
            put(CONVERTERS, kind, fn, "the weight converter")
        return fn
    return register


def layout(kind: str, engine: str) -> str:
    """The engine whose tensors a ``kind`` layer on ``engine`` holds."""
    cell = registry.cell(kind)
    return registry.weight_layout(engine) if cell is None else cell.layout(engine)


def convert_layer(kind: str, sd: dict, levels: int, src: str, dst: str) -> dict:
    """Convert one recurrent layer's tensors (module-relative keys) from engine src to dst.

    Both directions of a bidirectional layer are converted (its tensors show it has two).
    """
    src, dst = layout(kind, src), layout(kind, dst)
    if src == dst:
        return dict(sd)
    parts.need(parts.ENGINES)
    convert = CONVERTERS.get(kind)
    if convert is None:
        raise ValueError(f"{article(kind)} layer's weights cannot be converted from the {src} "
                         f"engine's to the {dst} engine's")
    return convert(kind, sd, levels, src, dst)


def convert_state_dict(state: dict, layers: dict, src: dict, dst: dict) -> dict:
    """Convert a whole ``Net`` state dict between engine choices.

    Parameters
    ----------
    state
        ``Net.state_dict()`` keys (``layers.<name>.<param>``).
    layers
        Recurrent layer name -> ``(kind, num_layers)``.
    src, dst
        Recurrent layer name -> the engine the state has / should have (an engine that
        holds another's tensors converts as that one).
    """
    out = {}
    per_layer: dict[str, dict] = {}
    for key, value in state.items():
        _, name, rest = key.split(".", 2)
        if name in layers and _layout(layers[name][0], src.get(name)) != \
                _layout(layers[name][0], dst.get(name)):
            per_layer.setdefault(name, {})[rest] = value
        else:
            out[key] = value
    for name, sd in per_layer.items():
        kind, levels = layers[name]
        for rest, value in convert_layer(kind, sd, levels, src[name], dst[name]).items():
            out[f"layers.{name}.{rest}"] = value
    return out


def _layout(kind: str, engine: str | None) -> str | None:
    return None if engine is None else layout(kind, engine)
