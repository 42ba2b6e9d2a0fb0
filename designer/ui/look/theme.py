"""Light and dark themes: the Fusion palette for the widgets and the colours the canvases use.

The canvases read :data:`colors` when they paint, so switching theme is ``apply(app, name)``
followed by a repaint. Category and unrolled-node colours are shared by both themes; only how
strongly they tint a node differs.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("light", "dark")

CATEGORY_COLORS = {
    "Data": "#2a9d8f",
    "Embedding": "#8e6cc2",
    "Recurrent": "#e08a2c",
    "Sequence": "#c9a227",
    "Core": "#3d7fc1",
    "Activation": "#4caf6a",
    "Loss": "#d0576f",
    "Shape": "#7d8a96",
    "Building blocks": "#a2744e",
}

UNROLLED_COLORS = {
    "INPUT": "#7d8a96",
    "INNER_PRODUCT": "#3d7fc1",
    "SLICE": "#7d8a96",
    "CONCAT": "#7d8a96",
    "SCALE": "#2a9d8f",
    "ELTWISE": "#8e6cc2",
    "UNIT": "#e08a2c",  # a cell's unit (designer.engines.expansion.expand.drawn_as)
    "TANH": "#4caf6a",
    "RELU": "#4caf6a",
    "DROPOUT": "#a2744e",
    "HOLD": "#c2566f",
    "SEQUENCE_MASK": "#5b8fa8",
}


@dataclass
class Colors:
    """What the canvases paint with."""

    name: str
    canvas: QColor
    grid: QColor
    node: QColor
    node_text: QColor
    node_dim: QColor
    link: QColor
    link_label: QColor
    accent: QColor
    error: QColor
    warning: QColor
    ok: QColor
    group: QColor
    group_border: QColor
    tint: int  # alpha of the category tint in a node's header

    def category(self, name: str) -> QColor:
        return QColor(CATEGORY_COLORS.get(name, "#7d8a96"))

    def unrolled(self, node_type: str) -> QColor:
        return QColor(UNROLLED_COLORS.get(node_type, "#7d8a96"))


def font(size: float, bold: bool = False, mono: bool = False) -> QFont:
    """A canvas font: ``size`` points, optionally bold or monospaced (tensor shapes)."""
    f = QFont("DejaVu Sans Mono") if mono else QFont()
    if mono:
        f.setStyleHint(QFont.Monospace)
    f.setPointSizeF(size)
    f.setBold(bold)
    return f


def _c(text: str) -> QColor:
    return QColor(text)


LIGHT = Colors("light", _c("#f3f5f8"), _c("#d5dbe3"), _c("#ffffff"), _c("#1d2733"),
               _c("#5d6b7a"), _c("#7b8794"), _c("#ffffff"), _c("#2f7de1"), _c("#d93b3b"),
               _c("#d98a00"), _c("#2e9d57"), _c("#e9edf2"), _c("#cfd6df"), 46)
DARK = Colors("dark", _c("#1e2227"), _c("#2e343c"), _c("#2c3138"), _c("#e6eaef"),
              _c("#9aa5b1"), _c("#8894a1"), _c("#2c3138"), _c("#5aa2ff"), _c("#ff6b6b"),
              _c("#f0b43c"), _c("#5cc98a"), _c("#262b31"), _c("#3a414a"), 70)

colors: Colors = LIGHT


def palette(name: str) -> QPalette:
    """The Fusion palette of a theme."""
    p = QPalette()
    if name == "dark":
        base, window, text = QColor("#23272d"), QColor("#2b3036"), QColor("#e6eaef")
        roles = {
            QPalette.Window: window, QPalette.WindowText: text, QPalette.Base: base,
            QPalette.AlternateBase: QColor("#2f343b"), QPalette.ToolTipBase: QColor("#353b43"),
            QPalette.ToolTipText: text, QPalette.Text: text, QPalette.Button: window,
            QPalette.ButtonText: text, QPalette.BrightText: QColor("#ff6b6b"),
            QPalette.Highlight: QColor("#3b78c4"), QPalette.HighlightedText: QColor("#ffffff"),
            QPalette.Link: QColor("#5aa2ff"), QPalette.PlaceholderText: QColor("#7f8b97"),
            QPalette.Mid: QColor("#3a4048"), QPalette.Dark: QColor("#1b1f24"),
            QPalette.Light: QColor("#3c434c"), QPalette.Midlight: QColor("#353b43"),
            QPalette.Shadow: QColor("#111418"),
        }
        for role, color in roles.items():
            p.setColor(role, color)
        for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
            p.setColor(QPalette.Disabled, role, QColor("#6d7782"))
    else:
        roles = {
            QPalette.Window: QColor("#eef1f4"), QPalette.WindowText: QColor("#1d2733"),
            QPalette.Base: QColor("#ffffff"), QPalette.AlternateBase: QColor("#f5f7fa"),
            QPalette.ToolTipBase: QColor("#ffffff"), QPalette.ToolTipText: QColor("#1d2733"),
            QPalette.Text: QColor("#1d2733"), QPalette.Button: QColor("#f4f6f8"),
            QPalette.ButtonText: QColor("#1d2733"), QPalette.Highlight: QColor("#2f7de1"),
            QPalette.HighlightedText: QColor("#ffffff"), QPalette.Link: QColor("#2f6fc4"),
            QPalette.PlaceholderText: QColor("#8a96a3"),
        }
        for role, color in roles.items():
            p.setColor(role, color)
        for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
            p.setColor(QPalette.Disabled, role, QColor("#9aa4ae"))
    return p


def system_prefers_dark() -> bool:
    app = QApplication.instance()
    try:
        from PySide6.QtCore import Qt
        return app is not None and app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    except AttributeError:  # pragma: no cover - Qt < 6.5
        return False


def resolve(name: str | None) -> str:
    """``light`` or ``dark`` for a stored preference (``system`` follows the desktop)."""
    if name in THEMES:
        return name
    return "dark" if system_prefers_dark() else "light"


def apply(app: QApplication, name: str | None) -> str:
    """Switch the application to a theme; returns the theme applied."""
    global colors
    name = resolve(name)
    app.setStyle("Fusion")
    app.setPalette(palette(name))
    colors = DARK if name == "dark" else LIGHT
    return name
