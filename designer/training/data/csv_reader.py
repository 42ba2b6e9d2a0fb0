"""The one reader of delimited text tables (CSV, TSV, space-separated) for every command and
the window: pandas' C parser, a chunk of rows at a time.

>>> layout = Layout.of(headers.read_csv_header(path))   # what the first lines said
>>> table = read_columns(path, layout, numbers=["co2"], texts=["date"])
>>> table.numbers.shape, table.texts[:2, 0], table.line(0)
((2284, 1), array(['19580329', '19580405'], dtype=object), 2)

`Layout` says how a file is written, and nothing here guesses it: the columns' names, the
delimiter (one character, or ``" "`` for runs of spaces and tabs), whether a header line comes
first, the decimal mark, the quote character and the lines before the table (an ``.arff``
file's header). `designer.graph.headers` sniffs it from a CSV's first lines; a label-first UCR
archive file is ``Layout(("label", "t1", ...), "\\t", header=False)``
(`designer.graph.wide_tables`).

Numbers are float64; the missing-value markers of `designer.graph.headers` (an empty cell,
``NA``, ``?``...) are NaN, and any other cell that is not a finite number is refused naming
its row, line and column. Text cells come back stripped. A line whose cells are all blank (an
empty line, ``,,,``) is no row, though lines are still counted (a quoted cell's line breaks are
not). A file larger than `size_limit` (``MAX_TABLE_BYTES`` unless ``--max-table-gb`` says
otherwise) is refused before a byte of it is parsed. Every problem is a `DataError`: one
sentence naming the file.
"""
from __future__ import annotations

import contextlib
import csv
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from designer.graph import datasets, headers

from designer.training.data.errors import DataError

GB = 10**9
MAX_TABLE_BYTES = 4 * GB    # the largest table read unless --max-table-gb allows more
LIMIT_FLAG = "--max-table-gb"
CHUNK_ROWS = 1 << 18        # rows parsed at a time
SURVEY_BYTES = 1 << 24      # bytes looked at at a time (then to the end of the line)

_limit = [MAX_TABLE_BYTES]


def _spellings(word: str) -> set:
    return {"".join(p) for p in itertools.product(*({c.lower(), c.upper()} for c in word))}


MARKERS = sorted(set().union(*(_spellings(m) for m in headers.MISSING)))  # in any case


def size_limit() -> int:
    """The largest table, in bytes, that is read now."""
    return _limit[0]


@contextlib.contextmanager
def size_limit_of(n_bytes: int | None):
    """Read tables up to ``n_bytes`` (``None``: the default) while the block runs."""
    before = _limit[0]
    _limit[0] = MAX_TABLE_BYTES if n_bytes is None else int(n_bytes)
    try:
        yield
    finally:
        _limit[0] = before


class RowTooLong(DataError):
    """A row holds more cells than the table has columns (a scan may go on past it)."""


@dataclass(frozen=True)
class Layout:
    """How a delimited table is written.

    Attributes
    ----------
    columns : tuple of str
        Every column's name, in the file's order.
    delimiter : str
        One character; ``" "`` reads runs of spaces and tabs as one.
    header : bool
        The first line names the columns (it is no row).
    decimal : str
        ``,`` for decimal commas, else ``.``.
    quote : str
        The character that quotes a cell (``'`` in an ``.arff`` file).
    skip : int
        Lines before the table (before its header line, if it has one).
    """

    columns: tuple
    delimiter: str = ","
    header: bool = True
    decimal: str = "."
    quote: str = '"'
    skip: int = 0

    @property
    def first_line(self) -> int:
        """The line (from 1) of the first row."""
        return 1 + self.skip + self.header

    @classmethod
    def of(cls, header: headers.TableHeader) -> "Layout":
        """The layout `designer.graph.headers` sniffed from a CSV's first lines."""
        return cls(tuple(header.columns), header.delimiter, header.has_header, header.decimal)


@dataclass
class Chunk:
    """Consecutive rows of a table: the columns asked for, and where each row is."""

    numbers: np.ndarray   # (rows, numbers asked) float64, NaN where a cell is missing
    texts: np.ndarray     # (rows, texts asked) object: each cell's stripped text
    lines: np.ndarray     # (rows,) int64: each row's line in the file, from 1
    first_row: int        # the number of the chunk's first row in the table, from 1


@dataclass
class Columns:
    """Every row of the columns asked for (`read_columns`)."""

    path: Path
    numbers: np.ndarray
    texts: np.ndarray
    first_line: int       # the line of the first row
    blank: np.ndarray     # the blank lines left out, sorted

    @property
    def rows(self) -> int:
        return len(self.numbers)

    def line(self, row: int) -> int:
        """The line (from 1) of row ``row`` (from 0)."""
        line = self.first_line + row
        while True:  # each blank line before it moves it down one
            moved = self.first_line + row + int(np.searchsorted(self.blank, line, "right"))
            if moved == line:
                return line
            line = moved


