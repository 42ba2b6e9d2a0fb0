import json, sys
sys.path.insert(0, "tests/benchmarks")
import torch
from torch.profiler import profile, ProfilerActivity
import bench_slstm as B
for dtype in ("float32", "bfloat16"):
    for n in (16, 64):
        for row in ("persist", "flashrnn/triton_fused"):
            cfg = {"row": row, "device": "cuda", "dtype": dtype, "batch": n, "seq": 256,
                   "hidden": 512, "heads": 8, "iters": 10, "tune": {}}
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                r = B.one(cfg)
            ev = [e for e in p.key_averages() if e.device_time_total > 0]
            ev.sort(key=lambda e: -e.device_time_total)
            tot = sum(e.device_time_total for e in ev)
            print(f"== {row} {dtype} N={n}: eager {r['ms']} ms; GPU time per step {tot/15/1000:.3f} ms")
            for e in ev[:8]:
                print(f"   {e.device_time_total/15/1000:8.3f} ms  x{e.count/15:5.1f}  {e.key[:90]}")
