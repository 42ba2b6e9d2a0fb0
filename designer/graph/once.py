"""Registries that take each name once. A second, different function for a name already taken
(two cells, or a cell and a plain layer, claiming one layer type) is said when it is imported,
instead of one silently replacing the other; the same function imported again (its module
loaded a second time) registers again."""
from __future__ import annotations

from typing import Callable


def origin(fn: Callable) -> tuple:
    """Where ``fn`` is defined: the same function imported again has the same origin."""
    return getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(fn))


def put(table: dict, key: str, fn: Callable, what: str) -> None:
    """``table[key] = fn``, or ``ValueError`` where ``key`` holds another function already
    (``what`` names the registry in the sentence: "the builder", "the memory rule")."""
    known = table.get(key)
    if known is not None and origin(known) != origin(fn):
        raise ValueError(f"{what} of {key} is registered already, by "
                         f"{'.'.join(map(str, origin(known)))}; "
                         f"{'.'.join(map(str, origin(fn)))} would replace it")
    table[key] = fn
