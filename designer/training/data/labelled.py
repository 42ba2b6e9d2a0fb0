"""Reading labelled sequences: UEA/UCR ``.ts`` files and long-format CSV tables (`wide` reads
tables of a sequence a row and ``.arff`` files; `sequence_files.read_sequences` picks the
reader).

>>> seqs = read_ts(Path("JapaneseVowels_TRAIN.ts"))
>>> len(seqs.series), seqs.series[0].shape, seqs.labels[:3], seqs.classes
(270, (20, 12), ['1', '1', '1'], ['1', '2', ..., '9'])

Each sequence is a ``(length, features)`` float32 array; labels are kept as the file writes
them. Bad input raises :class:`DataError` naming the file and the line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from designer.graph import headers
from designer.graph.datasets import DataProblem
from designer.graph.layers.sequences import long_format_columns, sort_classes

from designer.training.data import csv_reader
from designer.training.data.errors import DataError
from designer.training.data.normalise import F32_MAX


@dataclass
class Sequences:
    """Sequences of one file, their labels (``None`` where unlabelled) and its class names."""

    path: Path
    series: list
    labels: list
    classes: list
    ids: list = field(default_factory=list)
    features: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    lines: list = field(default_factory=list)  # where each sequence starts in the file
    kind: str = "long"  # how the file holds them: ts, arff, wide or long (file_layout)
    filled: int = 0     # missing values inside the sequences, filled in

    @property
    def declares_classes(self) -> bool:
        """The file's header lists its classes (a .ts file's @classLabel, an .arff's class
        attribute)."""
        return self.kind in ("ts", "arff") and bool(self.classes)


# ----------------------------------------------------------------------------------- ts --
def read_ts(path: Path, labelled: bool = True) -> Sequences:
    """Every series of a ``.ts`` file (``?`` values filled in along their channel)."""
    try:
        head = headers.read_ts_header(path)
    except DataProblem as e:
        if labelled or "no class labels" not in str(e):
            raise DataError(str(e)) from None
        head = None
    if head is not None and head.timestamps:
        raise DataError(f"{path} stores time stamps with its values (@timeStamps true), which "
                        "rnn-designer does not read; export it without them")
    has_labels = head is not None
    declared = list(head.class_labels) if head else []
    channels = head.dimensions if head else None
    series, labels, lines, filled = [], [], [], 0
    try:
        with open(path, encoding="utf-8-sig") as f:
            for number, s in headers.ts_data_lines(f):
                parts = s.split(":")
                label = parts.pop().strip() if has_labels else None
                if has_labels and declared and label not in declared:
                    raise DataError(f"{path}: line {number} has the class '{label}', which the "
                                    f"header's @classLabel does not list "
                                    f"({' '.join(declared[:12])})")
                if has_labels and not any(p.strip() for p in parts):
                    raise DataError(f"{path}: line {number}, sequence {len(series) + 1} (class "
                                    f"'{label}'), holds no values, but every sequence needs at "
                                    "least one step")
                if channels is None:
                    channels = len(parts)
                if len(parts) != channels:
                    raise DataError(f"{path}: line {number} holds {len(parts)} channels, but "
                                    f"the file has {channels} (@dimensions); every series "
                                    "needs the same number")
                values = [_ts_channel(p, path, number) for p in parts]
                lengths = {len(v) for v in values}
                if len(lengths) > 1:
                    raise DataError(f"{path}: line {number} has channels of different lengths "
                                    f"({', '.join(str(len(v)) for v in values[:6])}); every "
                                    "channel of a series needs as many values")
                array = np.stack(values, 1)
                _check_range(array, path, f"line {number}", channel_names(channels))
                array = array.astype(np.float32)
                filled += int(np.isnan(array).sum())
                series.append(_fill_gaps(array))
                labels.append(label)
                lines.append(number)
    except UnicodeDecodeError:
        raise DataError(f"{path} is not UTF-8 text") from None
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    if not series:
        raise DataError(f"{path} holds no series after @data")
    classes = declared if declared else sort_classes({lab for lab in labels if lab})
    out = Sequences(path, series, labels, classes, [str(i + 1) for i in range(len(series))],
                    channel_names(channels), lines=lines)
    if filled:
        out.notes.append(f"{path.name}: {filled} missing values ('?') filled in along their "
                         "channel")
    return out


def channel_names(channels: int) -> list[str]:
    """A ``.ts`` file's features: ``channel1``, ``channel2``..."""
    return [f"channel{j + 1}" for j in range(channels)]


