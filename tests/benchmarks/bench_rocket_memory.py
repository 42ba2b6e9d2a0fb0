"""MiniRocket's remembered features against computing them every step: `init`'s project for
each set trained both ways (same seed), one after the other on the same device.

    python tests/benchmarks/bench_rocket_memory.py OUT GunPoint ArrowHead OSULeaf JapaneseVowels

Each set's training file is looked up under $RNN_DESIGNER_DATA (ucr/, japanese_vowels/ or the
folder itself). One line a run: wall time, median ms a step, whether the step was captured in
a CUDA graph, best validation loss and test accuracy (no peer).
"""
import os
import sys
import time
from pathlib import Path

from designer.graph import project as P
from designer.graph.layers import rocket as R
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run
from designer.cells import load as load_cells

load_cells()  # the recurrent cells register their layers

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
data = Path(os.environ.get("RNN_DESIGNER_DATA", "../shared/data"))
banked = R.REMEMBER_BYTES
for name in sys.argv[2:]:
    file = next(f for d in ("ucr", "japanese_vowels", ".")
                if (f := data / d / f"{name}_TRAIN.ts").exists())
    path = out / f"{name}.json"
    init_project(str(file), out=str(path))
    for remember in (True, False):
        R.REMEMBER_BYTES = banked if remember else 0
        run = out / f"{name}-{'remembered' if remember else 'computed'}.run"
        t0, notes, ms, best = time.perf_counter(), [], [], None
        for rec in train(P.load(path), RunOptions(out=str(run), seed=1, probe_steps=0)):
            if rec["kind"] == "note":
                notes.append(rec["message"])
            if rec["kind"] == "error":
                print("ERROR", rec, flush=True)
            if rec.get("ms_per_step"):
                ms.append(rec["ms_per_step"])
            if rec["kind"] == "val":
                best = rec["best_val_loss"]
        took = time.perf_counter() - t0
        acc = evaluate_run(str(run), peer=False)["accuracy"]
        graph = [n for n in notes if "CUDA graph" in n]
        median = sorted(ms)[len(ms) // 2] if ms else float("nan")
        print(f"ROCKET | {name} | {'remembered' if remember else 'computed'} | {took:.1f} s | "
              f"ms a step (median) {median:.2f} | best val {best} | accuracy {acc:.3f} | "
              f"{graph[0] if graph else 'no CUDA graph note'}", flush=True)
