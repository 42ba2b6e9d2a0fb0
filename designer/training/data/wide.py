"""Labelled sequences one a row, as the UCR/UEA archive writes them beside its ``.ts`` files: a
table with the label first and the values after it (the 2018 archive's tab-separated ``.tsv``,
the older space- or comma-separated ``.txt`` and ``.csv``; `designer.graph.wide_tables` tells
them from other tables), and Weka's ``.arff`` (`designer.graph.arff`). Both are read by the one
reader of tables (`csv_reader`).

A row's values end at its last number: the cells after it that are empty or ``NaN`` (how the
archive pads a shorter sequence) are no steps; a missing value inside is filled in along the
sequence, as a ``.ts`` file's ``?``. A label written as a whole number in another form
(``1.0000000e+00``, as the older archive writes them) is named as the number (``1``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from designer.graph import arff, headers, wide_tables
from designer.graph.datasets import DataProblem
from designer.graph.layers.sequences import sort_classes

from designer.training.data import csv_reader
from designer.training.data.errors import DataError
from designer.training.data.labelled import Sequences, _check_range, _fill_gaps, channel_names


def read_wide(path: Path, label_column: str = "", labelled: bool = True):
    """Every row of a label-first table as a one-channel sequence (``label_column``: another
    column holds the label; the values are the others, in order)."""
    path = Path(path)
    try:
        seen = wide_tables.look(path)
    except DataProblem as e:
        raise DataError(str(e)) from None
    names = wide_tables.column_names(seen.width)
    label = _label_name(path, names, label_column)
    values = [c for c in names if c != label]
    layout = csv_reader.Layout(names, seen.delimiter, header=False)
    read = csv_reader.read_columns(path, layout, values, [label])
    if not read.rows:
        raise DataError(f"{path} holds no data rows")
    series, filled = [], 0
    for row in range(read.rows):
        s, gaps = _sequence(read.numbers[row], path, read.line(row))
        series.append(s)
        filled += gaps
    labels = _labels(read.texts[:, 0], path, read, labelled, label)
    return _sequences(path, series, labels, [read.line(r) for r in range(read.rows)], filled,
                      "empty cells")


def read_arff(path: Path, labelled: bool = True):
    """Every row of an ``.arff`` file of labelled sequences (see `designer.graph.arff`)."""
    path = Path(path)
    try:
        head = arff.read_arff_header(path)
    except DataProblem as e:
        raise DataError(str(e)) from None
    if head.relational:
        names = ("values", "label")
        numbers, texts = [], ["values", "label"]
    else:
        names = tuple(f"att{i + 1}" for i in range(head.steps)) + ("label",)
        numbers, texts = list(names[:-1]), ["label"]
    layout = csv_reader.Layout(names, ",", header=False, quote="'", skip=head.data_line)
    read = csv_reader.read_columns(path, layout, numbers, texts)
    if not read.rows:
        raise DataError(f"{path} holds no rows after @data")
    lines = [read.line(r) for r in range(read.rows)]
    series, filled = [], 0
    for row in range(read.rows):
        if head.relational:
            values = _channels(read.texts[row, 0], head.channels, path, lines[row])
        else:
            values = read.numbers[row][:, None]
        s, gaps = _sequence(values, path, lines[row])
        series.append(s)
        filled += gaps
    labels = _labels(read.texts[:, -1], path, read, labelled, head.class_name,
                     head.class_labels)
    out = _sequences(path, series, labels, lines, filled, "missing values ('?')",
                     channels=head.channels)
    if head.class_labels:
        out.classes = list(head.class_labels)
    return out


# ---------------------------------------------------------------------------- helpers --
def _label_name(path: Path, names: tuple, label_column: str) -> str:
    if not label_column:
        return names[0]
    if label_column not in names:
        raise DataError(f"{path} has no column '{label_column}' for the labels: its rows are "
                        f"one sequence each, the label first ('{names[0]}'), then "
                        f"{names[1]} to {names[-1]}")
    return label_column


def _sequence(values: np.ndarray, path: Path, line: int) -> tuple[np.ndarray, int]:
    """``(steps, channels)`` float32 up to the last step with a number; the missing values
    inside filled in linearly along each channel. Returns it and how many were filled."""
    values = np.asarray(values, np.float64)
    if values.ndim == 1:
        values = values[:, None]
    present = np.flatnonzero(~np.isnan(values).all(1))
    if not len(present):
        raise DataError(f"{path}: line {line} holds no values, but every sequence needs at "
                        "least one step")
    values = values[:present[-1] + 1]
    _check_range(values, path, f"line {line}", channel_names(values.shape[1]))
    gaps = int(np.isnan(values).sum())
    return _fill_gaps(values.astype(np.float32)), gaps


def _channels(text: str, channels: int, path: Path, line: int) -> np.ndarray:
    """A relational cell ``'1,2,3\\n4,5,6'`` as (steps, channels), NaN where missing."""
    parts = text.split("\\n")
    if len(parts) != channels:
        raise DataError(f"{path}: line {line} holds {len(parts)} channels, but the first row "
                        f"holds {channels}; every sequence needs the same number")
    cells = [p.split(",") for p in parts]
    if len({len(c) for c in cells}) > 1:
        raise DataError(f"{path}: line {line} has channels of different lengths "
                        f"({', '.join(str(len(c)) for c in cells[:6])}); every channel of a "
                        "sequence needs as many values")
    out = np.empty((len(cells[0]), channels), np.float64)
    for j, column in enumerate(cells):
        for i, cell in enumerate(column):
            if headers.is_missing(cell):
                out[i, j] = np.nan
                continue
            value = headers.parse_number(cell.strip())
            if value is None:
                raise DataError(f"{path}: line {line} holds '{cell.strip()[:30]}', which is "
                                "not a number")
            out[i, j] = value
    return out


def _labels(cells: np.ndarray, path: Path, read, labelled: bool, column: str,
            declared: tuple = ()) -> list:
    """Each row's class as the file names it (a whole number as the number), ``None`` where
    a row has none (refused when ``labelled``)."""
    out = []
    for row, cell in enumerate(cells):
        text = str(cell).strip()
        if headers.is_missing(text):
            if labelled:
                raise DataError(f"{path}: line {read.line(row)} has no label (column "
                                f"'{column}')")
            out.append(None)
            continue
        value = headers.parse_number(text)
        if value is not None and value == int(value) and text not in declared:
            text = str(int(value))
        if declared and text not in declared:
            raise DataError(f"{path}: line {read.line(row)} has the class '{text}', which the "
                            f"header's @attribute {column} does not list "
                            f"({' '.join(declared[:12])})")
        out.append(text)
    return out


def _sequences(path: Path, series: list, labels: list, lines: list, filled: int, what: str,
               channels: int = 1):
    out = Sequences(path, series, labels, sort_classes({x for x in labels if x}),
                    [str(i + 1) for i in range(len(series))], channel_names(channels),
                    lines=lines, filled=filled)
    if filled:
        out.notes.append(f"{path.name}: {filled} {what} inside sequences filled in along "
                         "them")
    return out
