"""Layer type id -> LayerSpec.

The built-in layers come from :mod:`designer.graph.layers`; the recurrent cells register theirs
with :func:`register` when ``designer.cells`` is loaded (a cell from outside the designer
registers alike when its package is imported; :func:`unregister` takes a type out again). The
cell-wide questions (which types are recurrent, which engines hold whose tensors) are answered
from the registered cells' facts (:class:`designer.graph.cell.CellSpec`).
"""
from __future__ import annotations

import difflib

from designer.graph.cell import CellSpec
from designer.graph.errors import UnknownLayerError
from designer.graph.layers import ALL_SPECS
from designer.graph.spec import LayerSpec

CATEGORY_ORDER = ("Data", "Embedding", "Recurrent", "Sequence", "Core", "Activation", "Loss",
                  "Shape", "Building blocks")

_SPECS: dict[str, LayerSpec] = {s.id: s for s in ALL_SPECS}


def register(*specs: LayerSpec) -> None:
    """Add layer specs (a cell family's) to the registry; a type id is registered once."""
    for spec in specs:
        known = _SPECS.get(spec.id)
        if known is not None and known is not spec:
            raise ValueError(f"the layer type '{spec.id}' is registered already")
        _SPECS[spec.id] = spec


def unregister(*type_ids: str) -> None:
    """Take layer types out of the registry again (a cell loaded for a while, as a test loads
    one); ``UnknownLayerError`` for a type that is not registered. The cell's other parts are
    keyed by its names in the registries below (its builder, its unit's op...), which its
    owner takes out alike."""
    for type_id in type_ids:
        get(type_id)
    for type_id in type_ids:
        del _SPECS[type_id]


def get(type_id: str) -> LayerSpec:
    """The spec for ``type_id``; ``UnknownLayerError`` with a suggestion when there is none."""
    try:
        return _SPECS[type_id]
    except KeyError:
        near = difflib.get_close_matches(type_id, _SPECS, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise UnknownLayerError(f"unknown layer type '{type_id}'{hint}") from None


def ids() -> list[str]:
    return list(_SPECS)


def all_specs() -> list[LayerSpec]:
    return list(_SPECS.values())


def by_category() -> dict[str, list[LayerSpec]]:
    """Specs grouped by category, in palette order."""
    out: dict[str, list[LayerSpec]] = {c: [] for c in CATEGORY_ORDER}
    for s in _SPECS.values():
        out.setdefault(s.category, []).append(s)
    return {c: v for c, v in out.items() if v}


# -- the recurrent cells -----------------------------------------------------------------------
def cell(type_id: str) -> CellSpec | None:
    """The cell facts of a recurrent layer type; ``None`` for any other (or unknown) type."""
    spec = _SPECS.get(type_id)
    return None if spec is None else spec.cell


def recurrent_kinds() -> tuple[str, ...]:
    """The recurrent layer types, in registration order."""
    return tuple(s.id for s in _SPECS.values() if s.cell is not None)


def engine_kinds() -> tuple[str, ...]:
    """The recurrent layer types whose engine is a parameter."""
    return tuple(s.id for s in _SPECS.values() if s.cell is not None and s.has_param("engine"))


def weight_layout(engine: str) -> str:
    """The engine whose tensors ``engine`` holds (AUTO and PERSIST: CUDNN's; a cell's fused
    engine: the unrolled net's, CAFFE), as the registered cells declare."""
    for spec in _SPECS.values():
        if spec.cell is not None and engine in spec.cell.holds:
            return spec.cell.holds[engine]
    return engine


def engine_for(type_id: str, engine: str) -> str:
    """The engine a ``type_id`` layer runs on when every recurrent layer is asked to run on
    ``engine`` (auto, cudnn, caffe or persist, any case)."""
    c = cell(type_id)
    return engine.upper() if c is None else c.runs_on(engine)
