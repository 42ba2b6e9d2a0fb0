"""Reading a whole table (CSV or ``.npy``) of measurements over time, and mending its gaps.

>>> table = read_table(Path("co2_weekly.csv"), ["co2"], missing="interpolate")
>>> table.values.shape, table.filled          # (2284, 1) float64, 59 cells filled in

The columns a layer reads are chosen from the header by ``designer.graph.headers``; this module
reads every row of them, a CSV through `csv_reader` (the one reader of delimited tables). Bad
input raises :class:`DataError`: one sentence naming the file, the row (and line) and the
column.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from designer.graph import headers
from designer.graph.datasets import DataProblem

from designer.training.data import csv_reader
from designer.training.data.errors import DataError

MISSING_CHOICES = ("interpolate", "drop", "error")

_in_use: "weakref.WeakValueDictionary[tuple, Table]" = weakref.WeakValueDictionary()


@dataclass
class Table:
    """The chosen columns of a table, row by row.

    Attributes
    ----------
    columns : list of str
        The names of ``values``' columns.
    values : ndarray
        ``(rows, columns)`` float64, gaps filled (or their rows dropped) as asked.
    missing : ndarray
        ``(rows, columns)`` bool: the cell was empty in the file (and has been filled in).
    times : list of str or None
        The time column's cells, row by row, when there is one.
    rows_in_file : int
        Data rows in the file, before any was dropped.
    """

    path: Path
    columns: list
    values: np.ndarray
    missing: np.ndarray
    times: list | None
    rows_in_file: int
    dropped: int = 0

    @property
    def filled(self) -> int:
        return int(self.missing.sum())

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.columns.index(name)]


def header_of(path: Path) -> headers.TableHeader:
    """The file's header, or a ``DataError``."""
    try:
        return headers.read_table_header(path)
    except DataProblem as e:
        raise DataError(str(e)) from None
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None


def read_table(path: Path, columns: list[str], missing: str = "interpolate",
               time_column: str | None = None) -> Table:
    """Every row of ``columns`` (and of ``time_column``) of a CSV or ``.npy`` file.

    A table still in use (by a source) is not read again while its file is unchanged: its
    values are read-only and shared.

    Parameters
    ----------
    missing
        ``interpolate``: fill each empty cell linearly between its column's neighbours (the
        nearest value at either end); ``drop``: remove the rows that hold one; ``error``: raise
        naming the first.
    """
    path = Path(path)
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns, tuple(columns), missing,
               time_column)
    except OSError:
        key = None
    table = _in_use.get(key) if key is not None else None
    if table is None:
        table = _read_table(path, columns, missing, time_column)
        table.values.setflags(write=False)
        if key is not None:
            _in_use[key] = table
    return table


def _read_table(path: Path, columns: list[str], missing: str,
                time_column: str | None) -> Table:
    header = header_of(path)
    if path.suffix.lower() == ".npy":
        values, times, line_of = _read_npy(path, header, columns), None, None
    else:
        read = csv_reader.read_columns(path, csv_reader.Layout.of(header), columns,
                                       [time_column] if time_column else [])
        values, line_of = read.numbers, read.line
        times = read.texts[:, 0].tolist() if time_column else None
    if len(values) == 0:
        raise DataError(f"{path} holds no data rows")
    gaps = np.isnan(values)
    rows_in_file = len(values)
    if gaps.any():
        r, c = divmod(int(np.argmax(gaps)), values.shape[1])
        line = f" (line {line_of(r)})" if line_of is not None else ""
        where = f"row {r + 1}{line}, column '{columns[c]}'"
        if missing == "error":
            raise DataError(f"{path}: {where} is empty ({int(gaps.sum())} empty cells in all); "
                            "set the data layer's missing to interpolate or drop")
        for j in range(values.shape[1]):
            if gaps[:, j].all():
                raise DataError(f"{path}: column '{columns[j]}' holds no values at all")
        if missing == "drop":
            keep = ~gaps.any(1)
            values, gaps = values[keep], np.zeros((int(keep.sum()), values.shape[1]), bool)
            times = None if times is None else [t for t, k in zip(times, keep) if k]
        else:
            values = interpolate(values, out=values)  # the values are this table's own
    if not gaps.any():  # the usual table: no copy of its size saying so
        gaps = np.broadcast_to(np.False_, values.shape)
    return Table(path, list(columns), values, gaps, times, rows_in_file,
                 rows_in_file - len(values))


def interpolate(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Each column's NaNs replaced linearly between their neighbours (held at the ends), in
    ``out`` (``values`` itself, to mend in place) or a copy."""
    if out is None:
        out = values.copy()
    index = np.arange(len(values))
    for j in range(values.shape[1]):
        gap = np.isnan(out[:, j])
        if gap.any() and not gap.all():
            out[gap, j] = np.interp(index[gap], index[~gap], out[~gap, j])
    return out


def _read_npy(path: Path, header, columns: list[str]) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DataError(f"{path} cannot be read as a .npy array ({str(e).splitlines()[0]})") \
            from None
    array = array.reshape(len(array), -1).astype(np.float64)
    array[~np.isfinite(array)] = np.nan
    index = [header.columns.index(c) for c in columns]
    return array[:, index]


def detect_period(times: list | None) -> int:
    """The seasonal period (in steps) of rows stamped with ``times`` (0: none found)."""
    if not times:
        return 0
    days = [headers.parse_time(t) for t in times[:2000]]
    days = [d for d in days if d is not None]
    if len(days) < 3:
        return 0
    step = float(np.median(np.diff(days)))
    return headers.seasonal_period(step)
