"""The first look at a file of labelled sequences one a row (see
`designer.training.new_from_data.preview`): a table with the label first, as the UCR archive
writes its ``.tsv`` and ``.txt`` files (`designer.graph.wide_tables`), or an ``.arff`` file
(`designer.graph.arff`). Its first rows as class, length and first values; then, read through
the one reader of tables, the number of sequences, their lengths, classes and missing values,
and those of the ``_TEST`` file beside it."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from designer.graph import arff, headers, wide_tables
from designer.graph.layers.sequences import paired_test_file, sort_classes

from designer.training.data.wide import read_arff, read_wide
from designer.training.new_from_data.preview_model import HEAD_ROWS, Preview, Stopped

SHOWN_VALUES = 6


def wide_head(path: Path, task: str) -> Preview:
    """The first rows of a label-first table or an ``.arff`` file as a `Preview`."""
    if path.suffix.lower() == ".arff":
        head = arff.read_arff_header(path)
        text = headers.head_text(path, 1 << 22).splitlines()[head.data_line:]
        rows = [_arff_row(line) for line in text if line.strip() and
                not line.strip().startswith("%")][:HEAD_ROWS]
        return Preview(path, "arff", task, [], ["class", "length", "values"], rows,
                       channels=head.channels)
    seen = wide_tables.look(path)
    rows = []
    for line in headers.head_text(path, wide_tables.SAMPLE_BYTES).splitlines():
        cells = [c.strip() for c in wide_tables.split(line, seen.delimiter)]
        if not any(cells):
            continue
        values = cells[1:]
        while values and headers.is_missing(values[-1]):
            values.pop()
        rows.append([cells[0], str(len(values)), _values(values)])
        if len(rows) == HEAD_ROWS:
            break
    return Preview(path, "wide", task, [], ["class (first column)", "length", "values"], rows,
                   channels=1)


def _arff_row(line: str) -> list[str]:
    body, _, label = line.strip().rpartition(",")
    first = body.strip("'").split("\\n")[0].split(",")
    while first and headers.is_missing(first[-1]):
        first.pop()
    return [label.strip().strip("'"), str(len(first)), _values(first)]


def _values(cells: list[str]) -> str:
    shown = ", ".join(c.strip() for c in cells[:SHOWN_VALUES])
    return shown + (", \u2026" if len(cells) > SHOWN_VALUES else "")


def scan_wide(look: Preview, stop, progress) -> None:
    """Fill in ``look``'s sequences, lengths, classes and missing values (and its test file's
    sequences)."""
    seqs, missing = _read(look.path)
    if stop():
        raise Stopped
    if progress is not None:
        progress(len(seqs.series))
    counts = Counter(seqs.labels)
    look.classes = {k: counts[k] for k in sort_classes(counts)}
    if look.format == "arff" and seqs.classes:  # the classes the header declares, in order
        look.classes = {k: counts.get(k, 0) for k in seqs.classes}
    lengths = [len(s) for s in seqs.series]
    look.sequences, look.lengths, look.missing = len(lengths), (min(lengths), max(lengths)), \
        missing
    test = paired_test_file(look.path)
    if test is not None:
        look.test_file = test
        look.test_sequences = len(_read(test)[0].series)


def _read(path: Path):
    """The sequences of a file and how many missing values inside them were filled in."""
    seqs = read_arff(path) if path.suffix.lower() == ".arff" else read_wide(path)
    return seqs, seqs.filled