# -------------------------------------------------------------------------- reading --
def read_columns(path: Path, layout: Layout, numbers: Sequence[str] = (),
                 texts: Sequence[str] = ()) -> Columns:
    """Every row of the ``numbers`` columns (as float64) and the ``texts`` columns (as
    stripped text) of a delimited table. Raises `DataError`."""
    path = Path(path)
    check_file(path)
    most = count_lines(path)  # at least the rows: the numbers are read in place
    values = np.empty((most, len(numbers)), np.float64)
    cells = np.empty((most, len(texts)), object)
    rows, blank = 0, []
    for chunk in chunks(path, layout, numbers, texts, CHUNK_ROWS, blank):
        n = len(chunk.lines)
        values[rows:rows + n], cells[rows:rows + n] = chunk.numbers, chunk.texts
        rows += n
    return Columns(path, values[:rows], cells[:rows], layout.first_line,
                   np.asarray(blank, np.int64))


def chunks(path: Path, layout: Layout, numbers: Sequence[str] = (), texts: Sequence[str] = (),
           rows: int = CHUNK_ROWS, blank: list | None = None) -> Iterator[Chunk]:
    """The rows of `read_columns`, ``rows`` lines at a time (a chunk holds fewer rows where
    lines were blank; the last may hold fewer). ``blank`` collects the blank lines left out.
    Nothing is held but a chunk, so the size limit is `read_columns`' alone.
    """
    path = Path(path)
    if problem := datasets.not_regular(path):
        raise DataError(problem)
    _check_first_row(path, layout)
    names = list(layout.columns)
    at_n, at_t = [names.index(c) for c in numbers], [names.index(c) for c in texts]
    options = dict(
        sep=r"\s+" if layout.delimiter == " " else layout.delimiter, header=None,
        names=range(len(names)), index_col=False, skiprows=layout.skip + layout.header,
        quotechar=layout.quote,
        skip_blank_lines=False, keep_default_na=False, dtype={j: str for j in at_t},
        na_values={j: MARKERS for j in range(len(names)) if j not in at_t},
        decimal=layout.decimal, encoding="utf-8-sig", engine="c", chunksize=rows)
    line, row = layout.first_line, 1
    raw = _RawLines(path)
    try:
        with pd.read_csv(path, **options) as reader:
            for frame in reader:
                lines = line + np.arange(len(frame), dtype=np.int64)
                line += len(frame)
                empty = raw.blank(lines[_all_missing(frame)], layout.delimiter)
                if len(empty):
                    if blank is not None:
                        blank.extend(empty.tolist())
                    keep = ~np.isin(lines, empty)
                    frame, lines = frame[keep], lines[keep]
                yield Chunk(_numbers(path, frame, at_n, numbers, layout.decimal, row, lines),
                            _texts(frame, at_t), lines, row)
                row += len(frame)
    except pd.errors.ParserError as e:
        raise _parser_error(path, layout, str(e)) from None
    except UnicodeDecodeError:
        raise DataError(f"{path} is not UTF-8 text; save it as UTF-8 CSV") from None
    except pd.errors.EmptyDataError:
        return
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    finally:
        raw.close()


def _numbers(path: Path, frame, at: list, names, decimal: str, row: int,
             lines: np.ndarray) -> np.ndarray:
    """The number columns of a chunk, or the `DataError` for its first bad cell."""
    values = np.empty((len(frame), len(at)), np.float64)
    wrong = []  # (position, column) of each column's first bad cell
    for k, j in enumerate(at):
        values[:, k], bad = numbers_of(frame[j].to_numpy(), decimal)
        if bad is not None:
            wrong.append((bad, k))
    if wrong:  # the first in the file: the earliest row, then the first column
        bad, k = min(wrong)
        cell = _text(frame[at[k]].to_numpy()[bad])
        raise DataError(f"{path}: row {row + bad} (line {int(lines[bad])}), column "
                        f"'{names[k]}' holds '{cell[:40]}', which is not a number")
    return values


def _texts(frame, at: list) -> np.ndarray:
    cells = np.empty((len(frame), len(at)), object)
    for k, j in enumerate(at):
        cells[:, k] = texts_of(frame[j].to_numpy())
    return cells


# ---------------------------------------------------------------------------- cells --
def numbers_of(cells: np.ndarray, decimal: str = ".") -> tuple[np.ndarray, int | None]:
    """A column's cells as float64 (NaN where missing) and the position of the first cell
    that is neither a number nor missing (``None`` when every one is)."""
    if cells.dtype.kind in "iuf":
        values = cells.astype(np.float64)
        wrong = np.isinf(values)
    else:  # pandas found something that is not a number: look at each cell
        values = np.fromiter((_number(c, decimal) for c in cells), np.float64, len(cells))
        wrong = np.isinf(values)  # _number gives inf for what is not a number
    if not wrong.any():
        return values, None
    return values, int(np.argmax(wrong))


