"""The sequence examples' targets: train each with its project's defaults on the CPU, score the
best checkpoint on the test split, and print the figures (and the wall time of training).

    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_sequences.py [--seeds 1,2,3]
        [--threads N] [--only japanese-vowels|co2-forecast] [--engine cudnn|caffe]
        [--device cpu|cuda]

Targets: Japanese Vowels test accuracy >= 0.97 over its 370 test utterances; CO2 test RMSE below
the seasonal-naive baseline's (the same week a year before).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("japanese-vowels", "co2-forecast")


def cli(*args: str, env: dict) -> str:
    out = subprocess.run([sys.executable, "-m", "designer", *args], capture_output=True,
                         text=True, env=env, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="1")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--only", choices=EXAMPLES)
    p.add_argument("--engine", choices=("cudnn", "caffe"))
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = p.parse_args()
    env = dict(os.environ)
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in [args.only] if args.only else EXAMPLES:
            for seed in args.seeds.split(","):
                run = Path(tmp) / f"{name}-{seed}"
                extra = ["--engine", args.engine] if args.engine else []
                t0 = time.perf_counter()
                cli("train", f"projects/{name}.json", "--device", args.device, "--seed", seed,
                    "--out", str(run), "--quiet", *extra, env=env)
                seconds = time.perf_counter() - t0
                report = json.loads(cli("evaluate", str(run), "--json", env=env))
                row = {"project": name, "seed": int(seed), "device": args.device,
                       "engine": args.engine or "as drawn", "train_s": round(seconds, 1),
                       "n": report["n"]}
                if report["task"] == "classify":
                    row["accuracy"] = round(report["accuracy"], 4)
                    row["target_met"] = report["accuracy"] >= 0.97 and report["n"] >= 370
                else:
                    base = {b["name"]: b["rmse"] for b in report["baselines"]}
                    row.update(rmse=round(report["rmse"], 4), mae=round(report["mae"], 4),
                               seasonal_naive_rmse=round(base["seasonal_naive"], 4),
                               persistence_rmse=round(base["persistence"], 4),
                               ratio=round(report["rmse"] / base["seasonal_naive"], 3),
                               target_met=report["rmse"] < report["baseline"]["rmse"])
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"{sum(r['target_met'] for r in rows)} of {len(rows)} runs meet their target")


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
