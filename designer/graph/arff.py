"""The header of a Weka ``.arff`` file of labelled sequences, as the UCR/UEA archive writes
them (pure stdlib, as `designer.graph.headers`; the rows after ``@data`` are read by the one
reader of tables).

- Univariate: one numeric attribute a step (``@attribute att1 numeric`` ...), then the class:
  each row is ``v1,v2,...,label``.
- Multivariate: one relational attribute whose numeric attributes are the steps, then the
  class; each row is ``'channel 1\\nchannel 2...',label``, the channels separated by the two
  characters backslash and n.

The class is the last attribute, nominal (``{a,b,c}``: the classes it declares) or not.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from designer.graph import headers
from designer.graph.datasets import DataProblem

NUMERIC = ("numeric", "real", "integer")
_ATTRIBUTE = re.compile(r"@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class ArffHeader:
    """What an ``.arff`` file's header says (see the module doc)."""

    path: Path
    relation: str
    steps: int                # numeric attributes a channel
    channels: int             # 1, or the channels of the first row of a relational file
    class_name: str
    class_labels: tuple       # declared by a nominal class attribute, else ()
    relational: bool
    data_line: int            # the line of @data (the rows start after it)


def read_arff_header(path: Path) -> ArffHeader:
    """The header of an ``.arff`` file (cached); `DataProblem` in one sentence."""
    return headers._cached(Path(path), "arff", _read)


def _read(path: Path) -> ArffHeader:
    text = headers.head_text(path, 1 << 22)
    relation, top, inner, within = "", [], [], None
    data_line, first_row = None, None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("%"):
            continue
        low = s.lower()
        if data_line is not None:
            first_row = s
            break
        if low.startswith("@relation"):
            relation = _unquote(s[len("@relation"):].strip())
        elif low.startswith("@attribute"):
            m = _ATTRIBUTE.match(s)
            if m is None:
                raise DataProblem(f"{path}: line {number} is an @attribute without a type")
            name, kind = _unquote(m.group(1)), m.group(2).strip()
            (inner if within is not None else top).append((name, kind))
            if kind.lower().startswith("relational") and within is None:
                within = name
        elif low.startswith("@end"):
            within = None
        elif low.startswith("@data"):
            data_line = number
        else:
            raise DataProblem(f"{path} is not an .arff file: line {number} comes before @data "
                              "but is neither a comment (%) nor a header line (@)")
    if data_line is None:
        raise DataProblem(f"{path} is not an .arff file (no @data line in its first 4 MiB)")
    if first_row is None:
        raise DataProblem(f"{path} holds no rows after @data")
    if len(top) < 2:
        raise DataProblem(f"{path} declares {len(top)} attribute(s); labelled sequences need "
                          "the steps and the class")
    class_name, class_kind = top[-1]
    labels = _nominal(class_kind)
    steps = top[:-1]
    relational = any(k.lower().startswith("relational") for _, k in steps)
    if relational:
        if len(steps) != 1:
            raise DataProblem(f"{path} has a relational attribute beside others; a "
                              "multivariate .arff holds one, then the class")
        values = inner
        channels = first_row.count("\\n") + 1
    else:
        values, channels = steps, 1
    bad = [n for n, k in values if k.lower() not in NUMERIC]
    if bad:
        raise DataProblem(f"{path}: attribute '{bad[0]}' is not numeric; every step of a "
                          "sequence must be a number")
    return ArffHeader(path, relation, len(values), channels, class_name, labels, relational,
                      data_line)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _nominal(kind: str) -> tuple:
    """The values of a nominal type ``{a, 'b c', 1}``; () for any other type."""
    kind = kind.strip()
    if not (kind.startswith("{") and kind.endswith("}")):
        return ()
    return tuple(_unquote(v) for v in kind[1:-1].split(",") if v.strip())
