"""What the designer needs to know about a table or a labelled-sequence file, read from its
first lines only (pure stdlib: the graph calls this on every change of a data layer).

- CSV (any of ``, ; tab |`` as the delimiter, with or without a header row) and ``.npy``: the
  column names, which columns hold numbers and which one holds the time.
- UEA/UCR ``.ts``: the header lines up to ``@data`` and the first series, for the number of
  channels, the class labels and, for equal-length data, the length.

Results are cached by path, size and modification time, so an unchanged file is read once.
Every problem is a :class:`~designer.graph.datasets.DataProblem` whose text is one sentence
naming the file.
"""
from __future__ import annotations

import ast
import csv
import datetime as _dt
import io
import re
from dataclasses import dataclass
from pathlib import Path

from designer.graph.datasets import DataProblem, open_data

SAMPLE_BYTES = 1 << 16      # what is read of a CSV to learn its columns
SAMPLE_ROWS = 200
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "-", "--", "#n/a", "#na"})
TIME_NAMES = ("date", "time", "timestamp", "datetime", "ds", "year", "month", "week", "day",
              "period", "dt", "t")
_DATE_RE = re.compile(r"^\d{4}-\d{1,2}(-\d{1,2})?"
                      r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$"
                      r"|^\d{4}/\d{1,2}/\d{1,2}( \d{1,2}:\d{2}(:\d{2})?)?$")

_cache: dict[tuple, object] = {}


@dataclass(frozen=True)
class TableHeader:
    """The columns of a CSV or ``.npy`` table.

    Attributes
    ----------
    columns : tuple of str
        Column names (``col1``, ``col2``... when the file has no header row).
    numeric : tuple of bool
        Per column: the sampled cells that are not missing-value markers are (mostly) numbers.
    time_column : str or None
        The column that holds the time (by name, or because it holds dates).
    delimiter : str
    decimal : str
        ``,`` for a table written with decimal commas (``1,5;2``), else ``.``.
    has_header : bool
    rows : int or None
        The number of rows, when the header says it (``.npy``); ``None`` for a CSV.
    """

    path: Path
    columns: tuple
    numeric: tuple
    time_column: str | None
    delimiter: str = ","
    has_header: bool = True
    rows: int | None = None
    decimal: str = "."

    def number(self, cell: str) -> float | None:
        """A cell of this table as a number (decimal commas read), else ``None``."""
        return parse_number(cell.replace(",", ".") if self.decimal == "," else cell)

    def numeric_columns(self) -> list[str]:
        return [c for c, n in zip(self.columns, self.numeric) if n]


@dataclass(frozen=True)
class TsHeader:
    """The header of a UEA/UCR ``.ts`` file."""

    path: Path
    dimensions: int
    class_labels: tuple       # as written after @classLabel true
    equal_length: bool
    series_length: int | None
    timestamps: bool


# ----------------------------------------------------------------------------- helpers --
def is_missing(cell: str) -> bool:
    return cell.strip().lower() in MISSING


