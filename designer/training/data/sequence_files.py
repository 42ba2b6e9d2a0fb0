"""Labelled sequences from any file the ``SequenceClasses`` layer reads: the reader its
kind calls for (`designer.graph.layers.sequences.file_layout`): ``.ts`` and long-format tables
(`labelled`), tables of a sequence a row and ``.arff`` files (`wide`)."""
from __future__ import annotations

from pathlib import Path

from designer.graph.datasets import DataProblem
from designer.graph.layers.sequences import file_layout

from designer.training.data.errors import DataError
from designer.training.data.labelled import Sequences, read_long_csv, read_ts
from designer.training.data.wide import read_arff, read_wide


def read_sequences(path: Path, label_column: str = "", labelled: bool = True,
                   layout: str = "auto") -> Sequences:
    """A ``.ts``, ``.arff`` or table file's sequences (``labelled``: labels are required;
    ``layout``: the ``SequenceClasses`` layer's, how a table holds them)."""
    path = Path(path)
    try:
        kind = file_layout(path, layout)
    except DataProblem as e:
        raise DataError(str(e)) from None
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    read = {"ts": lambda: read_ts(path, labelled),
            "arff": lambda: read_arff(path, labelled),
            "wide": lambda: read_wide(path, label_column, labelled),
            "long": lambda: read_long_csv(path, label_column, labelled)}[kind]
    out = read()
    out.kind = kind
    return out
