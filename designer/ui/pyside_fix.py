"""A guard against a shiboken6 6.12 bug on Python 3.11: every call of a Qt method that returns
``void`` (``setPen``, ``drawRect``, ``setToolTip`` ...) drops one reference to ``None`` that it
never took. ``None``'s count drains as the window paints, and after a few thousand calls Python
aborts with "Fatal Python error: none_dealloc: deallocating None".

Python 3.12 and later make ``None`` immortal, which hides the bug. On an affected interpreter
this module does the same, once, by raising ``None``'s reference count far beyond what any
session could drain. It checks first and changes nothing where the bug is absent.
"""
from __future__ import annotations

import ctypes
import sys

BOOST = 1 << 48  # ~2.8e14 references: centuries of painting


def leaks_none(calls: int = 64) -> bool:
    """True when calling a void Qt method loses references to ``None``."""
    if sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(calls):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before - calls // 2


def apply() -> bool:
    """Make ``None`` effectively immortal if the bug is present; returns whether it was."""
    if not leaks_none():
        return False
    ctypes.c_ssize_t.from_address(id(None)).value += BOOST
    return True


APPLIED = apply()