def _check_range(array: np.ndarray, path: Path, where: str, names: list[str]) -> None:
    """Refuse a value beyond float32's range (sequences are kept in 32-bit numbers);
    ``names[c]`` says where column ``c`` is (``channel1``, ``column 'x'``)."""
    with np.errstate(invalid="ignore"):
        over = np.abs(array) > F32_MAX
    if over.any():
        r, c = (int(v) for v in np.argwhere(over)[0])
        raise DataError(f"{path}: {where}, {names[c]} holds {array[r, c]:.3g}, more than the "
                        f"{F32_MAX:.2g} that rnn-designer keeps sequences in (32-bit numbers); "
                        "rescale it")


def _ts_channel(text: str, path: Path, number: int) -> np.ndarray:
    cells = text.split(",")
    out = np.empty(len(cells), np.float64)
    for i, c in enumerate(cells):
        c = c.strip()
        if c in ("?", "NaN", "nan", ""):
            out[i] = np.nan
            continue
        value = headers.parse_number(c)
        if value is None:
            raise DataError(f"{path}: line {number} holds '{c[:30]}', which is not a number")
        out[i] = value
    return out


def _fill_gaps(array: np.ndarray) -> np.ndarray:
    """NaNs filled linearly along each channel (held at the ends; 0 for an empty channel)."""
    if not np.isnan(array).any():
        return array
    out = array.copy()
    index = np.arange(len(out))
    for j in range(out.shape[1]):
        gap = np.isnan(out[:, j])
        if gap.all():
            out[:, j] = 0.0
        elif gap.any():
            out[gap, j] = np.interp(index[gap], index[~gap], out[~gap, j])
    return out


# ---------------------------------------------------------------------------------- CSV --
def read_long_csv(path: Path, label_column: str = "", labelled: bool = True) -> Sequences:
    """Sequences of a long-format CSV: one row per step, ``series_id, time, features...,
    label``; rows of a series are put in time order (file order when there is no time)."""
    try:
        table = headers.read_csv_header(path)
        if not labelled and (label_column or table.columns[-1]) not in table.columns:
            label_column = ""
        ident, time, features, label = long_format_columns(table, label_column)
    except DataProblem as e:
        raise DataError(str(e)) from None
    read = csv_reader.read_columns(path, csv_reader.Layout.of(table), features,
                                   [ident, label] + ([time] if time else []))
    if not read.rows:
        raise DataError(f"{path} holds no data rows")
    ids, labs = read.texts[:, 0], read.texts[:, 1]
    no_id = np.flatnonzero(ids == "")
    if len(no_id):
        raise DataError(f"{path}: line {read.line(int(no_id[0]))} has no series id (column "
                        f"'{ident}')")
    codes, keys = pd.factorize(ids)  # the series in the order they first come
    given = np.flatnonzero(labs != "")
    named, first = np.unique(codes[given], return_index=True)
    label_of = np.full(len(keys), None, object)  # each series' first label
    label_of[named] = labs[given[first]]
    clash = given[labs[given] != label_of[codes[given]]]
    if len(clash):
        r = int(clash[0])
        raise DataError(f"{path}: line {read.line(r)} gives series '{ids[r]}' the label "
                        f"'{labs[r]}', but an earlier row gave it '{label_of[codes[r]]}'")
    order = np.argsort(codes, kind="stable")  # each series' rows together, in file order
    ends = np.cumsum(np.bincount(codes, minlength=len(keys)))
    series, labels, lines, filled = [], [], [], 0
    for g, key in enumerate(keys):
        rows = order[ends[g - 1] if g else 0:ends[g]]
        line = read.line(int(rows[0]))
        if labelled and label_of[g] is None:
            raise DataError(f"{path}: series '{key}' (from line {line}) has no label in "
                            f"column '{label}'")
        if time:
            stamps = read.texts[rows, 2]
            rows = rows[sorted(range(len(rows)), key=lambda i: _time_key(stamps[i]))]
        array = read.numbers[rows]
        _check_range(array, path, f"series '{key}' (from line {line})",
                     [f"column '{c}'" for c in features])
        filled += int(np.isnan(array).sum())
        series.append(_fill_gaps(array).astype(np.float32))
        labels.append(label_of[g])
        lines.append(line)
    out = Sequences(path, series, labels, sort_classes({x for x in labels if x}),
                    [str(k) for k in keys], features, lines=lines)
    if filled:
        out.notes.append(f"{path.name}: {filled} empty cells filled in along their series")
    return out


def _time_key(text: str):
    value = headers.parse_number(text.strip())
    if value is not None:
        return (0, value, "")
    days = headers.parse_time(text)
    return (0, days, "") if days is not None else (1, 0.0, text.strip())
