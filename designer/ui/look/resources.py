"""The application's name, and icons from ``resources/icons``: the application icon and line
icons tinted for the theme.

The line icons are SVGs drawn with ``currentColor``; :func:`icon` substitutes the palette's text
colour so they read well on light and dark themes. A missing file gives an empty icon rather
than an error (the window still works without its pictures).
"""
from __future__ import annotations

import weakref
from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication

APP_NAME = "RNN Designer"  # what the window's title, the About box and the desktop call it
ROOT = Path(__file__).resolve().parents[3] / "resources"   # beside the package
ICONS = ROOT / "icons"
SIZES = (16, 24, 32, 48)


def app_icon() -> QIcon:
    """The application icon, rendered at the usual sizes."""
    path = ICONS / "app.svg"
    if not path.exists():
        return QIcon()
    data = path.read_bytes()
    out = QIcon()
    for size in SIZES + (64, 128, 256):
        out.addPixmap(_render(data, size))
    return out


def icon(name: str, color: QColor | None = None) -> QIcon:
    """A line icon tinted with ``color`` (by default the palette's button text colour)."""
    app = QApplication.instance()
    pal = app.palette() if app is not None else None
    if color is None:
        color = pal.buttonText().color() if pal is not None else QColor("#333333")
    off = pal.color(QPalette.Disabled, QPalette.ButtonText) if pal is not None else \
        QColor("#aaaaaa")
    return _tinted(name, color.name(), off.name())


@lru_cache(maxsize=None)
def _tinted(name: str, color: str, disabled_color: str) -> QIcon:
    path = ICONS / f"{name}.svg"
    if not path.exists():
        return QIcon()
    text = path.read_text(encoding="utf-8").replace("currentColor", color)
    data = text.encode()
    out = QIcon()
    for size in SIZES:
        out.addPixmap(_render(data, size))
    disabled = text.replace(color, disabled_color).encode()
    for size in SIZES:
        out.addPixmap(_render(disabled, size), QIcon.Disabled)
    return out


def _render(data: bytes, size: int) -> QPixmap:
    from PySide6.QtSvg import QSvgRenderer  # only when an icon is first drawn
    renderer = QSvgRenderer(QByteArray(data))
    pix = QPixmap(size, size)
    pix.fill(Qt.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return pix


_THEMED: list = []  # (weak reference to a widget or action, icon name)


def themed(obj, name: str):
    """Give ``obj`` (anything with ``setIcon``) the icon ``name``, tinted again on theme
    changes by :func:`retint`; returns ``obj``."""
    obj.setIcon(icon(name))
    _THEMED.append((weakref.ref(obj), name))
    return obj


def retint() -> None:
    """Tint every icon given through :func:`themed` for the current palette."""
    _tinted.cache_clear()
    alive = []
    for ref, name in _THEMED:
        obj = ref()
        if obj is None:
            continue
        try:
            obj.setIcon(icon(name))
        except RuntimeError:  # the Qt object is gone
            continue
        alive.append((ref, name))
    _THEMED[:] = alive
