"""Benchmark: generation speed in symbols (characters or audio samples) per second, per
project, device, engine and number of streams, against the v0.1 path the window used.

    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_generate.py \\
        [--device cpu|cuda] [--engines cudnn,caffe] [--streams 1,64] [--no-graphs]

Rows (one JSON line each, then a table):

- ``v0.1``: the per-symbol loop the window ran before (a tensor made per symbol, the whole
  ``Net.forward`` walk, oneDNN switched off around ``torch.nn.LSTM`` for one step,
  ``torch.multinomial`` on the host), one stream; what the ratios are against;
- ``decoder``: ``StreamDecoder`` with K streams, eager on the CPU, and on a GPU both eager and
  with its step replayed from a CUDA graph.

The nets have the projects' shapes and freshly initialised weights: speed does not depend on
what the weights hold. Each row is the best of ``--repeats`` timed runs after a warm-up run
(which also captures the graph).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from designer.engines.net.build import Net
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.graph import project as P
from designer.training.readout.decode import StreamDecoder

PROJECTS = {"text": "projects/char-rnn-shakespeare.json", "audio": "projects/char-rnn-audio.json"}
UNITS = {"text": "chars", "audio": "samples"}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ------------------------------------------------------------------- the v0.1 window path --
def _v01_run(self, x, state):
    """CudnnRecurrent._run as v0.1 had it: oneDNN off around torch's own call (a global flag)."""
    if not x.is_cuda and x.shape[0] <= 4 and not torch.is_grad_enabled():
        before = torch.backends.mkldnn.enabled
        torch.backends.mkldnn.enabled = False
        try:
            return self._call(x, state)
        finally:
            torch.backends.mkldnn.enabled = before
    return self._call(x, state)


def _v01_pick(logits, temperature, gen):
    logits = logits.float().cpu() / temperature
    return int(torch.multinomial(torch.softmax(logits, 0), 1, generator=gen))


@torch.no_grad()
def v01_loop(net: Net, prime: list[int], n: int, device: torch.device) -> None:
    """v0.1's ``Sampler.sample`` (one stream, one ``Net.forward`` per symbol)."""
    data, at = net.sources[0], net.logits_source()
    gen = torch.Generator().manual_seed(0)
    original = CudnnRecurrent._run
    CudnnRecurrent._run = _v01_run
    try:
        state = None

        def feed(ids):
            nonlocal state
            x = torch.tensor(ids, dtype=torch.long, device=device).view(-1, 1)
            out = net({f"{data}.data": x}, state, want=(at[0],))
            state = out.state
            return out.blobs[at].reshape(len(ids), -1)[-1]

        logits = feed(prime)
        for _ in range(n):
            logits = feed([_v01_pick(logits, 1.0, gen)])
    finally:
        CudnnRecurrent._run = original


# ------------------------------------------------------------------------------ timing --
def best_time(fn, repeats: int, device: torch.device) -> float:
    times = []
    for _ in range(repeats):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_decoder(net, device, streams, steps, graphs, repeats) -> dict:
    dec = StreamDecoder(net, streams, device, temperature=1.0, seed=0, graphs=graphs)
    dec.prime([1, 2, 3])
    sync(device)
    t0 = time.perf_counter()
    dec.run(max(steps // 4, dec.per_graph))  # warm-up: Triton, cuDNN plans, the capture
    sync(device)
    first = time.perf_counter() - t0
    seconds = best_time(lambda: dec.run(steps), repeats, device)
    return {"path": "decoder", "graph": dec.graph_note, "streams": streams, "steps": steps,
            "seconds": seconds, "warmup_s": first,
            "per_s": steps * streams / seconds, "per_stream_per_s": steps / seconds,
            "us_per_step": 1e6 * seconds / steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--projects", default="text,audio", help="text, audio or project files "
                    "(a file's rows are named by its stem and counted in characters)")
    ap.add_argument("--engines", default="cudnn,caffe")
    ap.add_argument("--streams", default="1,64", help="stream counts to time")
    ap.add_argument("--steps", type=int, default=0, help="steps per timed run (default: 2000 "
                    "on a GPU, 400 on the CPU; a quarter of it for many streams on the CPU)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-graphs", action="store_true", help="GPU: eager rows only")
    ap.add_argument("--no-v01", action="store_true", help="skip the v0.1 rows")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    cuda = device.type == "cuda"
    setup = {"device": str(device), "torch": torch.__version__,
             "threads": torch.get_num_threads(),
             "gpu": torch.cuda.get_device_name(device) if cuda else None}
    print(json.dumps({"setup": setup}), flush=True)
    rows = []
    for kind in a.projects.split(","):
        proj = P.load(PROJECTS.get(kind, kind))
        kind = kind if kind in PROJECTS else Path(kind).stem
        for engine in a.engines.split(","):
            torch.manual_seed(0)
            net = Net(proj.graph, engine).to(device).eval()
            base = {"project": kind, "engine": engine, "device": str(device)}
            if not a.no_v01:
                steps = a.steps or (1000 if cuda else 300)
                v01_loop(net, [1, 2, 3], 20, device)
                seconds = best_time(lambda: v01_loop(net, [1, 2, 3], steps, device), a.repeats,
                                    device)
                rows.append({**base, "path": "v0.1", "graph": "eager", "streams": 1,
                             "steps": steps, "seconds": seconds, "per_s": steps / seconds,
                             "per_stream_per_s": steps / seconds,
                             "us_per_step": 1e6 * seconds / steps})
                print(json.dumps(rows[-1]), flush=True)
            for k in (int(s) for s in a.streams.split(",")):
                steps = a.steps or (2000 if cuda else (400 if k <= 8 else 100))
                modes = [False] if not cuda or a.no_graphs else [True, False]
                for graphs in modes:
                    if graphs is False and cuda and k > 1:
                        continue  # eager on a GPU: the single stream shows what graphs add
                    row = {**base, **bench_decoder(net, device, k, steps, graphs, a.repeats)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    table(rows)


def table(rows: list[dict]) -> None:
    base = {(r["project"], r["engine"]): r["per_s"] for r in rows if r["path"] == "v0.1"}
    print(f"\n{'project':8} {'engine':6} {'device':7} {'path':8} {'graph':28} {'streams':>7} "
          f"{'us/step':>9} {'symbols/s':>12} {'x v0.1':>7}")
    for r in rows:
        ratio = r["per_s"] / base[(r["project"], r["engine"])] \
            if (r["project"], r["engine"]) in base else float("nan")
        unit = UNITS.get(r["project"], "chars")
        print(f"{r['project']:8} {r['engine']:6} {r['device']:7} {r['path']:8} "
              f"{r['graph'][:28]:28} {r['streams']:>7} {r['us_per_step']:>9.1f} "
              f"{r['per_s']:>12,.0f} {ratio:>7.1f}  {unit}/s")


if __name__ == "__main__":
    main()
