"""Which fused-step tiles the autotuner picks for the unrolled engine's bf16 LSTM and GRU
(2x512, T=100, N=16 and 64), how long the first forward + backward takes (compiling and
autotuning), and the layer's eager time after it, on a CUDA machine.

python tests/benchmarks/probe_tiles.py base|extra

``extra`` adds every tile again with 2, 4 and 5 pipeline stages, and one 512-deep tile (slow:
minutes of autotuning). TRITON_PRINT_AUTOTUNING=1 prints the autotuner's own report.
"""
import json
import sys
import time

import torch
import triton

from designer.cells.classic.kernels import gru as triton_gru

from designer.cells.classic.kernels import lstm as triton_lstm
from designer.engines.unrolled import UnrolledRecurrent

extra = sys.argv[1] == "extra"
if extra:
    for k in (triton_lstm._step_fwd, triton_lstm._step_bwd, triton_gru._gru_step_fwd, triton_gru._gru_step_bwd):
        base = list(k.configs)
        for c in base:
            for st in (2, 4, 5):
                k.configs.append(triton.Config(dict(c.kwargs), num_warps=c.num_warps, num_stages=st))
        k.configs.append(triton.Config({"BN": 16, "BH": 16, "BK": 512}, num_warps=4, num_stages=1))
        k.configs.append(triton.Config({"BN": 16, "BH": 16, "BK": 512}, num_warps=8, num_stages=1))
torch.manual_seed(0)
for kind in ("LSTM", "GRU"):
    for n in (16, 64):
        u = UnrolledRecurrent(kind, 512, 512, 2).cuda()
        x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
        t0 = time.time()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y, _ = u(x)
        y.float().sum().backward()
        torch.cuda.synchronize()
        print(json.dumps({"kind": kind, "N": n, "extra": extra, "first_call_s": round(time.time() - t0, 1)}), flush=True)
        ts = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y, _ = u(x)
            y.float().sum().backward()
            b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
        print(json.dumps({"kind": kind, "N": n, "extra": extra, "eager_ms": round(min(ts), 2)}), flush=True)
for k in (triton_lstm._step_fwd, triton_lstm._step_bwd, triton_gru._gru_step_fwd, triton_gru._gru_step_bwd):
    for key, cfg in k.cache.items():
        print(k.fn.__name__, key[:3], cfg, flush=True)
