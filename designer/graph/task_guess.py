"""Which task a data file is for, from its kind and first rows (pure stdlib: the window's
New from Data preview asks this before torch is loaded; ``rnn-designer init`` asks it too).

A ``.ts`` or ``.arff`` file, a table of one sequence a row with the label first and no header
(the UCR archive's ``.tsv``, ``.txt`` and ``.csv``: `designer.graph.wide_tables`), or a
long-format CSV (a series id first whose rows come in runs, a label constant within each
series), is labelled sequences to classify; any other table or a ``.npy`` is a series to
forecast. A table of numbers whose first column may be a label or a measurement is neither:
`TaskQuestion` asks which.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from designer.graph import headers, wide_tables
from designer.graph.datasets import DataProblem

LABEL_NAMES = ("label", "class", "target", "y", "category", "activity", "classlabel")


class TaskQuestion(DataProblem):
    """The file could hold either task; ``str()`` asks which, in one sentence."""


def guess_task(path: Path, target: str | None = None) -> str:
    """``classify`` or ``forecast``; raises `TaskQuestion` for a table that could be either
    and `DataProblem` for one that cannot be read."""
    suffix = Path(path).suffix.lower()
    if suffix in (".ts", ".arff"):
        return "classify"
    if suffix == ".npy":
        return "forecast"
    seen = wide_tables.look(path)
    if seen.wide:
        return "classify"
    if seen.verdict == wide_tables.UNSURE and not target:
        raise TaskQuestion(
            f"{path} could be a table of series to forecast or one labelled sequence a "
            f"row, the label first (as the UCR archive writes them): {seen.reason}")
    header = headers.read_csv_header(path)
    return "classify" if is_long_format(path, header, target) else "forecast"


def is_long_format(path: Path, header: headers.TableHeader, target: str | None) -> bool:
    """The CSV's first rows read as labelled sequences: ids in runs, one label per id."""
    cols = list(header.columns)
    label = target if target in cols else cols[-1]
    if len(cols) < 3 or cols[0] == header.time_column or label == cols[0]:
        return False
    text = headers.head_text(path)
    rows = list(csv.reader(io.StringIO(text), delimiter=header.delimiter))
    rows = rows[1:] if header.has_header else rows
    rows = [r for r in rows if len(r) == len(cols)]
    ids = [r[0].strip() for r in rows]
    if len(rows) < 4 or len(set(ids)) > len(rows) / 2:
        return False
    runs = sum(1 for a, b in zip(ids, ids[1:]) if a != b) + 1
    if runs != len(set(ids)):
        return False  # an id's rows do not come together: not one series per id
    j = cols.index(label)
    per_id: dict[str, set] = {}
    for r in rows:
        per_id.setdefault(r[0].strip(), set()).add(r[j].strip())
    constant = all(len(v) == 1 for v in per_id.values())
    named = label.strip().lower() in LABEL_NAMES or not header.numeric[j]
    return constant and (named or len(per_id) >= 3)
