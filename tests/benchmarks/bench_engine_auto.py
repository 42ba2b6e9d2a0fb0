"""The AUTO engine against the engines it picks from, on a CUDA machine: is AUTO ever more than
2% slower than the best engine?

python tests/benchmarks/bench_engine_auto.py [--configs 2x512:16,2x512:64,2x512:256,3x1024:64]
    [--precisions fp32,bf16] [--rounds 3] [--steps 30] [--warmup 5] [--seq 100]
    [--keep-cache] [--json FILE] [--device cuda|cpu]

Each row is the Char-RNN bench config (tests/benchmarks/char-rnn-bench.json: embedding, an LSTM
of LEVELS x HIDDEN, the classifier, Adam; T=100) at batch N, the whole training step captured in
a CUDA graph, as ``rnn-designer bench`` times it (fp32 with TF32 off, or bf16 autocast). In one
process, for ``--rounds`` rounds, the net is built and timed on CUDNN, on PERSIST and on AUTO in
turn (``--steps`` timed steps after ``--warmup``); each engine's time is the median of its
rounds. AUTO's first build times the engines (its first step says so: ``1st step s``), later
rounds read the choice it kept; the user's cache is left alone (a fresh folder, unless
``--keep-cache``).

Prints one table: per row cuDNN's and PERSIST's ms (PERSIST's speed against cuDNN), AUTO's choice
and ms, and AUTO's time over the best engine's (target <= 1.02). Exit status: 0 every row met the
target, 2 a row missed it, 1 an error (no GPU, a row that failed; the table shows which).
``--device cpu`` checks the script itself on small sizes (AUTO is cuDNN there, untimed).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TARGET = 1.02
ENGINES = ("cudnn", "persist", "auto")


def project(levels: int, hidden: int, batch: int, seq: int):
    """The bench config with an LSTM of ``levels`` x ``hidden`` at batch ``batch``."""
    from designer.graph import project as P
    data = json.loads((ROOT / "tests" / "benchmarks" / "char-rnn-bench.json").read_text())
    for layer in data["graph"]["layers"]:
        if layer["name"] == "lstm1":
            layer["params"].update(num_layers=levels, num_output=hidden)
        elif layer["name"] == "embed":
            layer["params"]["num_output"] = hidden
        elif layer["name"] == "data":
            layer["params"].update(batch_size=batch, seq_len=seq)
    proj = P.from_dict(data, file=ROOT / "tests" / "benchmarks" / "char-rnn-bench.json")
    errors = proj.graph.errors()
    if errors:
        raise ValueError(f"the bench config does not validate: {errors[0]}")
    return proj.graph


def chosen(sentences: list[str]) -> str:
    """``PERSIST`` from ``lstm1: AUTO chose PERSIST (...)``; ``?`` when AUTO said nothing."""
    found = {m.group(1) for s in sentences for m in [re.search(r"AUTO chose (\w+)", s)] if m}
    return "/".join(sorted(found)) or "?"


def run_row(levels, hidden, batch, precision, args, device) -> dict:
    from designer.engines.measure.bench import bench_engine
    graph = project(levels, hidden, batch, args.seq)
    times = {e: [] for e in ENGINES}
    row = {"config": f"LSTM {levels}x{hidden} N={batch} {precision}", "auto_said": []}
    for r in range(args.rounds):
        for engine in ENGINES:
            res = bench_engine(graph, engine, device, args.steps, args.warmup, True, precision)
            times[engine].append(res["ms_step"])
            if engine == "auto":
                row["auto_said"] = res.get("auto", row["auto_said"])
                if r == 0:
                    row["auto_first_step_s"] = res["first_step_ms"] / 1e3
            if engine == "persist":
                row["persist_kernels"] = res.get("kernels", "")
    ms = {e: statistics.median(v) for e, v in times.items()}
    best = min(ms["cudnn"], ms["persist"])
    row.update(ms=ms, samples=times, auto_choice=chosen(row["auto_said"]),
               persist_speed=ms["cudnn"] / ms["persist"], auto_over_best=ms["auto"] / best)
    row["met"] = row["auto_over_best"] <= TARGET
    return row


def table(rows: list[dict]) -> str:
    head = (f"{'config':<24} {'cuDNN ms':>9} {'PERSIST ms':>11} {'PERSIST speed':>14} "
            f"{'AUTO chose':>11} {'AUTO ms':>8} {'AUTO / best':>12} {'1st step s':>11}  target")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['config']:<24} error: {r['error']}")
            continue
        ms = r["ms"]
        lines.append(
            f"{r['config']:<24} {ms['cudnn']:9.2f} {ms['persist']:11.2f} "
            f"{r['persist_speed']:13.2f}x {r['auto_choice']:>11} {ms['auto']:8.2f} "
            f"{r['auto_over_best']:11.3f}x {r['auto_first_step_s']:11.1f}  "
            f"{'met' if r['met'] else 'MISSED'} (<= {TARGET:.2f}x)")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="2x512:16,2x512:64,2x512:256,3x1024:64",
                    help="LEVELSxHIDDEN:BATCH, comma-separated")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seq", type=int, default=100)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use the user's AUTO cache (default: a fresh folder, so AUTO times)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON lines")
    args = ap.parse_args()
    if not args.keep_cache:
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="auto-cache-")
    import warnings

    import torch
    warnings.simplefilter("ignore")
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_engine_auto: no CUDA GPU is available (use --device cpu to check the "
              "script)", file=sys.stderr)
        return 1
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"AUTO against cuDNN and PERSIST on {name}, torch {torch.__version__}; whole training "
          f"step, T={args.seq}, median of {args.rounds} rounds of {args.steps} steps")
    rows = []
    for precision in [p.strip() for p in args.precisions.split(",") if p.strip()]:
        for cfg in [c.strip() for c in args.configs.split(",") if c.strip()]:
            size, batch = cfg.split(":")
            levels, hidden = (int(v) for v in size.split("x"))
            label = f"LSTM {levels}x{hidden} N={batch} {precision}"
            try:
                row = run_row(levels, hidden, int(batch), precision, args, device)
            except Exception as e:  # noqa: BLE001 - the row says it failed; the rest run on
                traceback.print_exc()
                row = {"config": label, "error": (str(e).splitlines() or [repr(e)])[0][:100]}
            rows.append(row)
            print(f"  {label}: " + ("; ".join(row.get("auto_said", [])) or row.get("error", "")),
                  flush=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    if any("error" in r for r in rows):
        return 1
    return 0 if all(r["met"] for r in rows) else 2


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    sys.exit(main())
