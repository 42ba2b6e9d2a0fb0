"""Reading a whole table (CSV or ``.npy``) of measurements over time, and mending its gaps.

>>> table = read_table(Path("co2_weekly.csv"), ["co2"], missing="interpolate")
>>> table.values.shape, table.filled          # (2284, 1) float64, 59 cells filled in

The columns a layer reads are chosen from the header by ``designer.graph.headers``; this module
reads every row of them. Bad input raises :class:`DataError`: one sentence naming the file, the
row (and line) and the column.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from designer.graph import headers
from designer.graph.datasets import DataProblem

from .errors import DataError

MISSING_CHOICES = ("interpolate", "drop", "error")


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

    Parameters
    ----------
    missing
        ``interpolate``: fill each empty cell linearly between its column's neighbours (the
        nearest value at either end); ``drop``: remove the rows that hold one; ``error``: raise
        naming the first.
    """
    path = Path(path)
    header = header_of(path)
    if path.suffix.lower() == ".npy":
        values, times = _read_npy(path, header, columns), None
    else:
        values, times = _read_csv(path, header, columns, time_column)
    if len(values) == 0:
        raise DataError(f"{path} holds no data rows")
    gaps = np.isnan(values)
    rows_in_file = len(values)
    if gaps.any():
        r, c = (int(v) for v in np.argwhere(gaps)[0])
        line = f" (line {r + 1 + header.has_header})" if path.suffix.lower() != ".npy" else ""
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
            values = interpolate(values)
    return Table(path, list(columns), values, gaps, times, rows_in_file,
                 rows_in_file - len(values))


def interpolate(values: np.ndarray) -> np.ndarray:
    """Each column's NaNs replaced linearly between their neighbours (held at the ends)."""
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


def _read_csv(path: Path, header, columns: list[str], time_column: str | None
              ) -> tuple[np.ndarray, list | None]:
    index = [header.columns.index(c) for c in columns]
    t_index = header.columns.index(time_column) if time_column else None
    width = len(header.columns)
    rows, times = [], [] if t_index is not None else None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, delimiter=header.delimiter)
            if header.has_header:
                next(reader, None)
            for r in reader:
                if not any(c.strip() for c in r):
                    continue
                if len(r) > width:
                    raise DataError(f"{path}: line {reader.line_num} has {len(r)} cells, but "
                                    f"the header names {width} columns")
                row = []
                for j, name in zip(index, columns):
                    cell = r[j].strip() if j < len(r) else ""
                    if headers.is_missing(cell):
                        row.append(np.nan)
                        continue
                    value = header.number(cell)
                    if value is None:
                        raise DataError(f"{path}: row {len(rows) + 1} (line {reader.line_num}), "
                                        f"column '{name}' holds '{cell[:40]}', which is not a "
                                        "number")
                    row.append(value)
                rows.append(row)
                if times is not None:
                    times.append(r[t_index].strip() if t_index < len(r) else "")
    except UnicodeDecodeError:
        raise DataError(f"{path} is not UTF-8 text; save it as UTF-8 CSV") from None
    except csv.Error as e:
        raise DataError(f"{path} is not a well-formed CSV file ({e})") from None
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(columns)), times


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
