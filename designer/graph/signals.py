"""A tiny, Qt-free signal for model change events.

The graph model emits these; the Qt scene (or anything else) subscribes. Slots are called in
the order they were connected, synchronously, on the emitting thread.
"""
from __future__ import annotations

from typing import Any, Callable


class Signal:
    """A list of callbacks called with the emitted arguments.

    Examples
    --------
    >>> s = Signal("node_added")
    >>> seen = []
    >>> s.connect(seen.append)
    >>> s.emit("lstm1")
    >>> seen
    ['lstm1']
    """

    __slots__ = ("name", "_slots", "_blocked")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._slots: list[Callable[..., Any]] = []
        self._blocked = 0

    def connect(self, slot: Callable[..., Any]) -> Callable[..., Any]:
        """Subscribe ``slot``; returns it so the method can be used as a decorator."""
        if slot not in self._slots:
            self._slots.append(slot)
        return slot

    def disconnect(self, slot: Callable[..., Any] | None = None) -> None:
        """Unsubscribe ``slot``, or every slot when none is given."""
        if slot is None:
            self._slots.clear()
        elif slot in self._slots:
            self._slots.remove(slot)

    def emit(self, *args: Any) -> None:
        """Call every connected slot with ``args`` (nothing while blocked)."""
        if self._blocked:
            return
        for slot in list(self._slots):
            slot(*args)

    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        return f"Signal({self.name!r}, {len(self._slots)} slots)"