def _number(cell, decimal: str) -> float:
    """NaN for a missing cell, the number, or inf for what is not one."""
    if isinstance(cell, float) and cell != cell:
        return np.nan
    if not isinstance(cell, str):
        return np.inf  # True, False
    if headers.is_missing(cell):
        return np.nan
    value = headers.parse_number(cell.strip().replace(",", ".") if decimal == "," else
                                 cell.strip())
    return np.inf if value is None else value


def texts_of(cells: np.ndarray) -> np.ndarray:
    """A column's cells as stripped text (``""`` where a short row had none)."""
    return np.fromiter((c.strip() if isinstance(c, str) else "" for c in cells), object,
                       len(cells))


def _text(cell) -> str:
    if isinstance(cell, str):
        return cell.strip()
    return "inf" if cell == np.inf else "-inf" if cell == -np.inf else str(cell)


def _parser_error(path: Path, layout: Layout, message: str) -> DataError:
    m = re.search(r"Expected \d+ fields in line (\d+), saw (\d+)", message)
    if m:
        return RowTooLong(_too_long(path, layout, int(m.group(1)), int(m.group(2))))
    first = message.strip().splitlines()[0] if message.strip() else "unreadable"
    return DataError(f"{path} is not a well-formed CSV file "
                     f"({first.removeprefix('Error tokenizing data. ')})")


def _too_long(path: Path, layout: Layout, line: int, cells: int) -> str:
    width = len(layout.columns)
    names = "the header names" if layout.header else "its first line has"
    return (f"{path}: line {line} has {cells} cells, but {names} {width} "
            f"column{'s' if width != 1 else ''}")


def _cells(text: str, layout: Layout) -> list:
    """A line's cells as the table's delimiter splits them (quotes read)."""
    if layout.delimiter == " ":
        return text.split()
    return next(csv.reader([text.rstrip("\r\n")], delimiter=layout.delimiter,
                           quotechar=layout.quote), [])


# ----------------------------------------------------------------------------- lines --
def check_file(path: Path) -> int:
    """The size of a regular file; a `DataError` for anything else (a named pipe is never
    opened) and for a file past `size_limit`, naming the flag that raises it."""
    try:
        st = Path(path).stat()
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    problem = datasets.not_regular(path, st.st_mode)
    if problem:
        raise DataError(problem)
    size, limit = st.st_size, size_limit()
    if size > limit:
        raise DataError(f"{path} is {size / GB:,.1f} GB, larger than the {limit / GB:g} GB "
                        f"table rnn-designer reads at most; give {LIMIT_FLAG} "
                        f"{max(1, -(-size // GB))} to read it")
    return size


def count_lines(path: Path) -> int:
    """The file's lines (the last one counted whether or not a line break ends it)."""
    lines, last = 0, b"\n"
    try:
        with open(path, "rb") as f:
            while block := f.read(SURVEY_BYTES):
                lines, last = lines + block.count(b"\n"), block[-1:]
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    return lines + (last != b"\n")


def _check_first_row(path: Path, layout: Layout) -> None:
    """The first row may not be longer than the table either (pandas would cut it short)."""
    with open(path, "rb") as f:
        for number, raw in enumerate(itertools.islice(f, layout.first_line + 63), 1):
            text = raw.decode("utf-8-sig", errors="replace")
            if number >= layout.first_line and text.strip():
                cells = len(_cells(text, layout))
                if cells > len(layout.columns):
                    raise RowTooLong(_too_long(path, layout, number, cells))
                return


def _all_missing(frame) -> np.ndarray:
    """The rows of a chunk whose every cell is missing or empty: blank lines, or rows of
    missing-value markers (`_RawLines.blank` tells them apart)."""
    empty = np.ones(len(frame), bool)
    for j in frame.columns:
        cells = frame[j].to_numpy()
        if cells.dtype.kind == "f":
            empty &= np.isnan(cells)
        elif cells.dtype.kind == "O":
            empty &= np.fromiter((not isinstance(c, str) or not c.strip() for c in cells),
                                 bool, len(cells))
        else:  # whole numbers, True and False: nothing missing
            empty[:] = False
        if not empty.any():
            break
    return empty


class _RawLines:
    """The text of some lines of a file, read forward once (for the few lines that need it)."""

    def __init__(self, path: Path):
        self.path, self.file, self.at = path, None, 0

    def blank(self, lines: np.ndarray, delimiter: str) -> np.ndarray:
        """Those of ``lines`` (rising) whose cells are all blank."""
        if not len(lines):
            return lines
        if self.file is None:
            self.file = open(self.path, "rb")
        out = []
        for line in lines.tolist():
            raw = next(itertools.islice(self.file, line - self.at - 1, None), b"")
            self.at = line
            text = raw.decode("utf-8-sig", errors="replace")
            if not (text.split() if delimiter == " " else text.replace(delimiter, " ").split()):
                out.append(line)
        return np.asarray(out, np.int64)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
