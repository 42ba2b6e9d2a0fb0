"""What inspection costs next to training: a validation pass against the look at the held-out
snippet that every validation now takes, and the Inspect view's full inspection.

    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_probe_cost.py \\
        [--project P] [--device cpu|cuda] [--engine cudnn|caffe] [--repeats R] [--steps T]

On the project's net (freshly initialised: the cost does not depend on the weights) and its
data, it times, each the median of ``--repeats`` after one untimed call:

- ``evaluate_ms``: one validation as the loop runs it (``eval_batches`` held-out batches);
- ``probe_ms``: the look at the held-out snippet the loop adds to every validation (the
  per-step nodes, forward only: gate saturation, surprise, top guesses);
- ``inspect_ms``: the Inspect view's inspection of the snippet (forward and two backward
  passes through every step), on this device and on the CPU with one thread (where the
  view's worker runs it);
- ``parity_ms``: the same with the per-step engine comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data"))


def timed(fn, repeats: int, sync) -> float:
    fn()
    out = []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        out.append(1e3 * (time.perf_counter() - t))
    return round(statistics.median(out), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", default=str(ROOT / "projects" / "char-rnn-shakespeare.json"))
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--engine", choices=("cudnn", "caffe"), default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100, help="length of the snippet")
    a = ap.parse_args()
    import torch

    from designer.engines.net.build import Net
    from designer.graph import project as P
    from designer.training.data import open_source
    from designer.training.readout.inspect import inspect, probe_record
    from designer.training.run.loop import evaluate
    from designer.training.readout.probe import held_out_probe
    project = P.load(a.project)
    graph = project.graph
    data = graph.sources()[0]
    source = open_source(graph.layer(data), project.path.parent)
    device = torch.device(a.device)
    torch.manual_seed(0)
    net = Net(graph, a.engine).to(device)
    probe = held_out_probe(source, a.steps)
    cfg = project.training_settings()

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    row = {"project": Path(a.project).name, "device": a.device,
           "engines": dict(net.engines), "snippet_steps": probe.steps,
           "eval_batches": cfg["eval_batches"], "threads": torch.get_num_threads(),
           "evaluate_ms": timed(lambda: evaluate(net, source, cfg["eval_batches"], device,
                                                 data), a.repeats, sync),
           "probe_ms": timed(lambda: probe_record(net, probe, 0), a.repeats, sync),
           "inspect_ms": timed(lambda: inspect(net, probe), a.repeats, sync)}
    row["probe_share_of_a_validation"] = round(row["probe_ms"] / row["evaluate_ms"], 4)
    cpu = net.to("cpu")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the Inspect view's worker thread runs
    row["inspect_cpu_1_thread_ms"] = timed(lambda: inspect(cpu, probe), a.repeats,
                                           lambda: None)
    row["parity_cpu_1_thread_ms"] = timed(lambda: inspect(cpu, probe, grads=False,
                                                          parity=True), a.repeats,
                                          lambda: None)
    torch.set_num_threads(threads)
    if a.device == "cuda":
        row["gpu"] = torch.cuda.get_device_name()
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
