"""Finding units that follow a pattern in the text (numpy and re only, no Qt).

A regular expression marks the characters it matches (``"[^"]*"``: inside double quotes,
``\\n``: newlines, ``[aeiou]``: vowels); every unit's activation over the steps is correlated
with that 0/1 mark, and the units with the strongest correlation, either sign, come first.
"""
from __future__ import annotations

import re

import numpy as np

PRESETS = (
    ("vowels", "[aeiouAEIOU]"),
    ("spaces", " "),
    ("line ends", r"\n"),
    ("the first 3 characters of a line", r"(?m)^.{1,3}"),
    ("speaker names (capitals before a colon)", r"(?m)^[A-Z][A-Z ]+:"),
    ("inside a word", r"\w"),
    ("punctuation", r"[.,;:!?]"),
    ("inside quotes", "'[^'\\n]*'|\"[^\"\\n]*\""),
    ("inside parentheses", r"\([^)]*\)"),
)


class PatternError(ValueError):
    """A pattern that cannot be used; ``str()`` is one sentence."""


def mark(text: str, pattern: str) -> np.ndarray:
    """1.0 for every character inside a match of ``pattern`` in ``text``, else 0.0."""
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise PatternError(f"'{pattern}' is not a regular expression ({e})") from None
    out = np.zeros(len(text), dtype=np.float64)
    for m in regex.finditer(text):
        out[m.start():m.end()] = 1.0
    return out


def correlate(values: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """Pearson correlation of each unit (column of ``values``, (T, H)) with ``marks`` (T,);
    0 for a unit (or a mark) that never changes."""
    v = values.astype(np.float64) - values.mean(0)
    m = marks - marks.mean()
    den = np.sqrt((v * v).sum(0) * (m * m).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (v * m[:, None]).sum(0) / den
    return np.where(den > 0, r, 0.0)


def find_units(values: np.ndarray, text: str, pattern: str, count: int = 10
               ) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """The units that follow ``pattern`` best: ``(marks, [(unit, r), ...])``, strongest first.

    Raises
    ------
    PatternError
        The pattern is not a regular expression, or it marks every character or none (there
        is nothing to tell apart).
    """
    if len(text) != values.shape[0]:
        raise ValueError("one activation row per character is needed")
    marks = mark(text, pattern)
    hits = int(marks.sum())
    if hits == 0:
        raise PatternError(f"'{pattern}' matches nothing in this text")
    if hits == len(marks):
        raise PatternError(f"'{pattern}' matches every character of this text, so no unit can "
                           "follow it more than another")
    r = correlate(values, marks)
    order = np.argsort(-np.abs(r), kind="stable")[:count]
    return marks, [(int(u), float(r[u])) for u in order]
