"""Small-data sets made from public UCR/UEA sets: each training file cut down to K training
sequences per class (drawn with a fixed seed), beside the set's whole test file; and, with
``--formats``, the same training and test files written in the UCR archive's other formats
(the 2018 archive's tab-separated ``.tsv``, the older space-separated ``.txt`` and comma-
separated ``.csv``, label first and no header; and ``.arff``), for the readers' benchmarks.

    python tests/benchmarks/small_sets.py OUT [--per-class 2] [--formats] SET_TRAIN.ts ...

writes OUT/<Set>-<K>/<Set>-<K>_TRAIN.ts and _TEST.ts (and the other formats). Nothing is
written into the repository: the sets come from RNN_DESIGNER_DATA or aeon's own data.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def read(path: Path):
    """(header lines, [(line, label)]) of a .ts file."""
    head, rows, data = [], [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if not data:
            head.append(line)
            data = s.lower().startswith("@data")
            continue
        if s and s[0] not in "#%":
            rows.append((line, s.rsplit(":", 1)[1].strip()))
    return head, rows


def cut(rows, per_class: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    by = {}
    for i, (_, label) in enumerate(rows):
        by.setdefault(label, []).append(i)
    keep = sorted(j for ids in by.values() for j in rng.permutation(ids)[:per_class])
    return [rows[j] for j in keep]


def univariate(rows):
    """[(label, values)] where every series has one channel; None otherwise."""
    out = []
    for line, label in rows:
        parts = line.strip().split(":")
        if len(parts) != 2:
            return None
        out.append((label, parts[0].split(",")))
    return out


def write_formats(folder: Path, stem: str, rows, relation: str) -> None:
    series = univariate(rows)
    if series is None:
        return
    for suffix, sep in ((".tsv", "\t"), (".txt", "  "), (".csv", ",")):
        text = "".join(sep.join([label, *values]) + "\n" for label, values in series)
        (folder / (stem + suffix)).write_text(text, encoding="utf-8")
    width = max(len(v) for _, v in series)
    classes = sorted({label for label, _ in series})
    lines = [f"@relation {relation}"] + [f"@attribute att{i + 1} numeric" for i in range(width)]
    lines += ["@attribute target {" + ",".join(classes) + "}", "@data"]
    lines += [",".join(values + ["?"] * (width - len(values)) + [label])
              for label, values in series]
    (folder / (stem + ".arff")).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("train", nargs="+")
    ap.add_argument("--per-class", type=int, default=2)
    ap.add_argument("--formats", action="store_true")
    args = ap.parse_args()
    for name in args.train:
        train = Path(name)
        test = train.with_name(train.name.replace("_TRAIN", "_TEST"))
        base = train.stem.replace("_TRAIN", "")
        set_name = f"{base}-{args.per_class}"
        folder = Path(args.out) / set_name
        folder.mkdir(parents=True, exist_ok=True)
        head, rows = read(train)
        kept = cut(rows, args.per_class)
        (folder / f"{set_name}_TRAIN.ts").write_text(
            "\n".join(head + [line for line, _ in kept]) + "\n", encoding="utf-8")
        (folder / f"{set_name}_TEST.ts").write_text(test.read_text(encoding="utf-8"),
                                                    encoding="utf-8")
        if args.formats:
            write_formats(folder, f"{set_name}_TRAIN", kept, set_name)
            write_formats(folder, f"{set_name}_TEST", read(test)[1], set_name)
        print(f"{folder}: {len(kept)} training sequences ({args.per_class} a class), "
              f"{len(read(test)[1])} test")


if __name__ == "__main__":
    main()
