"""The parts a cell family registers after its spec: a cell's spec is pure and registers when
the cell is loaded, while its engines (torch) and its exports (onnx) wait until they are needed,
so that the window starts without importing torch.

``defer(part, module)`` names a module to import before the registries of ``part`` are read;
the registries call ``need(part)`` before each look-up. Nothing here knows a cell.
"""
from __future__ import annotations

import importlib

ENGINES, EXPORTS = "engines", "exports"
_PENDING: dict[str, list[str]] = {}


def defer(part: str, module: str) -> None:
    """Import ``module`` (a dotted name) before the registries of ``part`` are next read."""
    _PENDING.setdefault(part, []).append(module)


def need(part: str) -> None:
    """Import every module deferred for ``part`` (once each)."""
    pending = _PENDING.get(part)
    while pending:
        importlib.import_module(pending.pop(0))
