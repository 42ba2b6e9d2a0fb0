"""A few forward + backward passes of one PERSIST LSTM level, for a profiler to look at.

ncu --clock-control none --kernel-name regex:persist_ --launch-skip 2 --launch-count 2 \
    python tests/benchmarks/persist_probe.py [N] [HIDDEN] [bf16]

With --profile as the last argument, no ncu: torch's profiler over 20 passes prints each
persistent kernel's mean time and the share of everything else.
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from designer.engines import persist_cuda  # noqa: E402
from designer.cells.classic.engines.persist import PersistRecurrent  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 512
torch.manual_seed(0)
m = PersistRecurrent("LSTM", 512, hidden, 1, 0.0, False).cuda()
x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
bf16 = "bf16" in sys.argv


def passes(k):
    for _ in range(k):
        with torch.autocast("cuda", torch.bfloat16, enabled=bf16):
            y, _ = m(x)
        y.float().sum().backward()


passes(3)
torch.cuda.synchronize()
print("ran", m.fallback or "persistent", "bf16" if bf16 else "fp32", flush=True)
cfg = persist_cuda.plan_for(hidden, n, x.device, bf16) or {}
print("plan: grid", cfg.get("grid"), "sequences a block", cfg.get("NB"), "cluster",
      cfg.get("CLUSTER"), "clusters at once", persist_cuda._fit or "not asked", flush=True)
if sys.argv[-1] == "--profile":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        passes(20)
        torch.cuda.synchronize()
    rows = [(e.key, e.device_time_total / e.count, e.count, e.device_time_total)
            for e in prof.key_averages() if e.device_time_total > 0]
    total = sum(r[3] for r in rows)
    for key, mean, count, tot in sorted(rows, key=lambda r: -r[3])[:8]:
        print(f"{mean:9.1f} us x {count:4d} = {100 * tot / total:5.1f}%  {key[:90]}")
    print(f"all kernels: {total / 20:.1f} us a pass (forward + backward, one level)")
