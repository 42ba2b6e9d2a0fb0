"""Text coloured by surprise, with the model's top guesses on hover (output window and
Inspect view).

Each character's background says how surprised the model was to see it: -ln p(character |
the text before it), in nats; white (or clear, on the dark theme) is expected, red is
``RED_AT`` nats or more (a uniform guess over 65 characters is 4.2 nats). Hovering a character
shows what the model expected there. The formats carry the tool-tips, so the document keeps
them wherever the text goes; `CharToolTips` shows the one of the character under the mouse.
"""
from __future__ import annotations

import html
import math

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip

RED_AT = 6.0       # nats at which the colour is full red
MAX_SCORED = 20_000  # characters coloured per text (beyond: plain, to keep documents small)
STOPS = ((0.0, (255, 255, 255, 0)), (0.25, (255, 236, 153, 150)), (0.55, (255, 178, 90, 190)),
         (1.0, (220, 50, 40, 215)))


def surprise_color(nats: float | None) -> QColor:
    """The background of a character the model found ``nats`` surprising."""
    if nats is None or not math.isfinite(nats):
        return QColor(0, 0, 0, 0)
    x = max(0.0, min(1.0, nats / RED_AT))
    for (x0, c0), (x1, c1) in zip(STOPS, STOPS[1:]):
        if x <= x1:
            w = (x - x0) / (x1 - x0)
            return QColor(*(round(a + (b - a) * w) for a, b in zip(c0, c1)))
    return QColor(*STOPS[-1][1])


def shown(symbol) -> str:
    """A symbol as text in a tool-tip: newline, space and tab made visible."""
    s = str(symbol)
    return {"\n": "\u21b5 (newline)", " ": "\u2423 (space)", "\t": "\u21e5 (tab)"}.get(s, s)


def guesses_tip(char: str, nats: float | None, top: list) -> str:
    """The tool-tip of one character: its surprise and the model's top guesses there."""
    if nats is None or not top:
        return (f"<b>{html.escape(shown(char))}</b>: the first character; nothing came before "
                "it to predict it from")
    p = math.exp(-nats)
    mark = "\u25b6"
    rows = "".join(
        f"<tr><td>{mark if str(s) == char else ''}</td>"
        f"<td><tt>{html.escape(shown(s))}</tt></td><td align=right>&nbsp;{q:.1%}</td></tr>"
        for s, q in top)
    return (f"<b>{html.escape(shown(char))}</b>: surprise {nats:.2f} nats (the model gave it "
            f"{p:.1%})<br>its top {len(top)} guesses here:<table>{rows}</table>")


def insert_scored(cursor: QTextCursor, text: str, surprise: list | None, top: list | None,
                  base: QTextCharFormat | None = None, budget: int = MAX_SCORED) -> int:
    """Insert ``text`` at ``cursor``, each character coloured by ``surprise`` (one per
    character, ``None`` for unscored ones) and tipped with ``top`` (a list of ``[symbol, p]``
    per character). Returns how many characters were coloured."""
    base = base or QTextCharFormat()
    if surprise is None or budget <= 0:
        cursor.insertText(text, base)
        return 0
    done = 0
    for i, ch in enumerate(text):
        if done >= budget:
            cursor.insertText(text[i:], base)
            break
        fmt = QTextCharFormat(base)
        s = surprise[i] if i < len(surprise) else None
        fmt.setBackground(surprise_color(s))
        fmt.setToolTip(guesses_tip(ch, s, top[i] if top and i < len(top) else []))
        cursor.insertText(ch, fmt)
        done += 1
    return done


class CharToolTips(QObject):
    """Shows the tool-tip of the character under the mouse in a text view (the one the
    mouse is over, not the nearest cursor position's left neighbour)."""

    def __init__(self, edit: QTextEdit | QPlainTextEdit) -> None:
        super().__init__(edit)
        self.edit = edit
        edit.viewport().installEventFilter(self)

    def char_at(self, pos) -> int:
        """The position of the character under ``pos`` (viewport coordinates), or -1."""
        edit = self.edit
        cursor = edit.cursorForPosition(pos)
        rect = edit.cursorRect(cursor)
        p = cursor.position()
        if pos.x() < rect.x():
            p -= 1
        if p < 0 or p >= edit.document().characterCount() - 1:
            return -1
        return p

    def tip_at(self, pos) -> str:
        p = self.char_at(pos)
        if p < 0:
            return ""
        cursor = QTextCursor(self.edit.document())
        cursor.setPosition(p + 1)
        return cursor.charFormat().toolTip()

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.ToolTip:
            tip = self.tip_at(event.pos())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self.edit.viewport())
            else:
                QToolTip.hideText()
            event.accept()
            return True
        return False


LEGEND = ("Colour: how surprised the model was by each character (clear: expected; red: "
          f"{RED_AT:.0f} nats or more). Hover a character for the model's top guesses there.")


def legend_html() -> str:
    """A one-line legend with swatches, for a label under coloured text."""
    chips = "".join(f"<span style='background:{_css(surprise_color(v))}'>&nbsp;{v:g}&nbsp;"
                    "</span>" for v in (0, 1, 2, 3, 4, 5, 6))
    return (f"<span>Surprise per character, nats: {chips}&nbsp; (hover a character for the "
            "model's top guesses there)</span>")


def _css(color: QColor) -> str:
    return f"rgba({color.red()}, {color.green()}, {color.blue()}, {color.alpha()})"
