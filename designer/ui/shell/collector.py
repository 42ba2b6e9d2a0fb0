"""Python's cyclic garbage collector, run in the GUI thread only.

Training, generation and inspection run in worker threads. Left to itself, Python collects
reference cycles in whichever thread happens to allocate past the threshold, and a cycle that
holds a Qt object (a menu, a plot's items) is then destroyed in a worker thread: Qt locks the
object's mutex there and waits for the GIL, while the GUI thread holds the GIL and waits for
that mutex, and the window freezes for good (seen in the test suite: a plot built in the GUI
thread while the training thread's collection freed a menu). As pyqtgraph's
`GarbageCollector` does, automatic collection is turned off and a timer in the GUI thread
collects instead, generation by generation on the same thresholds; refcounting still frees
everything outside a cycle at once, in any thread. (pyqtgraph's own class is not used
because importing pyqtgraph, and numpy with it, would slow the window's first paint.)
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QTimer

_timer: QTimer | None = None


def collect_now() -> int:
    """One tick: collect the oldest generation whose count is past its threshold."""
    counts, limits = gc.get_count(), gc.get_threshold()
    due = [g for g in range(3) if counts[g] > limits[g]]
    return gc.collect(max(due)) if due else 0


def collect_in_gui_thread(interval_ms: int = 500) -> QTimer:
    """Install the collector once per process (from the GUI thread); returns its timer."""
    global _timer
    if _timer is None:
        _timer = QTimer(QCoreApplication.instance())
        _timer.setObjectName("garbage_collector")
        _timer.timeout.connect(collect_now)
        _timer.start(interval_ms)
        gc.disable()
    return _timer