def parse_number(cell: str) -> float | None:
    """``float(cell)`` or ``None`` when the cell is not a number (``inf`` and ``nan`` are not)."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if value - value == 0 else None


_QUARTER_RE = re.compile(r"^(\d{4})\s*-?\s*[Qq]([1-4])$")
_NAMED_FORMATS = ("%b-%d-%Y", "%Y %b", "%b %Y", "%b-%Y", "%Y-%b", "%d %b %Y", "%B %Y",
                  "%Y %B", "%d-%b-%Y", "%b %d %Y", "%b %d, %Y")


def parse_time(cell: str) -> float | None:
    """Days since 1970 for a date or time (``2001-12-29``, ``2001-12-29 13:00``,
    ``2001/12/29``, ``2001-12``, ``20011229``, ``1970 Q1``, ``Jan-1-1995``, ``1991 Jul``),
    else ``None``."""
    text = cell.strip()
    if text.isdigit() and len(text) == 8:
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    elif (q := _QUARTER_RE.match(text)) is not None:
        return _days(_dt.datetime(int(q.group(1)), 3 * int(q.group(2)) - 2, 1))
    elif re.search(r"[A-Za-z]{3}", text) and len(text) <= 20:
        for fmt in _NAMED_FORMATS:
            try:
                return _days(_dt.datetime.strptime(text, fmt))
            except ValueError:
                continue
        return None
    elif not _DATE_RE.match(text):
        return None
    text = text.replace("/", "-")
    if re.fullmatch(r"\d{4}-\d{1,2}", text):
        text += "-1"
    date, _, clock = text.partition(" ") if " " in text else text.partition("T")
    try:
        y, m, d = (int(v) for v in date.split("-"))
        day = _dt.datetime(y, m, d)
        if clock:
            when = _dt.datetime.fromisoformat(f"{day.date().isoformat()}T"
                                              f"{clock.replace('Z', '+00:00')}")
            if when.tzinfo is not None:
                when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            day = when
    except ValueError:
        return None
    return _days(day)


def _days(d: _dt.datetime) -> float:
    return (d - _dt.datetime(1970, 1, 1)).total_seconds() / 86400.0


def seasonal_period(days_between: float) -> int:
    """The seasonal period, in steps, of data sampled every ``days_between`` days: a day of
    half-hourly or hourly data, a week of daily data, a year of weekly, monthly or quarterly
    data; 0 when there is none to speak of (yearly data, irregular spacing)."""
    for lo, hi, period in ((1 / 48 * 0.9, 1 / 48 * 1.1, 48), (1 / 24 * 0.9, 1 / 24 * 1.1, 24),
                           (0.9, 1.1, 7), (6.5, 7.5, 52),
                           (27, 32, 12), (88, 93, 4)):
        if lo <= days_between <= hi:
            return period
    return 0


def _cached(path: Path, kind: str, read):
    st = path.stat()
    key = (kind, str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _cache:
        if len(_cache) > 64:
            _cache.clear()
        _cache[key] = read(path)
    return _cache[key]


def head_text(path: Path, limit: int = SAMPLE_BYTES) -> str:
    try:
        with open_data(path) as f:
            raw = f.read(limit)
    except OSError as e:
        raise DataProblem(f"{path} cannot be read ({e.strerror or e})") from None
    if not raw.strip():
        raise DataProblem(f"{path} is empty")
    if b"\x00" in raw:
        raise DataProblem(f"{path} is a binary file, not text (it holds NUL bytes)")
    text = raw.decode("utf-8-sig", errors="replace")
    if len(raw) == limit and "\n" in text:  # drop the line cut short at the limit
        text = text[:text.rfind("\n") + 1]
    return text


# ---------------------------------------------------------------------------------- CSV --
def sniff_delimiter(text: str) -> str:
    """The delimiter of a CSV sample: the one of ``, ; tab |`` that splits the first lines
    into the same number of cells (more than one), preferring the comma."""
    lines = [ln for ln in text.splitlines()[:20] if ln.strip()]
    best, best_cells = ",", 1
    for d in (",", ";", "\t", "|"):
        counts = {len(next(csv.reader([ln], delimiter=d))) for ln in lines}
        n = counts.pop() if len(counts) == 1 else 0
        # a tie between ',' and ';' is a table with decimal commas: 1,5;2
        if n > best_cells or (n == best_cells > 1 and d == ";"):
            best, best_cells = d, n
    return best


def read_csv_header(path: Path) -> TableHeader:
    """The columns of a CSV file, from its first 64 KiB (cached)."""
    return _cached(Path(path), "csv", _read_csv_header)


def _read_csv_header(path: Path) -> TableHeader:
    text = head_text(path)
    delim = sniff_delimiter(text)
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delim) if any(c.strip() for c in r)]
    if not rows:
        raise DataProblem(f"{path} holds no rows")
    first = [c.strip() for c in rows[0]]
    has_header = any(parse_number(c.replace(",", ".")) is None and not is_missing(c)
                     for c in first) or (len(rows) > 1 and not first[0] and
                                         all(r and r[0].strip() for r in rows[1:6]))
    if has_header:
        names, body = first, rows[1:SAMPLE_ROWS + 1]
        if not body:
            raise DataProblem(f"{path} holds a header row but no data")
    else:
        names, body = [f"col{i + 1}" for i in range(len(first))], rows[:SAMPLE_ROWS]
    names = [n or f"col{i + 1}" for i, n in enumerate(names)]
    decimal = "," if delim != "," and any(re.fullmatch(r"-?\d+,\d+", c.strip())
                                          for r in body for c in r) else "."
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataProblem(f"{path} has two columns named '{dup}'")
    numeric, dates = [], []
    for j in range(len(names)):
        cells = [r[j].strip() for r in body if j < len(r)]
        present = [c for c in cells if not is_missing(c)]
        numbers = sum(parse_number(c.replace(",", ".") if decimal == "," else c) is not None
                      for c in present)
        # mostly numbers: a stray word is told with its row when the table is read
        numeric.append(numbers >= max(1, 0.8 * len(present)) or not present)
        dates.append(bool(present) and all(parse_time(c) is not None for c in present))
    if has_header and not first[0] and numeric[0] and _counts_rows(body):
        names[0] = "index" if "index" not in names else names[0]
        numeric[0] = False  # a table's row numbers (as pandas writes them) are no input
    time_col = next((n for j, n in enumerate(names) if dates[j] and not numeric[j]), None)
    time_col = time_col or next((n for n in names if n.strip().lower() in TIME_NAMES), None)
    return TableHeader(path, tuple(names), tuple(numeric), time_col, delim, has_header,
                       decimal=decimal)


def _counts_rows(body: list) -> bool:
    """The first cells count the rows: 0, 1, 2... or 1, 2, 3..."""
    cells = [r[0].strip() for r in body if r]
    return bool(cells) and all(c.isdigit() for c in cells) and \
        [int(c) for c in cells] == list(range(int(cells[0]), int(cells[0]) + len(cells)))


# ---------------------------------------------------------------------------------- npy --
def read_npy_header(path: Path) -> TableHeader:
    """The shape of a ``.npy`` array as a table: rows x columns ``col1``... (cached)."""
    return _cached(Path(path), "npy", _read_npy_header)


def _read_npy_header(path: Path) -> TableHeader:
    try:
        with open_data(path) as f:
            magic = f.read(10)
            if len(magic) < 10 or magic[:6] != b"\x93NUMPY":
                raise DataProblem(f"{path} is not a NumPy .npy file (its first bytes are not "
                                  "the .npy magic)")
            major = magic[6]
            if major == 1:
                size = int.from_bytes(magic[8:10], "little")
                head = f.read(size)
            else:
                size = int.from_bytes(magic[8:10] + f.read(2), "little")
                head = f.read(size)
    except OSError as e:
        raise DataProblem(f"{path} cannot be read ({e.strerror or e})") from None
    try:
        info = ast.literal_eval(head.decode("latin1"))
        shape, descr = tuple(info["shape"]), info["descr"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise DataProblem(f"{path} has a damaged .npy header") from None
    if not isinstance(descr, str) or descr[1:2] not in ("f", "i", "u"):
        raise DataProblem(f"{path} holds {descr!r} values; a series needs numbers")
    if len(shape) not in (1, 2) or not shape[0]:
        raise DataProblem(f"{path} holds an array of shape {shape}; a series is a 1-D array "
                          "or a 2-D array of rows x columns")
    cols = 1 if len(shape) == 1 else shape[1]
    names = tuple(f"col{i + 1}" for i in range(cols))
    return TableHeader(path, names, (True,) * cols, None, ",", False, int(shape[0]))


def read_table_header(path: Path) -> TableHeader:
    """A CSV's or a ``.npy``'s columns, by the file's suffix."""
    path = Path(path)
    return read_npy_header(path) if path.suffix.lower() == ".npy" else read_csv_header(path)


