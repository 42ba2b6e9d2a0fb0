"""The mLSTM on its chunkwise-parallel engine against a cuDNN LSTM of the same parameter count:
the time of a training step; and its memory estimate against the allocator's peak.

    python tests/benchmarks/bench_mlstm.py                 # T=1024 and 256, N=32, H=512, 4 heads
    python tests/benchmarks/bench_mlstm.py --device cpu --small   # a quick run on the CPU

Speed (as ``bench_min_rnn.py`` measures MinGRU and MinLSTM): each layer reads a (T, N, E)
sequence of E = H inputs; a linear head maps its output back to E and the loss is the mean
squared error against a fixed random target; a step is the forward pass, the backward pass and
an Adam update (eager, no CUDA graph), in fp32 (TF32 off on CUDA). The LSTM (torch.nn.LSTM:
cuDNN on a GPU) gets the number of units whose parameter count is closest to the mLSTM's
(about 290 units against an mLSTM of 512). The unrolled engine (CAFFE) is timed too, at
T=256 and below (``--unrolled``), to show what the chunkwise form saves.

Memory (CUDA only): a net data -> Embed -> mLSTM -> InnerProduct -> SoftmaxWithLoss trains a
few steps through ``designer.engines.measure.bench.bench_engine`` (the training step the app runs, no
CUDA graph) on each engine; ``torch.cuda.max_memory_allocated`` is compared with the
designer's estimate for that net and engine (``designer.graph.memory.estimate``). The target is
within +-25%. Each configuration runs in a fresh process (``--memory-one``), so nothing an
earlier one left allocated (the speed part's layers, an earlier length's graph) is in its
peak.

Prints one table per part and exits non-zero when a step fails or a memory estimate misses its
target by more than 25% (``--json``: the rows instead).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.nets, run as a script
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_min_rnn import count, lstm_units, time_layer  # noqa: E402

from designer.engines.measure.bench import bench_engine  # noqa: E402
from designer.cells.mlstm.engines.chunk import ChunkMLSTM, UnrolledMLSTM  # noqa: E402
from designer.cells.classic.engines.cudnn import CudnnRecurrent  # noqa: E402
from designer.graph import Graph  # noqa: E402
from designer.graph.memory import Setup, estimate  # noqa: E402
from tests.nets import link_all  # noqa: E402

VOCAB = 65


def speed(device, lengths, batch, hidden, heads, iters, warmup, unrolled_upto) -> list[dict]:
    rows = []
    for steps in lengths:
        fused = ChunkMLSTM(hidden, hidden, heads)
        fused.reset_parameters("uniform", 0.0)
        units = lstm_units(count(fused), hidden)
        lstm = CudnnRecurrent("LSTM", hidden, units, 1, 0.0, False)
        ms = time_layer(fused, steps, batch, hidden, device, iters, warmup)
        ms_lstm = time_layer(lstm, steps, batch, hidden, device, iters, warmup)
        row = {"T": steps, "N": batch, "units": hidden, "heads": heads,
               "params": count(fused), "ms_step": round(ms, 3), "lstm_units": units,
               "lstm_params": count(lstm), "lstm_ms_step": round(ms_lstm, 3),
               "lstm_over_mlstm": round(ms_lstm / ms, 3), "unrolled_ms_step": None}
        if steps <= unrolled_upto:
            slow = UnrolledMLSTM(hidden, hidden, heads)
            slow.load_state_dict(fused.state_dict())
            row["unrolled_ms_step"] = round(
                time_layer(slow, steps, batch, hidden, device, max(1, iters // 4), 1), 3)
        rows.append(row)
    return rows


def net(steps: int, batch: int, hidden: int, heads: int) -> Graph:
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": steps,
                                     "batch_size": batch})
    g.add_layer("Embed", "embed", {"num_output": hidden})
    g.add_layer("mLSTM", "rnn", {"num_output": hidden, "num_heads": heads})
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    g.pin_dims({"V": VOCAB})
    return g


def memory_row(device, steps, batch, hidden, heads, engine) -> dict:
    """One configuration's estimate and allocator peak, measured in this process."""
    g = net(steps, batch, hidden, heads)
    got = bench_engine(g, engine, device, steps=2, warmup=1, graphs=False)
    est = estimate(g, Setup(device.type, engine, cuda_graphs=False))  # as it ran: no graph
    peak = got["peak_mib"]  # None on the CPU, which has no allocator peak to read
    return {"T": steps, "N": batch, "engine": "CHUNK" if engine == "cudnn" else "CAFFE",
            "estimate_mib": round(est.total / 2**20, 1),
            "peak_mib": None if peak is None else round(peak, 1),
            "ratio": None if peak is None else round(est.total / (peak * 2**20), 3)}


