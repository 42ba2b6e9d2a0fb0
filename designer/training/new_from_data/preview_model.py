"""What a first look at a data file found (`designer.training.new_from_data.preview`): the `Preview` of a
table or of labelled sequences, its columns, and the errors of a preview. Plain data only."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from designer.graph.layers.sequences import sort_classes

HEAD_ROWS = 20
SAMPLE_TIMES = 200       # first time stamps read for the rows' spacing
MAX_DISTINCT = 200       # a column with more distinct values is no label
CHECK_EVERY = 4096       # rows between looks at stop()
PROGRESS_EVERY = 50_000
SEQUENCE_FORMATS = ("ts", "wide", "arff")  # a whole sequence a line


class PreviewError(Exception):
    """The file cannot be previewed; ``str()`` is one sentence naming it."""


class Stopped(Exception):
    """``stop()`` said to give up (the user picked another file)."""


@dataclass
class Column:
    """One column of a table: its name, ``number``, ``time`` or ``text``, its empty cells
    and, while there are few, its distinct values with their counts (labels)."""

    name: str
    kind: str
    missing: int = 0
    values: Counter | None = field(default_factory=Counter)


@dataclass
class Preview:
    """What `read_head` and `scan` found; plain data, passed between threads as it is."""

    path: Path
    format: str                      # csv, npy, ts, wide (a sequence a row) or arff
    task: str                        # classify, forecast or unsure, as init would guess it
    columns: list                    # Column per column of a table, [] for .ts
    head_columns: list               # the header of the first rows' table
    head: list                       # the first rows, as text
    time_column: str | None = None
    spacing: str | None = None       # "weekly (a season of 52 rows)", from the first times
    scanned: bool = False
    rows: int | None = None          # data rows of a table
    missing: int = 0
    first_missing: str | None = None  # "row 24 (line 25), column co2"
    problem: str | None = None        # the first thing that would stop training
    sequences: int | None = None
    channels: int | None = None
    lengths: tuple | None = None      # (shortest, longest)
    classes: dict = field(default_factory=dict)   # class -> sequences
    test_file: Path | None = None
    test_sequences: int | None = None
    question: str | None = None       # why the task cannot be guessed (task "unsure")

    @property
    def one_a_line(self) -> bool:
        """Each line (row) of the file is a whole sequence: a .ts, .arff or wide table."""
        return self.format in SEQUENCE_FORMATS

    # ------------------------------------------------------------------- choices --
    def numeric_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.kind == "number"]

    def target_choices(self) -> list[str]:
        """Columns a forecast can target (numbers, not the time)."""
        return [c for c in self.numeric_columns() if c != self.time_column]

    def default_target(self) -> str | None:
        """What ``init`` targets when none is named: the last numeric column."""
        choices = self.target_choices()
        return choices[-1] if choices else None

    def label_choices(self) -> list[str]:
        """Columns that can label the sequences of a long-format CSV (all but the first)."""
        return [c.name for c in self.columns[1:]]

    def class_counts(self, label: str | None = None) -> dict | None:
        """Sequences per class: a ``.ts`` file's, or rows per value of a CSV column (``None``
        when the column holds too many distinct values to be a label)."""
        if self.one_a_line:
            return self.classes
        column = next((c for c in self.columns if c.name == label), None)
        if column is None or column.values is None:
            return None
        return {k: column.values[k] for k in sort_classes(column.values)}

    # ------------------------------------------------------------------- summary --
    def summary(self) -> str:
        """One line: the size of the data and its empty cells."""
        name = self.path.name
        if self.one_a_line:
            if self.sequences is None:
                return f"{name}: reading the sequences\u2026"
            low, high = self.lengths
            steps = f"{low} steps" if low == high else f"{low} to {high} steps"
            text = (f"{self.sequences:,} sequences of {count(self.channels, 'channel')}, "
                    f"{steps} long, {count(len(self.classes), 'class')}")
            if self.test_file is not None and self.test_sequences is not None:
                text += (f"; {self.test_file.name} beside it holds {self.test_sequences:,} "
                         "more, the test split")
        else:
            rows = f"{self.rows:,}" if self.rows is not None else "counting"
            text = f"{rows} rows of {count(len(self.columns), 'column')}"
            if self.sequences is not None and self.task == "classify":
                low, high = self.lengths
                text += (f" = {self.sequences:,} sequences ({self.columns[0].name}) of "
                         f"{low} to {high} steps")
        if self.spacing:
            text += f", {self.spacing}"
        if self.scanned and not self.one_a_line:
            text += "; no empty cells" if not self.missing else (
                f"; {count(self.missing, 'empty cell')}, the first at {self.first_missing}")
        elif self.scanned and self.missing:
            text += f"; {count(self.missing, 'missing value')}" + \
                (" ('?')" if self.format == "ts" else " inside sequences")
        return text


def count(n: int, noun: str) -> str:
    """``1 column``, ``3 columns``, ``2 classes``."""
    plural = noun + ("es" if noun.endswith("s") else "s")
    return f"{n:,} {noun if n == 1 else plural}"