def split_names(text: str) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]`` (a parameter that lists columns)."""
    return [t.strip() for t in str(text).split(",") if t.strip()]


def choose_columns(header: TableHeader, inputs: str, target: str,
                   time_column: str = "") -> tuple[str | None, list[str], list[str]]:
    """``(time column, input columns, target columns)`` that a TimeSeries layer reads.

    ``target`` empty: the last numeric column that is not the time. ``inputs`` empty: every
    numeric column but the time (targets included: their past helps predict their future).
    Raises ``DataProblem`` for a column that is not there or holds no numbers.
    """
    path, cols = header.path, list(header.columns)
    shown = ", ".join(cols[:12]) + (" ..." if len(cols) > 12 else "")

    def need(name: str, what: str) -> str:
        if name not in cols:
            near = [c for c in cols if c.lower() == name.lower()]
            hint = f" (did you mean '{near[0]}'?)" if near else f" (it has {shown})"
            raise DataProblem(f"{path} has no column '{name}' for the {what}{hint}")
        if not header.numeric[cols.index(name)]:
            raise DataProblem(f"{path}: column '{name}' (the {what}) holds text, not numbers")
        return name

    time_col = header.time_column
    if time_column:
        if time_column not in cols:
            raise DataProblem(f"{path} has no column '{time_column}' for the time (it has "
                              f"{shown})")
        time_col = time_column
    numeric = [c for c in header.numeric_columns() if c != time_col]
    if not numeric:
        raise DataProblem(f"{path} has no numeric column to learn from (it has {shown})")
    targets = [need(t, "target") for t in split_names(target)] or [numeric[-1]]
    names = split_names(inputs)
    chosen = [need(c, "input") for c in names] if names else numeric
    return time_col, chosen, targets


# ----------------------------------------------------------------------------------- ts --
def read_ts_header(path: Path) -> TsHeader:
    """The header of a ``.ts`` file (cached)."""
    return _cached(Path(path), "ts", _read_ts_header)


def ts_blank(line: str) -> bool:
    """Whether a stripped line of a .ts file holds nothing to read: empty, or a comment, ``#``
    as the format writes them or ``%`` as ARFF (and some UCR/UEA files, aeon's own among
    them) does."""
    return not line or line[0] in "#%"


def ts_data_lines(lines):
    """The numbered, stripped lines of a .ts file's data section (after ``@data``), those that
    hold nothing to read passed over: ``(line number, text)``."""
    in_data = False
    for number, line in enumerate(lines, 1):
        s = line.strip()
        if ts_blank(s):
            continue
        if not in_data:
            in_data = s.lower().startswith("@data")
            continue
        yield number, s


def _read_ts_header(path: Path) -> TsHeader:
    text = head_text(path, 1 << 20)
    fields: dict[str, str] = {}
    first = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if ts_blank(s):
            continue
        if s.lower().startswith("@data"):
            first = next((ln.strip() for ln in lines[i + 1:] if not ts_blank(ln.strip())),
                         None)
            break
        if s.startswith("@"):
            key, _, value = s[1:].partition(" ")
            fields[key.lower()] = value.strip()
        else:
            raise DataProblem(f"{path} is not a .ts file: line {i + 1} comes before @data but "
                              "is neither a comment (# or %) nor a header (@)")
    else:
        raise DataProblem(f"{path} is not a .ts file (no @data line in its first MiB)")
    if first is None:
        raise DataProblem(f"{path} holds no series after @data")
    timestamps = fields.get("timestamps", "false").lower() == "true"
    label = fields.get("classlabel", "false").split()
    if not label or label[0].lower() != "true":
        raise DataProblem(f"{path} has no class labels (its header lacks '@classLabel true "
                          "...'), so it cannot train a classifier")
    labels = tuple(label[1:])
    dims = fields.get("dimensions")
    if dims is not None and dims.isdigit():
        channels = int(dims)
    elif fields.get("univariate", "").lower() == "true":
        channels = 1
    else:
        channels = max(1, first.count(":"))
    length = fields.get("serieslength")
    equal = fields.get("equallength", "false").lower() == "true"
    return TsHeader(path, channels, labels, equal,
                    int(length) if equal and length and length.isdigit() else None, timestamps)
