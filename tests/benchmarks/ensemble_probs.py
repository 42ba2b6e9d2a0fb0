"""Score ensembles from the test probabilities ``init_sweep.py --probs`` writes.

    python tests/benchmarks/ensemble_probs.py PROBS.jsonl[.gz] [...] --designs r128,rraw \
        [--seeds 1,2,3] [--peer GunPoint=0.993,...]

For each data set: each design's runs alone (one accuracy a seed), each design's seeds as one
ensemble, and all the named designs' runs as one ensemble (their class probabilities averaged,
as ``rnn-designer evaluate RUN1 RUN2 ...`` does), then the mean over the sets.
"""
from __future__ import annotations

import argparse
import gzip
import json

import numpy as np


def read(paths: list[str]) -> dict:
    runs = {}
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                runs[(r["set"], r["design"], int(r["seed"]))] = (np.array(r["truth"]),
                                                                np.array(r["probs"]))
    return runs


def accuracy(runs: dict, keys: list) -> float | None:
    keys = [k for k in keys if k in runs]
    if not keys:
        return None
    truth = runs[keys[0]][0]
    mean = np.mean([runs[k][1] for k in keys], axis=0)
    return float((mean.argmax(1) == truth).mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("probs", nargs="+")
    ap.add_argument("--designs", required=True)
    ap.add_argument("--seeds", default=None)
    ap.add_argument("--peer", default="", help="SET=accuracy,... printed beside each set")
    args = ap.parse_args()
    runs = read(args.probs)
    designs = args.designs.split(",")
    seeds = sorted({k[2] for k in runs}) if args.seeds is None else \
        [int(s) for s in args.seeds.split(",")]
    peer = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in args.peer.split(",") if kv}
    every = []
    for name in sorted({k[0] for k in runs}):
        cells = []
        for d in designs:
            alone = [accuracy(runs, [(name, d, s)]) for s in seeds if (name, d, s) in runs]
            ens = accuracy(runs, [(name, d, s) for s in seeds])
            if ens is not None:
                cells.append(f"{d}: {' '.join(f'{a:.3f}' for a in alone)} -> {ens:.3f}")
        both = accuracy(runs, [(name, d, s) for d in designs for s in seeds])
        if both is None:
            continue
        every.append(both)
        n = sum((name, d, s) in runs for d in designs for s in seeds)
        print(f"{name:15s} | {' | '.join(cells)} | all {n}: {both:.3f}"
              + (f" | peer {peer[name]:.3f}" if name in peer else ""))
    print(f"mean of the all-run ensembles over {len(every)} sets: {np.mean(every):.4f}"
          + (f" (peer {np.mean(list(peer.values())):.4f})" if peer else ""))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
