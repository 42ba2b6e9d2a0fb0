"""Benchmark: generation time per character, stateful (one step per character) versus
re-running the whole window for every character (the MyCaffe output window), on the CPU.

RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_generate.py [--engine cudnn|caffe]
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from designer.engines.build import Net
from designer.graph import project as P
from designer.training.sampling import Sampler, sample_window


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", default="projects/char-rnn-shakespeare.json")
    ap.add_argument("--engine", default=None)
    ap.add_argument("--chars", type=int, default=300)
    ap.add_argument("--window-chars", type=int, default=30)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    proj = P.load(a.project)
    window = proj.graph.layer(proj.graph.sources()[0]).get("seq_len")
    torch.manual_seed(0)
    net = Net(proj.graph, a.engine).eval()
    prime = [1, 2, 3, 4, 5]
    Sampler(net).sample(prime, 20, seed=0)  # warm up
    sample_window(net, prime, 3, window)
    t0 = time.perf_counter()
    Sampler(net).sample(prime, a.chars, seed=0)
    stateful = (time.perf_counter() - t0) / a.chars
    t0 = time.perf_counter()
    sample_window(net, prime * 15, a.window_chars, window)
    windowed = (time.perf_counter() - t0) / a.window_chars
    print(json.dumps({"project": a.project, "engines": net.engines, "window": window,
                      "threads": torch.get_num_threads(),
                      "stateful_ms_per_char": round(stateful * 1e3, 3),
                      "window_ms_per_char": round(windowed * 1e3, 3),
                      "speedup": round(windowed / stateful, 1)}))


if __name__ == "__main__":
    main()
