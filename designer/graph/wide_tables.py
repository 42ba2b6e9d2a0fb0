"""Tables that hold one labelled sequence a row, the label first and no header: the way the UCR
archive writes its sets (the 2018 archive's tab-separated ``X_TRAIN.tsv``, the older space- or
comma-separated ``.txt`` and ``.csv``), told apart from a table of measurements over time by
their first lines (pure stdlib, as `designer.graph.headers`).

>>> look(Path("GunPoint_TRAIN.tsv"))
WideLook(verdict='wide', delimiter='\\t', width=151, rows=50, reason='...')

The verdict is ``wide`` (a row per sequence, the label first), ``no`` (a table with a header,
or whose first column is a measurement, a time or a row number: the readers of long-format
sequences and of series take it) or ``unsure``: a table of numbers whose first column could be
a label or a measurement. ``rnn-designer init`` and New from Data ask about that one instead
of guessing.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from designer.graph import headers
from designer.graph.datasets import DataProblem

WIDE, NO, UNSURE = "wide", "no", "unsure"
SAMPLE_BYTES = 1 << 20      # a row of the archive can be 20 KiB: read more than a CSV's head
SAMPLE_ROWS = 200
MIN_STEPS = 9               # fewer values a row than this, and a row is no sequence to classify
ARCHIVE_SUFFIXES = (".tsv", ".txt")  # the UCR archive's own table formats
DELIMITERS = (",", "\t", ";", "|")


@dataclass(frozen=True)
class WideLook:
    """What the first lines of a table say about it (see the module doc)."""

    verdict: str
    delimiter: str = ","   # one character, or " " for runs of spaces and tabs
    width: int = 0         # cells in the longest row sampled: the label and the values
    rows: int = 0          # rows sampled
    reason: str = ""       # why, in words: the end of the sentence that asks

    @property
    def wide(self) -> bool:
        return self.verdict == WIDE


def look(path: Path) -> WideLook:
    """The verdict on a table file (cached by path, size and time, as headers caches)."""
    return headers._cached(Path(path), "wide", _look)


def column_names(width: int) -> tuple:
    """A wide table's columns: ``label`` and the steps ``t1``, ``t2``..."""
    return ("label",) + tuple(f"t{i}" for i in range(1, width))


def split(line: str, delimiter: str) -> list[str]:
    """A line's cells (runs of whitespace are one delimiter when ``delimiter`` is a space)."""
    if delimiter == " ":
        return line.split()
    return next(csv.reader([line], delimiter=delimiter), [])


def _look(path: Path) -> WideLook:
    text = headers.head_text(path, SAMPLE_BYTES)
    lines = [ln for ln in text.splitlines() if ln.strip()][:SAMPLE_ROWS]
    if not lines:
        raise DataProblem(f"{path} holds no rows")
    delimiter = _delimiter(lines)
    if delimiter is None:
        return WideLook(NO, reason="its lines are not cut into cells by one delimiter")
    rows = [[c.strip() for c in split(ln, delimiter)] for ln in lines]
    width = max(len(r) for r in rows)
    found = _verdict(path, rows, width)
    return WideLook(found[0], delimiter, width, len(rows), found[1])


def _delimiter(lines: list[str]) -> str | None:
    """The delimiter that cuts every line into more than one cell (the one that makes the
    most, the comma first among equals); runs of whitespace when no character does."""
    best, most = None, 1
    for d in DELIMITERS:
        counts = [len(split(ln, d)) for ln in lines]
        if min(counts) > 1 and sorted(counts)[len(counts) // 2] > most:
            best, most = d, sorted(counts)[len(counts) // 2]
    if best is not None:
        return best
    if all(len(ln.split()) > 1 for ln in lines):
        return " "
    return None


def _verdict(path: Path, rows: list[list[str]], width: int) -> tuple[str, str]:
    first = [r[0] for r in rows]
    rest = [c for r in rows for c in r[1:] if not headers.is_missing(c)]
    numbers = [headers.parse_number(c) for c in rest]
    if any(v is None for v in numbers):
        return NO, "it has a header or cells of text after the first column"
    if width - 1 < MIN_STEPS:
        return NO, f"its rows hold fewer than {MIN_STEPS} values after the first column"
    labels = [headers.parse_number(c) for c in first]
    if all(v is None for v in labels):  # words first, numbers after: labels
        if all(headers.parse_time(c) is not None for c in first):
            return NO, "its first column holds times"
        return WIDE, "its first column holds words and the rest numbers"
    if any(v is None for v in labels):
        return NO, "its first column mixes numbers and words"
    if any(v != int(v) for v in labels):
        return NO, "its first column holds measurements (numbers with fractions)"
    ints = [int(v) for v in labels]
    archive = path.suffix.lower() in ARCHIVE_SUFFIXES
    if len(ints) >= 3 and ints == list(range(ints[0], ints[0] + len(ints))):
        return NO, "its first column counts the rows"
    if len(set(ints)) == 1 and len(ints) > 1 and not archive:
        return NO, "its first column holds one value in every row read"
    if all(v == int(v) for v in numbers):
        return UNSURE, "every column holds whole numbers, so the first may be a label or a count"
    if archive or len(set(ints)) < len(ints):
        return WIDE, "its first column holds whole numbers that repeat, the rest measurements"
    return UNSURE, ("its first column holds whole numbers, each row its own, and the rest "
                    "measurements: the first column may be a label or a value")
