"""The non-deep peer `evaluate` puts beside a classifier: MiniRocket's test accuracy on the
UCR/UEA train/test splits, as `designer.training.trained.peers.classify_peer` fits and scores
it (the whole TRAIN file learnt, the TEST file scored; JapaneseVowels' sequences of 7 to 29
steps padded to 29), a few seeds each, with the time one fit and score takes.

    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_peers.py [--seeds 0,1,2]
        [--only GunPoint]

The issue's figures (MiniRocket): GunPoint 0.993, ArrowHead 0.857, OSULeaf 0.955,
JapaneseVowels 0.984. Needs the extra: pip install 'rnn-designer[peers]'.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DATA_SETS = {"GunPoint": ("ucr/GunPoint_TRAIN.ts", 0.993),
             "ArrowHead": ("ucr/ArrowHead_TRAIN.ts", 0.857),
             "OSULeaf": ("ucr/OSULeaf_TRAIN.ts", 0.955),
             "JapaneseVowels": ("japanese_vowels/JapaneseVowels_TRAIN.ts", 0.984)}


def source_for(path: Path, folder: Path):
    from designer.graph.project import load
    from designer.training.data import open_source
    from designer.training.new_from_data.init import init_project
    project_file, _ = init_project(path, out=folder / f"{path.stem}.json")
    project = load(project_file)
    return open_source(project.graph.layer(project.graph.sources()[0]), folder)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--only", choices=tuple(DATA_SETS))
    args = p.parse_args()
    from designer.training.trained.peers import classify_peer
    data = Path(os.environ.get("RNN_DESIGNER_DATA", ROOT.parent / "shared" / "data"))
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"MiniRocket (aeon MiniRocketClassifier, 10,000 kernels, ridge), seeds {seeds}")
    print(f"{'data set':<15s} {'train':>5s} {'test':>5s} {'length':>7s} {'accuracy':>9s} "
          f"{'(each seed)':<24s} {'issue':>6s} {'s/fit':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (file, issue) in DATA_SETS.items():
            if args.only and name != args.only:
                continue
            source = source_for(data / file, Path(tmp))
            runs = []
            for seed in seeds:
                start = time.perf_counter()
                peer = classify_peer(source, seed=seed)
                runs.append((peer, time.perf_counter() - start))
            accs = [r["accuracy"] for r, _ in runs]
            first = runs[0][0]
            length = f"pad {first['length']}" if first["length"] else "equal"
            each = " ".join(f"{a:.3f}" for a in accs)
            # the first seed's time holds numba's compiling (once per machine): the rest's mean
            took = sum(t for _, t in runs[1:]) / max(1, len(runs) - 1)
            print(f"{name:<15s} {first['fitted_on']:>5d} {first['n']:>5d} {length:>7s} "
                  f"{sum(accs) / len(accs):>9.3f} {each:<24s} {issue:>6.3f} {took:>6.1f}",
                  flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
