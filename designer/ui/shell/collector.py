"""Python's cyclic garbage collector, run in the GUI thread only.

Training, generation and inspection run in worker threads. Left to itself, Python collects
reference cycles in whichever thread happens to allocate past the threshold, and a cycle that
holds a Qt object (a menu, a plot's items) is then destroyed in a worker thread: Qt locks the
object's mutex there and waits for the GIL, while the GUI thread holds the GIL and waits for
that mutex, and the window freezes for good. pyqtgraph's `GarbageCollector` turns automatic
collection off and collects on a timer in the GUI thread instead (refcounting still frees
everything without a cycle at once, in any thread).
"""
from __future__ import annotations

_collector = None


def collect_in_gui_thread(interval: float = 0.5):
    """Install the collector once per process (call from the GUI thread); returns it."""
    global _collector
    if _collector is None:
        from pyqtgraph.util.garbage_collector import GarbageCollector
        _collector = GarbageCollector(interval=interval)
    return _collector
