"""Layer type id -> LayerSpec."""
from __future__ import annotations

import difflib

from .errors import UnknownLayerError
from .layers import ALL_SPECS
from .spec import LayerSpec

CATEGORY_ORDER = ("Data", "Embedding", "Recurrent", "Sequence", "Core", "Activation", "Loss",
                  "Shape", "Building blocks")

_SPECS: dict[str, LayerSpec] = {s.id: s for s in ALL_SPECS}


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
