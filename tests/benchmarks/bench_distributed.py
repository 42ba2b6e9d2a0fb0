"""Data-parallel training on the GPUs of one machine, measured in one run (tests/benchmarks/
gpu_distributed.sh starts it, with the machine's NCCL settings):

1. tokens/s of the Char-RNN bench config (2 x 512, T=100, N=64 per GPU) on 1 GPU and on 2
   (and on all of them, when there are more), for both engines, steps captured in a CUDA
   graph; the cuDNN engine also eagerly (no graph), as a check of DDP without capture;
2. the loss curve over tokens seen of 2 GPUs x 64 against 1 GPU x 128 (the same global batch:
   the very same windows, since each rank takes its rows of one global batch);
3. a 2-GPU run resumed on 1 GPU, then on 2 again.

Prints a table and writes OUT/distributed.json. Every run is ``rnn-designer train`` as a user
would type it; the figures come from the runs' metrics.jsonl.

    python tests/benchmarks/bench_distributed.py --out OUT [--steps 600] [--curve-steps 1500]

(``--device cpu --project SMALL.json`` runs the same on the CPU with gloo, to try the script.)
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "benchmarks" / "char-rnn-bench.json"
WARMUP = 0.17  # the first sixth of a run's records hold the capture and Triton's compiles
DEVICE = "cuda"


def project(out: Path, name: str, batch: int, training: dict) -> Path:
    """The bench config with another batch size and training settings, saved in ``out``."""
    p = json.loads(BENCH.read_text())
    for layer in p["graph"]["layers"]:
        if layer["type"] == "CharText":
            layer["params"]["batch_size"] = batch
            layer["params"]["corpus"] = str(_corpus(layer["params"]["corpus"]))
    p["training"] = {"device": DEVICE, **training}
    path = out / f"{name}.json"
    path.write_text(json.dumps(p, indent=1))
    return path


def _corpus(name: str) -> Path:
    """A corpus named in the bench config, found as the trainer finds it."""
    from designer.training.data.locate import locate
    return locate(name, BENCH.parent, None, "corpus")


def train(path: Path, run: Path, steps: int, nproc: int = 1, engine: str | None = None,
          resume: bool = False) -> dict:
    cmd = [sys.executable, "-m", "designer", "train", str(path), "--steps", str(steps),
           "--device", DEVICE, "--seed", "1", "--quiet"]
    cmd += ["--resume", str(run)] if resume else ["--out", str(run)]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    if engine:
        cmd += ["--engine", engine]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=400, cwd=ROOT)
    wall = time.perf_counter() - t0
    notes = [line for line in done.stdout.splitlines() if line.startswith("note:")]
    if done.returncode != 0:
        print(f"  !! {' '.join(cmd[3:])} exited {done.returncode}: "
              f"{done.stderr.strip().splitlines()[-1:] or ''}", flush=True)
    return {"code": done.returncode, "wall_s": round(wall, 1), "notes": notes,
            "stderr": done.stderr[-2000:] if done.returncode else ""}


def records(run: Path, kind: str = "train") -> list[dict]:
    try:
        lines = (run / "metrics.jsonl").read_text().splitlines()
    except OSError:
        return []
    return [r for r in map(json.loads, lines) if r.get("kind") == kind]


def rate(run: Path) -> dict:
    recs = records(run)
    recs = [r for r in recs if recs and r["step"] > WARMUP * recs[-1]["step"]]
    if not recs:
        return {}
    return {"tokens_per_s": statistics.median(r["tokens_per_s"] for r in recs),
            "ms_per_step": statistics.median(r["ms_per_step"] for r in recs),
            "world_size": recs[-1].get("world_size")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=600, help="steps of each throughput run")
    ap.add_argument("--curve-steps", type=int, default=1500)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--project", type=Path, help="another project than the bench config")
    args = ap.parse_args()
    global BENCH, DEVICE
    BENCH, DEVICE = (args.project or BENCH).resolve(), args.device
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch
    gpus = torch.cuda.device_count() if DEVICE == "cuda" else 2
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if DEVICE == "cuda" else "-"
    name = torch.cuda.get_device_name(0) if DEVICE == "cuda" and gpus else "CPU"
    print(f"torch {torch.__version__}, NCCL {nccl}, {gpus} x {name}", flush=True)
    if gpus < 2:
        print("this benchmark needs at least 2 GPUs")
        return 2
    quiet = {"log_interval": 20, "eval_interval": 10**6, "checkpoint_interval": 10**6,
             "sample_interval": 0, "eval_batches": 5}
    tput = project(out, "tput", 64, quiet)
    eager = project(out, "tput-eager", 64, {**quiet, "cuda_graphs": False})
    counts = [1, 2] + ([gpus] if gpus > 2 else [])
    result = {"gpus": gpus, "device": name, "torch": torch.__version__,
              "nccl": nccl, "throughput": [], "curve": {}, "resume": []}

    print("\n== tokens/s: Char-RNN bench config, N=64 per GPU, T=100", flush=True)
    for engine, path, label in (("cudnn", tput, "cuDNN"), ("caffe", tput, "unrolled"),
                                ("cudnn", eager, "cuDNN eager")):
        base = None
        for n in counts if path is tput else [1, 2]:
            run = out / f"tput-{label.replace(' ', '-')}-{n}"
            info = train(path, run, args.steps, n, engine)
            r = rate(run)
            base = base or r.get("tokens_per_s")
            row = {"engine": label, "gpus": n, **r, **info,
                   "speedup": round(r["tokens_per_s"] / base, 3) if r and base else None}
            result["throughput"].append(row)
            graph = next((x for x in info["notes"] if "CUDA graph" in x), "")
            print(f"  {label:12s} {n} GPU: {r.get('tokens_per_s', 0):>11,.0f} tokens/s  "
                  f"{r.get('ms_per_step', 0):6.2f} ms/step  x{row['speedup'] or 0:.3f}  "
                  f"({info['wall_s']} s) {graph}", flush=True)

    print(f"\n== loss over tokens seen: 2 GPUs x 64 against 1 GPU x 128, "
          f"{args.curve_steps} steps (cuDNN)", flush=True)
    curve = {"log_interval": 10, "eval_interval": 250, "eval_batches": 20,
             "checkpoint_interval": 10**6, "sample_interval": 0}
    one, two = out / "curve-1x128", out / "curve-2x64"
    for path, run, n in ((project(out, "curve-128", 128, curve), one, 1),
                         (project(out, "curve-64", 64, curve), two, 2)):
        info = train(path, run, args.curve_steps, n, "cudnn")
        result["curve"][run.name] = {**info, **rate(run)}
    a, b = records(one), records(two)
    pairs = [(x, y) for x, y in zip(a, b) if x["step"] == y["step"]]
    diffs = [abs(x["loss"] - y["loss"]) for x, y in pairs]
    seq = next(la["params"].get("seq_len", 75) for la in json.loads(BENCH.read_text())
               ["graph"]["layers"] if la["type"] == "CharText")
    tokens = 128 * seq  # per step, both runs
    if diffs:
        result["curve"].update(
            mean_abs_diff=statistics.fmean(diffs), max_abs_diff=max(diffs),
            final=[pairs[-1][0]["loss"], pairs[-1][1]["loss"]],
            val=[(x["step"], x["val_loss"], y["val_loss"])
                 for x, y in zip(records(one, "val"), records(two, "val"))])
        print(f"  train loss, {len(pairs)} points to {pairs[-1][0]['step'] * tokens:,} tokens: "
              f"mean |diff| {result['curve']['mean_abs_diff']:.4f}, max |diff| "
              f"{result['curve']['max_abs_diff']:.4f} nats", flush=True)
        for step, x, y in result["curve"]["val"]:
            print(f"  val at {step * tokens:>11,} tokens (step {step}): 1 GPU {x:.4f}, "
                  f"2 GPUs {y:.4f}  (diff {y - x:+.4f})", flush=True)
        speed = [result["curve"][name].get("ms_per_step", 0) for name in (one.name, two.name)]
        print(f"  step time: 1 GPU x 128 {speed[0]:.2f} ms, 2 GPUs x 64 {speed[1]:.2f} ms",
              flush=True)

    print("\n== resume: the 2-GPU run on 1 GPU, then on 2 again", flush=True)
    path = out / "curve-64.json"
    for n, steps in ((1, args.curve_steps + 100), (2, args.curve_steps + 200)):
        info = train(path, two, steps, n, "cudnn", resume=True)
        recs = records(two)
        worlds = sorted({r.get("world_size") for r in recs if r["step"] > steps - 100})
        result["resume"].append({"gpus": n, "to_step": steps, "code": info["code"],
                                 "world_sizes": worlds, "notes": info["notes"]})
        print(f"  on {n} GPU(s) to step {steps}: exit {info['code']}, world_size {worlds}, "
              f"last loss {recs[-1]['loss'] if recs else float('nan'):.4f}", flush=True)
        for note in info["notes"]:
            print(f"    {note}")
    (out / "distributed.json").write_text(json.dumps(result, indent=1))
    print(f"\nfigures in {out / 'distributed.json'}")
    return 0


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    sys.exit(main())
