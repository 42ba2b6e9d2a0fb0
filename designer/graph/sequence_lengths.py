"""The shortest sequence a ``SequenceClasses`` data layer serves, for the checks that a
kernel fits every sequence, not only the longest one all are padded to (pure stdlib).

A ``.ts`` file is read line by line, each series' steps counted as the values of its first
channel; a table of a sequence a row (or an ``.arff`` file) its values up to the last number of
each row; a long-format CSV up to ``LABEL_SCAN_LIMIT`` has its rows counted per series id. The
``_TEST`` file beside an ``X_TRAIN.ts`` (the test split) counts too. Counts are cached by path,
size and modification time, so the Problems panel reads an unchanged file once.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from designer.graph import datasets, headers, arff, wide_tables
from designer.graph.layers.sequences import (LABEL_SCAN_LIMIT, long_format_columns,
                                             paired_test_file, file_layout)

TS_SCAN_LIMIT = 64 << 20  # a larger .ts file is not counted (its shortest stays unknown)

_cache: dict[tuple, int | None] = {}


@dataclass(frozen=True)
class Shortest:
    """The shortest sequence: its steps (in the file, before any frames) and its file."""

    steps: int
    path: Path


def shortest_sequence(params: dict, project_dir=None) -> Shortest | None:
    """The shortest sequence of a ``SequenceClasses`` layer's file and of its ``_TEST`` twin,
    or ``None`` when the file cannot be found or counted. Empty series are left out: the
    trainer refuses them."""
    path = datasets.find_data(params["file"], project_dir)
    if path is None or not path.is_file():
        return None
    best = None
    for file in (path, paired_test_file(path)):
        if file is None:
            continue
        steps = _counted(file, params.get("label_column", ""), params.get("layout", "auto"))
        if steps is not None and (best is None or steps < best.steps):
            best = Shortest(steps, file)
    return best


def _counted(path: Path, label_column: str, layout: str = "auto") -> int | None:
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, label_column, layout)
    if key not in _cache:
        if len(_cache) > 64:
            _cache.clear()
        try:
            kind = file_layout(path, layout)
            if kind == "ts":
                _cache[key] = _ts_shortest(path) if st.st_size <= TS_SCAN_LIMIT else None
            elif kind in ("wide", "arff"):
                _cache[key] = _rows_shortest(path, kind) if st.st_size <= TS_SCAN_LIMIT \
                    else None
            else:
                _cache[key] = _csv_shortest(path, label_column) \
                    if st.st_size <= LABEL_SCAN_LIMIT else None
        except (datasets.DataProblem, OSError, UnicodeDecodeError, csv.Error):
            _cache[key] = None
    return _cache[key]


def _ts_shortest(path: Path) -> int | None:
    """The fewest values of a series' first channel after ``@data`` (empty series left out)."""
    shortest, in_data = None, False
    with datasets.open_data(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith(b"#"):
                continue
            if not in_data:
                in_data = s.lstrip(b"\xef\xbb\xbf")[:5].lower() == b"@data"
                continue
            first = s.split(b":", 1)[0].strip()
            if first:
                steps = first.count(b",") + 1
                shortest = steps if shortest is None else min(shortest, steps)
    return shortest


def _rows_shortest(path: Path, kind: str) -> int | None:
    """The fewest values of a row of a wide table or an ``.arff`` file (a relational row's
    first channel), the missing cells after its last number left out."""
    if kind == "arff":
        skip, delimiter = arff.read_arff_header(path).data_line, ","
    else:
        skip, delimiter = 0, wide_tables.look(path).delimiter
    shortest = None
    with io.TextIOWrapper(datasets.open_data(path), encoding="utf-8-sig",
                          errors="replace") as f:
        for number, line in enumerate(f, 1):
            s = line.strip()
            if number <= skip or not s or s.startswith("%"):
                continue
            if kind == "arff":
                cells = s.rpartition(",")[0].strip("'").split("\\n")[0].split(",")
            else:
                cells = wide_tables.split(s, delimiter)[1:]
            while cells and headers.is_missing(cells[-1]):
                cells.pop()
            if cells:
                shortest = len(cells) if shortest is None else min(shortest, len(cells))
    return shortest


def _csv_shortest(path: Path, label_column: str) -> int | None:
    """The fewest rows of a series of a long-format CSV (rows counted per series id)."""
    table = headers.read_csv_header(path)
    long_format_columns(table, label_column)  # refuses a table that is not long-format
    rows: dict[str, int] = {}
    with io.TextIOWrapper(datasets.open_data(path), encoding="utf-8-sig", errors="replace",
                          newline="") as f:
        reader = csv.reader(f, delimiter=table.delimiter)
        if table.has_header:
            next(reader, None)
        for r in reader:
            if r and any(c.strip() for c in r) and r[0].strip():
                rows[r[0].strip()] = rows.get(r[0].strip(), 0) + 1
    return min(rows.values()) if rows else None
