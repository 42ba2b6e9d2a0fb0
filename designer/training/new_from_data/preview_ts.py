"""The first look at a UEA/UCR ``.ts`` file (see `designer.training.new_from_data.preview`): its header and
first series, then, read line by line, the number of series, their lengths, classes and
missing values, and those of the ``_TEST`` file beside it."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from designer.graph import headers
from designer.graph.layers.sequences import paired_test_file, sort_classes

from designer.training.new_from_data.preview_model import (CHECK_EVERY, HEAD_ROWS, Preview,
                                                            PreviewError, Stopped)

SHOWN_CHANNELS = 4       # channels shown in the first rows


def ts_head(path: Path, task: str) -> Preview:
    """The header and first series of a ``.ts`` file as a `Preview`."""
    header = headers.read_ts_header(path)
    shown = min(header.dimensions, SHOWN_CHANNELS)
    names = ["class", "length"] + [f"channel{j + 1}" for j in range(shown)]
    if header.dimensions > shown:
        names.append(f"\u2026 {header.dimensions - shown} more")
    head = []
    for i, line in enumerate(_ts_lines(headers.head_text(path, 1 << 20))):
        if i == HEAD_ROWS:
            break
        parts = line.split(":")
        label = parts.pop().strip()
        row = [label, str(parts[0].count(",") + 1)]
        for p in parts[:shown]:
            cells = p.split(",")
            row.append(", ".join(c.strip() for c in cells[:4]) + (", \u2026" if len(cells) > 4
                                                                  else ""))
        head.append(row + ([""] if header.dimensions > shown else []))
    return Preview(path, "ts", task, [], names, head, channels=header.dimensions)


def _ts_lines(text: str):
    """The data lines of a ``.ts`` text (after ``@data``, no comments)."""
    in_data = False
    for line in text.splitlines():
        s = line.strip()
        if headers.ts_blank(s):
            continue
        if not in_data:
            in_data = s.lower().startswith("@data")
            continue
        yield s


def scan_ts(look: Preview, stop, progress) -> None:
    """Fill in ``look``'s sequences, lengths, classes and missing values."""
    classes, lengths, missing = _ts_counts(look, look.path, stop, progress)
    look.classes = {k: classes[k] for k in sort_classes(classes)}
    look.sequences, look.missing = sum(classes.values()), missing
    look.lengths = (min(lengths), max(lengths))
    test = paired_test_file(look.path)
    if test is not None:
        look.test_file = test
        test_classes, _, _ = _ts_counts(look, test, stop, progress)
        look.test_sequences = sum(test_classes.values())


def _ts_counts(look: Preview, path: Path, stop, progress) -> tuple[Counter, list, int]:
    """Sequences per class, each one's length and the missing values of one ``.ts`` file."""
    header = headers.read_ts_header(path)
    declared = set(header.class_labels)
    classes: Counter = Counter()
    lengths: list[int] = []
    missing = 0
    with open(path, encoding="utf-8-sig") as f:
        for number, s in headers.ts_data_lines(f):
            parts = s.split(":")
            label = parts.pop().strip()
            if len(lengths) % CHECK_EVERY == 0 and lengths:
                if stop():
                    raise Stopped
                if progress is not None:
                    progress(len(lengths))
            if look.problem is None and len(parts) != look.channels:
                look.problem = (f"{path}: line {number} holds {len(parts)} channels, but the "
                                f"file has {look.channels}; every series needs the same number")
            if look.problem is None and declared and label not in declared:
                look.problem = (f"{path}: line {number} has the class '{label}', which the "
                                "header's @classLabel does not list")
            classes[label] += 1
            lengths.append(parts[0].count(",") + 1 if parts else 0)
            missing += s.count("?") + s.lower().count("nan")
    if not lengths:
        raise PreviewError(f"{path} holds no series after @data")
    return classes, lengths, missing
