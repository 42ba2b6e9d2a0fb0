"""The recurrent cells, one folder per cell family.

A family's folder holds everything about its cells: the spec (``spec``: the layer spec with its
gates, states and engines, pure), the arithmetic, the engines and kernels, the unrolled units,
the exports and the memory rule. Its ``__init__`` registers the spec in the layer registry and
defers the rest (:mod:`designer.graph.parts`) until an engine or an export is first needed.

:func:`load` imports every family found here, then the modules named in the environment
variable ``RNN_DESIGNER_CELLS`` (comma-separated: cells kept outside this package, which
register through the same API); the command line, the window, the search's workers and the
tests call it once before reading a project, and processes it starts inherit the variable.
Nothing below this package imports a cell, and no cell imports another.
"""
from __future__ import annotations

import importlib
import os
import pkgutil

OUTSIDE = "RNN_DESIGNER_CELLS"  # modules of cells kept outside this package, comma-separated


class CellLoadError(ImportError):
    """A module named in ``RNN_DESIGNER_CELLS`` cannot be imported (one sentence)."""

_loaded = False


def load() -> None:
    """Import every cell family below this package (once), each registering its pieces."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.ispkg:
            importlib.import_module(f"{__name__}.{info.name}")
    for name in filter(None, (n.strip() for n in os.environ.get(OUTSIDE, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise CellLoadError(f"{OUTSIDE} names the cell module '{name}', which cannot be "
                                f"imported ({e})") from None
