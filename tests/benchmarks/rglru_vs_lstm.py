"""The RG-LRU on its SCAN engine against a cuDNN LSTM of the same parameter count: the time of
a forward and backward pass at T=1024, as ratios, in one run.

    python tests/benchmarks/rglru_vs_lstm.py                        # T=1024, N=32, E=H=512
    python tests/benchmarks/rglru_vs_lstm.py --device cpu --small   # a quick run on the CPU

Each layer reads a (T, N, E) sequence of E = H inputs (the paper's RG-LRU maps a D_rnn-wide
input to the same width) and the loss is the sum of its outputs times a fixed random weight; a
pass is the forward and the backward (the gradients of the input and every weight), eager, fp32
(TF32 off), timed with CUDA events over ``--iters`` passes after ``--warmup``. The LSTM is
``torch.nn.LSTM`` (cuDNN on a GPU) with the number of units whose parameter count, 4H(E + H) +
8H, comes closest to the RG-LRU's 3H x E + 4H (256 units against an RG-LRU of 512: 788,480
parameters each). The RG-LRU runs as its SCAN engine does (chunks of 16 steps side by side,
then the chunks chained); rows with other chunk lengths show what the chunk costs.

Result, on one NVIDIA H200 (torch 2.11.0+cu130), ``python3 tests/benchmarks/rglru_vs_lstm.py``
(median ms of 20 passes after 5; a second run, ``--json``, gave 47.3 and 11.5 ms fwd+bwd,
4.10x, and 7.6x forward):

    NVIDIA H200, torch 2.11.0+cu130, fp32, T=1024, N=32, E=512; median of 20 after 5
    LSTM (torch.nn.LSTM) 256 units, 788,480 parameters; RG-LRU (SCAN) 512 units, 788,480 parameters
                            fwd+bwd ms  LSTM/RG-LRU   fwd ms  LSTM/RG-LRU
    LSTM (cuDNN)                 47.86                 20.97
    RG-LRU, chunks of 16         12.00        3.99x     2.13        9.82x
    RG-LRU, chunks of 32         10.56        4.53x     2.10        9.99x
    RG-LRU, chunks of 64         12.02        3.98x     2.18        9.61x

The RG-LRU's SCAN engine (chunks of 16) runs a forward and backward pass four times as fast as
the cuDNN LSTM of its size at T=1024, and a forward pass some eight to ten times as fast: the
LSTM's T steps run one after another, the scan's 16 + T/16.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from bench_min_rnn import count, lstm_units  # the LSTM of the same size, as there
from designer.cells.rglru.engines.scan import ScanRGLRU


def time_pass(layer, x, weight, iters: int, warmup: int, backward: bool = True) -> float:
    """Median ms of one forward (and backward) pass of ``layer`` over ``x``."""
    def run():
        y = layer(x)[0]
        if backward:
            (y * weight).sum().backward()
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iters):
        if x.is_cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench(device, steps: int, batch: int, hidden: int, iters: int, warmup: int,
          chunks: list[int]) -> dict:
    torch.manual_seed(0)
    rglru = ScanRGLRU(hidden, hidden)
    rglru.reset_parameters("uniform", 0.0)
    units = lstm_units(count(rglru), hidden)
    lstm = torch.nn.LSTM(hidden, units)
    rglru, lstm = rglru.to(device), lstm.to(device)
    x = torch.randn(steps, batch, hidden, device=device, requires_grad=True)
    out = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU",
           "torch": torch.__version__, "T": steps, "N": batch, "E": hidden,
           "rglru_units": hidden, "rglru_params": count(rglru), "lstm_units": units,
           "lstm_params": count(lstm)}
    w_lstm = torch.randn(steps, batch, units, device=device)
    w_rglru = torch.randn(steps, batch, hidden, device=device)
    for backward, what in ((True, "fwd_bwd"), (False, "fwd")):
        with torch.set_grad_enabled(backward):
            out[f"lstm_ms_{what}"] = round(time_pass(lstm, x, w_lstm, iters, warmup, backward), 3)
            for chunk in chunks:
                rglru.chunk = chunk
                ms = time_pass(rglru, x, w_rglru, iters, warmup, backward)
                out[f"rglru_ms_{what}_chunk{chunk}"] = round(ms, 3)
                out[f"lstm_over_rglru_{what}_chunk{chunk}"] = round(out[f"lstm_ms_{what}"] / ms, 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=512, help="the RG-LRU's units, E = H")
    ap.add_argument("--iters", type=int, default=20, help="timed passes")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--chunks", type=int, nargs="+", default=[16, 32, 64],
                    help="the scan's chunk lengths to time (16: the SCAN engine's)")
    ap.add_argument("--small", action="store_true",
                    help="T=64, N=4, H=32, at most 3 timed passes: a check that it runs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.small:
        args.steps, args.batch, args.hidden = 64, 4, 32
        args.iters, args.warmup = min(args.iters, 3), min(args.warmup, 1)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    r = bench(device, args.steps, args.batch, args.hidden, args.iters, args.warmup, args.chunks)
    if args.json:
        print(json.dumps(r, indent=1))
        return
    print(f"{r['device']}, torch {r['torch']}, fp32, T={r['T']}, N={r['N']}, E={r['E']}; "
          f"median of {args.iters} after {args.warmup}")
    print(f"LSTM (torch.nn.LSTM) {r['lstm_units']} units, {r['lstm_params']:,} parameters; "
          f"RG-LRU (SCAN) {r['rglru_units']} units, {r['rglru_params']:,} parameters")
    print(f"{'':22s} {'fwd+bwd ms':>11s} {'LSTM/RG-LRU':>12s} {'fwd ms':>8s} {'LSTM/RG-LRU':>12s}")
    lstm = "LSTM (cuDNN)" if device.type == "cuda" else "LSTM (torch.nn)"
    print(f"{lstm:22s} {r['lstm_ms_fwd_bwd']:11.2f} {'':12s} {r['lstm_ms_fwd']:8.2f}")
    for c in args.chunks:
        print(f"{f'RG-LRU, chunks of {c}':22s} {r[f'rglru_ms_fwd_bwd_chunk{c}']:11.2f} "
              f"{r[f'lstm_over_rglru_fwd_bwd_chunk{c}']:11.2f}x "
              f"{r[f'rglru_ms_fwd_chunk{c}']:8.2f} {r[f'lstm_over_rglru_fwd_chunk{c}']:11.2f}x")


if __name__ == "__main__":
    main()