def memory(device, lengths, batch, hidden, heads, unrolled_upto) -> list[dict]:
    """:func:`memory_row` per length and engine (cudnn: the mLSTM's CHUNK), each in a fresh
    process."""
    rows = []
    for steps in lengths:
        for engine in ("cudnn", "caffe"):
            if engine == "caffe" and steps > unrolled_upto:
                continue
            cmd = [sys.executable, __file__, "--device", str(device), "--batch", str(batch),
                   "--hidden", str(hidden), "--heads", str(heads),
                   "--memory-one", str(steps), engine]
            root = Path(__file__).resolve().parents[2]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env)
            if done.returncode:
                raise RuntimeError(f"T={steps} {engine}: {done.stderr.strip()[-2000:]}")
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, nargs="+",
                    help="sequence lengths (default 1024 and 256; --small: 64 and 16)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--iters", type=int, default=20, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--unrolled", type=int, default=256,
                    help="time the unrolled engine up to this many steps")
    ap.add_argument("--small", action="store_true",
                    help="T=64 and 16, N=4, H=32 in 2 heads, at most 3 timed steps")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--memory-one", nargs=2, metavar=("T", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_one:  # the child: one memory configuration, one JSON line
        print(json.dumps(memory_row(torch.device(args.device), int(args.memory_one[0]),
                                    args.batch, args.hidden, args.heads, args.memory_one[1])))
        return 0
    if args.small:
        args.steps, args.batch, args.hidden, args.heads = args.steps or [64, 16], 4, 32, 2
        args.iters, args.warmup = min(args.iters, 3), min(args.warmup, 1)
    args.steps = args.steps or [1024, 256]
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    rows = speed(device, args.steps, args.batch, args.hidden, args.heads, args.iters,
                 args.warmup, args.unrolled)
    mem = memory(device, args.steps, args.batch, args.hidden, args.heads, args.unrolled) \
        if device.type == "cuda" else []
    missed = [m for m in mem if abs(m["ratio"] - 1) > 0.25]
    if args.json:
        print(json.dumps({"speed": rows, "memory": mem}, indent=1))
        return 1 if missed else 0
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"{name}, torch {torch.__version__}, fp32, N={args.batch}, E=H={args.hidden}, "
          f"{args.heads} heads, {args.iters} timed steps after {args.warmup}")
    print(f"{'T':>5s} {'units':>5s} {'params':>9s} {'CHUNK ms':>9s} {'CAFFE ms':>9s}   "
          f"{'LSTM units':>10s} {'params':>9s} {'ms/step':>9s} {'LSTM/mLSTM':>10s}")
    for r in rows:
        slow = "-" if r["unrolled_ms_step"] is None else f"{r['unrolled_ms_step']:.2f}"
        print(f"{r['T']:5d} {r['units']:5d} {r['params']:9,d} {r['ms_step']:9.2f} "
              f"{slow:>9s}   {r['lstm_units']:10d} {r['lstm_params']:9,d} "
              f"{r['lstm_ms_step']:9.2f} {r['lstm_over_mlstm']:9.2f}x")
    if mem:
        print("\nmemory: the estimate against torch.cuda.max_memory_allocated (target +-25%)")
        print(f"{'T':>5s} {'engine':<6s} {'estimate MiB':>12s} {'peak MiB':>9s} {'ratio':>6s}")
        for m in mem:
            flag = "" if abs(m["ratio"] - 1) <= 0.25 else "  MISSED"
            print(f"{m['T']:5d} {m['engine']:<6s} {m['estimate_mib']:12.1f} "
                  f"{m['peak_mib']:9.1f} {m['ratio']:6.2f}{flag}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
