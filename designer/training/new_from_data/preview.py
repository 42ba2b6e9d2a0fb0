"""A first look at a data file before a project is made of it (the window's New from Data).

>>> look = read_head(Path("co2_weekly.csv"))        # the header and the first rows: instant
>>> scan(look).summary()
"2,284 rows of 2 columns; 59 empty cells, the first at row 24 (line 25), column 'co2'"

`read_head` reads what the designer reads of every data file, its first 64 KiB
(`designer.graph.headers`): the columns, which hold numbers, times or text, and the first rows.
`scan` then reads the whole file once, a chunk of rows at a time through the one reader of
tables (`designer.training.data.csv_reader`), for the number of rows, the empty cells
(and where the first one is), the first cell that would stop training, and for labelled
sequences their number, lengths and classes. It keeps counts only, checks ``stop()`` as it
goes (a new pick abandons it) and reports ``progress(rows)``. No torch; the task is guessed
as ``rnn-designer init`` guesses it. Problems are one sentence naming the file.
"""
from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from designer.graph import datasets, headers, wide_tables
from designer.graph.datasets import DataProblem
from designer.graph.task_guess import TaskQuestion, guess_task

from designer.training.data import csv_reader
from designer.training.data.errors import DataError

from designer.training.new_from_data.preview_model import (CHECK_EVERY, HEAD_ROWS, MAX_DISTINCT,
                                                            PROGRESS_EVERY, SAMPLE_TIMES, Column,
                                                            Preview, PreviewError, Stopped, count)

__all__ = ["Column", "Preview", "PreviewError", "Stopped", "read_head", "scan"]

# ----------------------------------------------------------------------------- head --
def read_head(path: str | Path) -> Preview:
    """The header and first rows of a CSV, ``.npy`` or ``.ts`` file (its first 64 KiB).

    Raises
    ------
    PreviewError
        The file is missing, empty, binary, not UTF-8, or not of its kind.
    """
    path = Path(path)
    if not path.exists():
        raise PreviewError(f"{path} does not exist")
    if problem := datasets.not_regular(path):
        raise PreviewError(f"{problem}; pick the data file")
    question = None
    try:
        try:
            task = guess_task(path)
        except TaskQuestion as e:  # the window asks, as init does
            task, question = "unsure", str(e)
        suffix = path.suffix.lower()
        if suffix == ".ts":
            from designer.training.new_from_data.preview_ts import ts_head
            return ts_head(path, task)
        if suffix == ".arff" or (suffix != ".npy" and wide_tables.look(path).wide):
            from designer.training.new_from_data.preview_wide import wide_head
            return wide_head(path, task)
        header = headers.read_table_header(path)
    except DataProblem as e:
        raise PreviewError(str(e)) from None
    except OSError as e:
        raise PreviewError(f"{path} cannot be read ({e.strerror or e})") from None
    columns = [Column(n, "time" if n == header.time_column else
                      "number" if num else "text")
               for n, num in zip(header.columns, header.numeric)]
    if suffix == ".npy":
        return Preview(path, "npy", task, columns, list(header.columns), _npy_head(path),
                       rows=header.rows)
    text = headers.head_text(path)
    reader = csv.reader(io.StringIO(text), delimiter=header.delimiter)
    body = [r for r in reader if any(c.strip() for c in r)]
    body = body[1:] if header.has_header else body
    head = [[c.strip() for c in r] for r in body[:HEAD_ROWS]]
    times = []
    if header.time_column is not None:
        j = list(header.columns).index(header.time_column)
        times = [r[j] for r in body[:SAMPLE_TIMES] if j < len(r)]
    return Preview(path, "csv", task, columns, list(header.columns), head,
                   time_column=header.time_column, spacing=_spacing(times), question=question)


