"""A few forward + backward passes of one PERSIST LSTM level, for a profiler to look at.

ncu --clock-control none --kernel-name regex:persist_ --launch-skip 2 --launch-count 2 \
    python tests/benchmarks/persist_probe.py [N] [HIDDEN]
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from designer.engines.persist import PersistRecurrent  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 512
torch.manual_seed(0)
m = PersistRecurrent("LSTM", 512, hidden, 1, 0.0, False).cuda()
x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
for _ in range(3):
    y, _ = m(x)
    y.sum().backward()
torch.cuda.synchronize()
print("ran", m.fallback or "persistent", flush=True)
