"""Bidirectional layers over padded sequences on both engines: parity on the device, the time
of a training step, and whether the step is captured in a CUDA graph.

    python tests/benchmarks/bench_padded.py --device cpu
    python tests/benchmarks/bench_padded.py --device cuda            # the lead's GPU run

For each case (one-directional or bidirectional, with or without lengths) it prints the largest
relative difference between the engines (outputs, final states, every gradient, and the outputs
and input gradients at padded steps against zero), then trains a small net (data -> LSTM ->
InnerProduct -> loss, Adam) on each engine and prints ms per step and the CUDA-graph note.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.nets, run as a script

from designer.engines.net.build import Net  # noqa: E402
from designer.engines.measure.parity import compare, spread_lengths  # noqa: E402
from designer.engines.train_step.step import TrainStep, make_optimizer  # noqa: E402
from designer.graph import Graph, settings  # noqa: E402
from tests.nets import link_all  # noqa: E402


def padded_graph(kind: str, hidden: int, levels: int, bidirectional: bool, lengths: bool,
                 batch: int) -> Graph:
    """MNIST-shaped sequences (T=28, E=28) into the layer; the labels (N,) feed ``lengths``."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": batch,
                                      "batch_first": False})
    g.add_layer(kind, "rnn", {"num_output": hidden, "num_layers": levels,
                              "bidirectional": bidirectional})
    g.add_layer("InnerProduct", "ip", {"num_output": 10, "axis": 2})
    links = [("data.data", "rnn.x"), ("rnn.y", "ip.x")]
    if lengths:
        links.append(("data.label", "rnn.lengths"))
    link_all(g, links)
    return g


def time_steps(g: Graph, engine: str, device: torch.device, lengths: torch.Tensor | None,
               steps: int, warmup: int) -> dict:
    torch.manual_seed(0)
    net = Net(g, engine).to(device)
    opt = make_optimizer(net.parameters(), settings.effective("solver", {"type": "Adam"}),
                         device)
    step = TrainStep(net, opt, clip=5.0, graphs=device.type == "cuda")
    n = lengths.shape[0] if lengths is not None else g.dims["N"]
    x = torch.randn(28, n, 28, device=device)
    target = torch.randn(28, n, 10, device=device)

    def loss_of(out):  # a regression on the per-step scores: no loss layer needed
        return ((out.blobs[("ip", 0)] - target) ** 2).mean()

    net.loss = loss_of
    feeds = {"data.data": x}
    if lengths is not None:
        feeds["data.label"] = lengths.to(device)
    for _ in range(warmup):
        step(feeds)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        out = step(feeds)
    out.loss.item()
    ms = (time.perf_counter() - start) * 1000 / steps
    return {"engine": engine, "ms_step": round(ms, 3), "captured": step.captured,
            "note": step.graph_note}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--kind", default="LSTM", choices=("LSTM", "GRU", "RNN"))
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--levels", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    g_lengths = torch.Generator().manual_seed(1)
    lengths = torch.randint(1, 29, (args.batch,), generator=g_lengths)
    lengths[0] = 28
    rows = []
    for bidirectional in (False, True):
        for padded in (False, True):
            lens = spread_lengths(20, 8) if padded else None
            diffs = compare(args.kind, 28, 64, 2, 20, 8, device=args.device,
                            bidirectional=bidirectional, lengths=lens, resets=False)
            worst = max(diffs, key=lambda d: d.rel)
            g = padded_graph(args.kind, args.hidden, args.levels, bidirectional, padded,
                             args.batch)
            for engine in ("cudnn", "caffe"):
                r = time_steps(g, engine, device, lengths if padded else None, args.steps,
                               args.warmup)
                r.update({"bidirectional": bidirectional, "lengths": padded,
                          "parity_max_rel": worst.rel, "parity_worst": worst.name})
                rows.append(r)
    if args.json:
        print(json.dumps({"device": str(device), "torch": torch.__version__, "kind": args.kind,
                          "hidden": args.hidden, "levels": args.levels, "batch": args.batch,
                          "rows": rows}, indent=1))
        return
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    print(f"{args.kind} {args.levels} x {args.hidden}, T=28, N={args.batch}, E=28 on {name}, "
          f"torch {torch.__version__}; parity at T=20, N=8, 64 units")
    print(f"{'directions':<11s} {'lengths':<8s} {'engine':<6s} {'ms/step':>8s} "
          f"{'parity rel':>11s}  graph")
    for r in rows:
        graph = "captured" if r["captured"] else (r["note"] or "eager")
        print(f"{'both' if r['bidirectional'] else 'forward':<11s} "
              f"{'yes' if r['lengths'] else 'no':<8s} {r['engine']:<6s} {r['ms_step']:8.2f} "
              f"{r['parity_max_rel']:11.2e}  {graph}")


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