def _spacing(times: list[str]) -> str | None:
    """How far apart the first rows are, and the season that gives (as training finds it)."""
    days = [headers.parse_time(t) for t in times]
    days = [d for d in days if d is not None]
    if len(days) < 3:
        return None
    steps = sorted(b - a for a, b in zip(days, days[1:]))
    step = steps[len(steps) // 2]
    names = ((1 / 48, "half-hourly"), (1 / 24, "hourly"), (1, "daily"), (7, "weekly"),
             (30.4, "monthly"), (91.3, "quarterly"), (365.25, "yearly"))
    name = next((n for d, n in names if 0.9 * d <= step <= 1.1 * d), None)
    if name is None:
        return None
    period = headers.seasonal_period(step)
    return f"{name} rows" + (f" (a season of {period})" if period else "")


def _npy_head(path: Path) -> list:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise PreviewError(f"{path} cannot be read as a .npy array "
                           f"({str(e).splitlines()[0]})") from None
    head = np.asarray(array[:HEAD_ROWS], dtype=np.float64).reshape(min(len(array), HEAD_ROWS), -1)
    return [[f"{v:.6g}" for v in row] for row in head]


# ----------------------------------------------------------------------------- scan --
def scan(look: Preview, stop: Callable[[], bool] = lambda: False,
         progress: Callable[[int], None] | None = None) -> Preview:
    """Read the whole file once and fill in ``look``'s counts (see the module doc).

    Raises
    ------
    PreviewError
        The file cannot be read to its end (a problem with a cell is ``look.problem``).
    Stopped
        ``stop()`` returned True.
    """
    try:
        if look.format == "ts":
            from designer.training.new_from_data.preview_ts import scan_ts
            scan_ts(look, stop, progress)
        elif look.one_a_line:
            from designer.training.new_from_data.preview_wide import scan_wide
            scan_wide(look, stop, progress)
        elif look.format == "npy":
            _scan_npy(look, stop)
        else:
            _scan_csv(look, stop, progress)
    except UnicodeDecodeError:
        raise PreviewError(f"{look.path} is not UTF-8 text; save it as UTF-8") from None
    except (DataProblem, DataError) as e:
        raise PreviewError(str(e)) from None
    except OSError as e:
        raise PreviewError(f"{look.path} cannot be read ({e.strerror or e})") from None
    look.scanned = True
    return look


def _scan_csv(look: Preview, stop, progress) -> None:
    header = headers.read_csv_header(look.path)
    layout, columns = csv_reader.Layout.of(header), look.columns
    track_series = look.task == "classify"
    runs = Runs(look.path)
    rows = 0
    try:
        for chunk in csv_reader.chunks(look.path, layout, texts=[c.name for c in columns],
                                       rows=CHECK_EVERY):
            _count_chunk(look, header.decimal, chunk)
            if track_series and len(chunk.lines):
                runs.add(chunk, look)
            before, rows = rows, rows + len(chunk.lines)
            time.sleep(0)  # hand the interpreter to the window's thread now and then
            if stop():
                raise Stopped
            if progress is not None and rows // PROGRESS_EVERY > before // PROGRESS_EVERY:
                progress(rows)
    except csv_reader.RowTooLong as e:  # the rest of the file is not counted
        look.problem = look.problem or str(e)
    look.rows = rows
    look.missing = sum(c.missing for c in columns)
    if track_series and runs.lengths:
        look.sequences, look.lengths = len(runs.ids), (min(runs.lengths), max(runs.lengths))
    if rows == 0 and look.problem is None:
        raise PreviewError(f"{look.path} holds no data rows")


def _count_chunk(look: Preview, decimal: str, chunk) -> None:
    """The empty cells, the first cell that is not a number and the values of a chunk."""
    wrong = []  # (row in the chunk, column) of each number column's first bad cell
    for j, column in enumerate(look.columns):
        cells = chunk.texts[:, j]
        missing = pd.Series(cells).str.lower().isin(headers.MISSING).to_numpy()
        if missing.any():
            column.missing += int(missing.sum())
            if look.first_missing is None:
                r = int(np.argmax(missing))
                look.first_missing = (f"row {chunk.first_row + r:,} (line "
                                      f"{int(chunk.lines[r]):,}), column '{column.name}'")
        if column.kind == "number" and look.problem is None:
            bad = csv_reader.numbers_of(cells, decimal)[1]
            if bad is not None:
                wrong.append((bad, j))
        if column.values is not None and column.kind != "time":
            column.values.update(cells[~missing])
            if len(column.values) > MAX_DISTINCT:
                column.values = None
    if wrong and look.problem is None:
        r, j = min(wrong)
        look.problem = (f"{look.path}: row {chunk.first_row + r:,} (line "
                        f"{int(chunk.lines[r]):,}), column '{look.columns[j].name}' holds "
                        f"'{chunk.texts[r, j][:40]}', which is not a number")


class Runs:
    """The series of a long-format table as its rows come: each id's run of rows."""

    def __init__(self, path: Path):
        self.path, self.ids, self.lengths, self.last = path, set(), [], None

    def add(self, chunk, look: Preview) -> None:
        ids = chunk.texts[:, 0]
        starts = np.flatnonzero(np.concatenate(([ids[0] != self.last], ids[1:] != ids[:-1])))
        if not len(starts) or starts[0] > 0:  # the last run goes on
            self.lengths[-1] += int(starts[0]) if len(starts) else len(ids)
        for start, end in zip(starts.tolist(), starts[1:].tolist() + [len(ids)]):
            key = ids[start]
            if key in self.ids and look.problem is None:
                look.problem = (f"{self.path}: line {int(chunk.lines[start]):,} goes back to "
                                f"series '{key}'; the rows of a series must come together")
            self.ids.add(key)
            self.lengths.append(end - start)
        self.last = ids[-1]


def _scan_npy(look: Preview, stop) -> None:
    array = np.load(look.path, mmap_mode="r", allow_pickle=False)
    rows = len(array)
    look.rows = rows
    if array.dtype.kind != "f":
        return
    chunk = 1 << 16
    for start in range(0, rows, chunk):
        if stop():
            raise Stopped
        block = np.asarray(array[start:start + chunk]).reshape(-1, len(look.columns))
        bad = ~np.isfinite(block)
        if bad.any():
            counts = bad.sum(0)
            for column, n in zip(look.columns, counts):
                column.missing += int(n)
            if look.first_missing is None:
                r, c = (int(v) for v in np.argwhere(bad)[0])
                look.first_missing = f"row {start + r + 1:,}, column '{look.columns[c].name}'"
    look.missing = sum(c.missing for c in look.columns)
