"""MinGRU and MinLSTM on the parallel scan against a cuDNN LSTM of the same parameter count: the
time of a training step.

    python tests/benchmarks/bench_min_rnn.py                  # T=1024 and 256, N=32, H=512
    python tests/benchmarks/bench_min_rnn.py --method linear  # the chunks step by step
    python tests/benchmarks/bench_min_rnn.py --device cpu --small   # a quick run on the CPU

Each layer reads a (T, N, E) sequence of E = H inputs; a linear head maps its output back to E
and the loss is the mean squared error against a fixed random target; a step is the forward
pass, the backward pass and an Adam update (eager, no CUDA graph), in fp32 (TF32 off on CUDA).
The LSTM (torch.nn.LSTM: cuDNN on a GPU, oneDNN on the CPU) gets the number of units that
gives it the parameter count closest to the minimal layer's: the minimal layers have no
recurrent matrix, so an LSTM of as many parameters has fewer units (187 against a MinGRU 512,
256 against a MinLSTM 512). Printed per T: each layer's units, parameters, ms per step, and how
many times longer the LSTM's step takes than the minimal layer's. ``--method`` picks how the
scan runs its chunks: ``log`` (Heinsen's log-cumsum-exp, the default on a GPU) or ``linear``
(each chunk's steps in turn, the default on the CPU).
"""
from __future__ import annotations

import argparse
import json
import math
import time

import torch
import torch.nn.functional as F

from designer.cells.minimal.engines.scan import ScanRecurrent
from designer.cells.classic.engines.cudnn import CudnnRecurrent


def count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def lstm_units(params: int, inputs: int) -> int:
    """The LSTM width whose parameters, 4H(E + H) + 8H (torch keeps two biases), come
    closest to ``params``."""
    b = inputs + 2  # 4H^2 + 4(E + 2)H - params = 0
    h = (-b + math.sqrt(b * b + params)) / 2
    return min((max(1, math.floor(h)), math.ceil(h)),
               key=lambda u: abs(4 * u * (inputs + u) + 8 * u - params))


def time_layer(layer, steps: int, batch: int, inputs: int, device, iters: int,
               warmup: int) -> float:
    """ms per training step of ``layer`` (forward, backward, Adam) on a fixed batch."""
    torch.manual_seed(0)
    hidden = layer.hidden
    head = torch.nn.Linear(hidden, inputs)
    layer, head = layer.to(device), head.to(device)
    opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
    x = torch.randn(steps, batch, inputs, device=device)
    target = torch.randn(steps, batch, inputs, device=device)

    def step():
        y, _ = layer(x)
        loss = F.mse_loss(head(y), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        loss = step()
    loss.item()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1000 / iters


def bench(device, lengths: list[int], batch: int, hidden: int, iters: int,
          warmup: int, method: str | None = None) -> list[dict]:
    rows = []
    for steps in lengths:
        for kind in ("MinGRU", "MinLSTM"):
            fused = ScanRecurrent(kind, hidden, hidden)
            fused.reset_parameters("uniform", 0.0)
            fused.method = method
            units = lstm_units(count(fused), hidden)
            lstm = CudnnRecurrent("LSTM", hidden, units, 1, 0.0, False)
            ms_min = time_layer(fused, steps, batch, hidden, device, iters, warmup)
            ms_lstm = time_layer(lstm, steps, batch, hidden, device, iters, warmup)
            rows.append({"T": steps, "N": batch, "kind": kind, "units": hidden,
                         "params": count(fused), "ms_step": round(ms_min, 3),
                         "lstm_units": units, "lstm_params": count(lstm),
                         "lstm_ms_step": round(ms_lstm, 3),
                         "lstm_over_min": round(ms_lstm / ms_min, 3)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, nargs="+", default=[1024, 256], help="sequence lengths")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--iters", type=int, default=20, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--small", action="store_true",
                    help="T=64 and 16, N=4, H=32, at most 3 timed steps: a check that it runs")
    ap.add_argument("--method", choices=("log", "linear"),
                    help="how the scan runs its chunks (default: log on a GPU, linear on the CPU)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.small:
        args.steps, args.batch, args.hidden = [64, 16], 4, 32
        args.iters, args.warmup = min(args.iters, 3), min(args.warmup, 1)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    rows = bench(device, args.steps, args.batch, args.hidden, args.iters, args.warmup,
                 args.method)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    method = args.method or ("linear" if device.type == "cpu" else "log")
    print(f"{name}, torch {torch.__version__}, fp32, N={args.batch}, E=H={args.hidden}, "
          f"scan {method}, {args.iters} timed steps after {args.warmup}")
    print(f"{'T':>5s} {'layer':<8s} {'units':>5s} {'params':>9s} {'ms/step':>9s}   "
          f"{'LSTM units':>10s} {'params':>9s} {'ms/step':>9s} {'LSTM/min':>9s}")
    for r in rows:
        print(f"{r['T']:5d} {r['kind']:<8s} {r['units']:5d} {r['params']:9,d} "
              f"{r['ms_step']:9.2f}   {r['lstm_units']:10d} {r['lstm_params']:9,d} "
              f"{r['lstm_ms_step']:9.2f} {r['lstm_over_min']:8.2f}x")


if __name__ == "__main__":
    main()
