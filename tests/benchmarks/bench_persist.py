"""The PERSIST engine's kernels against the cuDNN engine, layer only, on a CUDA machine.

python tests/benchmarks/bench_persist.py [--check] [--barrier] [--time] [--sweep]

``--check``: outputs, final states and every gradient of a PERSIST LSTM against a cuDNN one
with the same weights (fp32 with TF32 off, and bf16 autocast), at the bench size and at sizes off
the kernels' tiles. ``--barrier``: the cost of one grid-wide barrier. ``--time``: forward +
backward, and forward alone, of the layer (T=100) on cuDNN and on each PERSIST kernel (CUDA C++,
Triton), median of 30 after warm-up, CUDA events. ``--sweep``: the Triton kernel's block sizes.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from designer.engines import persist  # noqa: E402
from designer.cells.classic.engines.persist import PersistRecurrent  # noqa: E402
from designer.cells.classic.engines.cudnn import CudnnRecurrent  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def pair(e, h, levels):
    torch.manual_seed(0)
    ref = CudnnRecurrent("LSTM", e, h, levels, 0.0, False).cuda()
    per = PersistRecurrent("LSTM", e, h, levels, 0.0, False).cuda()
    per.load_state_dict(ref.state_dict())
    return ref, per


def step(m, x, w, bf16):
    x.grad = None
    m.zero_grad(set_to_none=True)
    with torch.autocast("cuda", torch.bfloat16, enabled=bf16):
        y, (h, c) = m(x)
        loss = (y.float() * w).sum() + 0.5 * h.float().sum() + 0.1 * c.float().pow(2).sum()
    loss.backward()
    return [y.float(), h.float(), c.float(), x.grad] + [p.grad for p in m.parameters()]


def check():
    from designer.cells.classic.kernels import persist_launch as persist_cuda
    for e, h, levels, t, n in ((512, 512, 2, 100, 64), (512, 512, 2, 50, 16),
                               (300, 200, 2, 30, 5), (64, 1024, 1, 20, 3), (80, 256, 2, 40, 33)):
        ref, per = pair(e, h, levels)
        x = torch.randn(t, n, e, device="cuda", requires_grad=True)
        w = torch.randn(t, n, h, device="cuda")
        for bf16 in (False, True):
            a, b = step(ref, x, w, bf16), step(per, x, w, bf16)
            rel = max(float((u - v).abs().max() / u.abs().max().clamp_min(1e-12))
                      for u, v in zip(a, b))
            print(json.dumps({"check": f"LSTM {levels}x{h} E={e} T={t} N={n}",
                              "precision": "bf16" if bf16 else "fp32", "max_rel": rel,
                              "persistent": per.fallback is None,
                              "kernel": persist.kernel_for(h, n, x.device, bf16),
                              "tensor_cores": bool(bf16 and persist_cuda.plan_for(
                                  h, n, x.device, True)["TC"])}), flush=True)


def timed(m, x, w, bf16, reps=30):
    for _ in range(5):
        step(m, x, w, bf16)
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(m, x, w, bf16)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def time_all():
    """Layer forward + backward and forward alone, cuDNN against PERSIST on each of its
    kernels (CUDA C++ and Triton), in one process; sizes from $PERSIST_TIME (JSON list of
    [levels, hidden, N]) or the Char-RNN bench layer at N = 16, 64, 256."""
    import os
    sizes = json.loads(os.environ.get("PERSIST_TIME", "null")) or \
        [[2, 512, 16], [2, 512, 64], [2, 512, 256]]
    from designer.cells.classic.kernels import persist_launch as persist_cuda
    kinds = os.environ.get("PERSIST_KERNELS", "cuda,triton").split(",")
    # plan overrides for the CUDA kernels, one timing each (e.g. '[{"GBAR": 0}, {}]')
    variants = json.loads(os.environ.get("PERSIST_CUDA_TUNE", "null")) or [{}]
    for levels, h, n in sizes:
        ref, per = pair(512, h, levels)
        x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
        w = torch.randn(100, n, h, device="cuda")
        # $PERSIST_BF16_ONLY=1: the bf16 rows alone
        for bf16 in (True,) if os.environ.get("PERSIST_BF16_ONLY") else (False, True):
            row = {"time": f"LSTM {levels}x{h} T=100 N={n}",
                   "precision": "bf16" if bf16 else "fp32",
                   "cudnn_ms": round(timed(ref, x, w, bf16), 3),
                   "cudnn_fwd_ms": round(forward_only(ref, x, bf16), 3)}
            for kind in kinds:
                for tune in (variants if kind == "cuda" else [{}]):
                    persist.TUNE["kernel"] = kind
                    persist_cuda.TUNE.clear()
                    persist_cuda.TUNE.update(tune)
                    if persist.kernel_for(h, n, x.device, bf16) != kind:
                        continue
                    name = kind + "".join(f"_{k}{v}" for k, v in tune.items())
                    row[f"{name}_ms"] = round(timed(per, x, w, bf16), 3)
                    row[f"{name}_fwd_ms"] = round(forward_only(per, x, bf16), 3)
                    row[f"{name}_x"] = round(row["cudnn_ms"] / row[f"{name}_ms"], 2)
            persist.TUNE.clear()
            persist_cuda.TUNE.clear()
            print(json.dumps(row), flush=True)


def forward_only(m, x, bf16, reps=20):
    with torch.no_grad(), torch.autocast("cuda", torch.bfloat16, enabled=bf16):
        for _ in range(3):
            m(x)
        times = []
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            m(x)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
    return statistics.median(times)


def barrier_cost():
    """Microseconds per barrier (1,000 in one launch, nothing else), for the Triton kernels'
    grid-wide barrier and the CUDA kernels' (the grid of the bench layer at N = 64: 128 blocks
    of 512 threads, 4 batch blocks of 32; one counter for the whole grid, or one per batch
    block), and a grid of 32."""
    from designer.cells.classic.kernels import persist_launch as persist_cuda
    from designer.cells.classic.kernels import persist_triton as k
    dev = torch.device("cuda")
    runs = [("triton", (32, 1), lambda bar, g: k._barriers_only[g](bar, 1000)),
            ("triton", (128, 1), lambda bar, g: k._barriers_only[g](bar, 1000))]
    for group in (False, True):
        cfg = persist_cuda.plan(512, 64, *persist_cuda._device_limits(dev)[:2],
                                group_barriers=group)
        cuda_bar = persist_cuda.kernels(cfg, 512, dev)[2]
        for grid in ((32, 1), (32, 4)):
            runs.append(("cuda group" if group else "cuda grid", grid,
                         lambda bar, g, f=cuda_bar: f(grid=(*g, 1),
                                                      block=(persist_cuda.THREADS, 1, 1),
                                                      args=[bar, 1000])))
    for kind, grid, launch in runs:
        bar = torch.zeros(32 * grid[1], device="cuda", dtype=torch.int32)
        launch(bar, grid)
        times = []
        for _ in range(10):
            bar.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            launch(bar, grid)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
        print(json.dumps({"kernel": kind, "barrier_us": round(statistics.median(times), 3),
                          "blocks": grid[0] * grid[1]}), flush=True)


SWEEP = [{}, {"warps": 8}, {"U": 4}, {"U": 8}, {"U": 32}, {"KC": 32, "RC": 32},
         {"KC": 128, "RC": 128}]


def sweep():
    """The configurations of SWEEP (or of $PERSIST_SWEEP, a JSON list) at N = 16, 64 and 256
    (or $PERSIST_SWEEP_N, comma-separated)."""
    import os
    configs = json.loads(os.environ.get("PERSIST_SWEEP", "null")) or SWEEP
    sizes = [int(v) for v in os.environ.get("PERSIST_SWEEP_N", "16,64,256").split(",")]
    ref, per = pair(512, 512, 2)
    for n in sizes:
        x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
        w = torch.randn(100, n, 512, device="cuda")
        for bf16 in (False, True):
            c = timed(ref, x, w, bf16, 20)
            cf = forward_only(ref, x, bf16)
            for tune in configs:
                persist.TUNE.clear()
                persist.TUNE.update(tune)
                try:
                    p = timed(per, x, w, bf16, 20)
                    pf = forward_only(per, x, bf16)
                except Exception as e:  # noqa: BLE001 - a config that does not compile
                    print(json.dumps({"tune": tune, "N": n, "error": str(e)[:200]}), flush=True)
                    continue
                print(json.dumps({"N": n, "bf16": bf16, "tune": tune,
                                  "plan": persist.plan(512, n, x.device)["grid"],
                                  "cudnn_ms": round(c, 2), "persist_ms": round(p, 2),
                                  "x": round(c / p, 2), "cudnn_fwd_ms": round(cf, 2),
                                  "persist_fwd_ms": round(pf, 2)}), flush=True)
    persist.TUNE.clear()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--barrier", action="store_true")
    a = ap.parse_args()
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    if a.check:
        check()
    if a.barrier:
        barrier_cost()
    if a.sweep:
        sweep()
    if a.time:
        time_all()
