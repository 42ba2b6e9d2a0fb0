"""Which classifier should ``rnn-designer init`` write? Trains many designs on each data set in
one process (no interpreter start per run) and scores each on its test split beside MiniRocket.

    python tests/benchmarks/init_sweep.py OUT DESIGN [DESIGN...] [--sets GunPoint,...]
        [--device cuda] [--seed 1]

A DESIGN is ``name:key=value,key=value`` over init's own project, for example
``fcn:conv=64/128/64,k=8/5/3,lstm=0,frame=1,steps=1500``. Keys:
- ``frame``: ``auto`` (init's), or a number of steps to read a sequence in (``T``), or 1 step;
- ``conv``: filters of each Conv1D -> BatchNorm -> ReLU block ("-": none), ``k`` their kernels;
- ``res``: filters of each residual block (three Conv1D -> BatchNorm with kernels ``k``, a
  1x1 Conv1D -> BatchNorm shortcut where the channels change, Eltwise SUM -> ReLU), the
  ResNet of Wang et al. (2017) with ``res=64/128/128``; replaces ``conv``;
- ``lstm``: the LSTM's units (0: none), ``bi``: 1 for bidirectional;
- ``pool``: how the convolution branch is read over time (mean, max, attention);
- ``read``: how the LSTM is read (last, mean, max, attention);
- ``steps``: training steps (``auto``: init's), ``batch``, ``lr``, ``wd``, ``drop``;
- ``jitter``, ``scaling``, ``slice``: augmentation.
Prints one line per set and design; OUT/results.jsonl keeps every record.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from designer.graph import project as P  # noqa: E402
from designer.graph.layout import layered_positions  # noqa: E402
from designer.graph.model import Graph  # noqa: E402
from designer.training.new_from_data.init import init_project  # noqa: E402
from designer.training.run.loop import RunOptions  # noqa: E402
from designer.training.run.loop import train as run_training  # noqa: E402
from designer.training.trained.evaluate import classify_arrays, evaluate_run  # noqa: E402
from designer.training.trained.evaluate import test_source  # noqa: E402
from designer.training.trained.generate import load_trained  # noqa: E402

SETS = ("GunPoint", "ArrowHead", "OSULeaf", "JapaneseVowels")


def parse(design: str) -> tuple[str, dict]:
    name, _, rest = design.partition(":")
    keys = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    return name, keys


def build(project, keys: dict, source_len: int) -> None:
    """Rewrite init's classifier project after ``keys`` (see the module doc)."""
    g0 = project.graph
    data = dict(g0.layer("data").params)
    frame = keys.get("frame", "auto")
    if frame != "auto":
        data["frame"] = max(1, math.ceil(source_len / int(frame))) if int(frame) > 1 else 1
    for key, name in (("jitter", "jitter"), ("scaling", "scaling"), ("slice", "window_slice")):
        if key in keys:
            data[name] = float(keys[key])
    if "batch" in keys:
        data["batch_size"] = int(keys["batch"])
    classes = g0.layer("ip1").params["num_output"]
    g = Graph()
    g.add_layer("SequenceClasses", "data", data)
    branches = []
    convs = [] if keys.get("conv", "-") == "-" else [int(c) for c in keys["conv"].split("/")]
    kernels = [int(k) for k in keys.get("k", "8/5/3").split("/")]
    prev = ("data", "data")
    if keys.get("res", "-") != "-":  # residual blocks in place of the plain ones
        prev = _residual(g, [int(c) for c in keys["res"].split("/")], kernels)
    for i, (filters, kernel) in enumerate(zip(convs if prev == ("data", "data") else [],
                                              kernels), 1):
        prev = _add(g, "Conv1D", f"conv{i}", {"num_output": filters, "kernel_size": kernel},
                    prev)
        prev = _add(g, "ReLU", f"relu{i}", {}, _add(g, "BatchNorm", f"bn{i}", {}, prev),
                    lengths=False)
    if prev != ("data", "data"):  # a convolution branch, read over time
        g.add_layer("SequencePool", "pool", {"method": keys.get("pool", "mean")})
        g.connect(*prev, "pool", "x")
        g.connect("data", "lengths", "pool", "lengths")
        branches.append("pool")
    hidden = int(keys.get("lstm", g0.layer("lstm1").params["num_output"]))
    if hidden:
        g.add_layer("LSTM", "lstm1", {"num_output": hidden,
                                      "bidirectional": keys.get("bi", "0") == "1"})
        g.connect("data", "data", "lstm1", "x")
        g.connect("data", "lengths", "lstm1", "lengths")
        read = keys.get("read", "last")
        if read == "last":
            g.add_layer("SequenceLast", "last", {})
        else:
            g.add_layer("SequencePool", "last", {"method": read})
        g.connect("lstm1", "y", "last", "x")
        g.connect("data", "lengths", "last", "lengths")
        branches.append("last")
    top = branches[0]
    if len(branches) == 2:
        g.add_layer("Concat", "features", {"axis": 1})
        g.connect(branches[0], "y", "features", "a")
        g.connect(branches[1], "y", "features", "b")
        top = "features"
    if float(keys.get("drop", 0)):
        g.add_layer("Dropout", "drop", {"dropout_ratio": float(keys["drop"])})
        g.connect(top, "y", "drop", "x")
        top = "drop"
    g.add_layer("InnerProduct", "ip1", {"num_output": classes})
    g.connect(top, "y", "ip1", "x")
    for kind in ("SoftmaxWithLoss", "Accuracy"):
        name = "loss" if kind == "SoftmaxWithLoss" else "accuracy"
        g.add_layer(kind, name, {})
        g.connect("ip1", "y", name, "logits")
        g.connect("data", "label", name, "label")
    for name, pos in layered_positions(g).items():
        g.move_layer(name, pos)
    project.graph = g
    solver = project.solver
    if keys.get("steps", "auto") != "auto":
        solver["max_steps"] = int(keys["steps"])
        project.training["eval_interval"] = max(10, solver["max_steps"] // 12 // 10 * 10)
        project.training["checkpoint_interval"] = max(100, solver["max_steps"] // 2)
    if "lr" in keys:
        solver["base_lr"] = float(keys["lr"])
    if "wd" in keys:
        solver["weight_decay"] = float(keys["wd"])
        solver["type"] = "AdamW"
    errors = g.errors()
    if errors:
        raise SystemExit(f"the design is not valid: {errors[0]}")


def _add(g: Graph, kind: str, name: str, params: dict, src: tuple,
         lengths: bool = True) -> tuple:
    """A layer reading ``src`` (and the data's lengths); returns its output port."""
    g.add_layer(kind, name, params)
    g.connect(*src, name, "x")
    if lengths:
        g.connect("data", "lengths", name, "lengths")
    return (name, "y")


def _residual(g: Graph, blocks: list[int], kernels: list[int]) -> tuple:
    """Residual blocks after the ``data`` layer; returns the last block's output port."""
    prev, width = ("data", "data"), None
    for b, filters in enumerate(blocks, 1):
        x = prev
        for j, kernel in enumerate(kernels, 1):
            x = _add(g, "Conv1D", f"r{b}c{j}", {"num_output": filters, "kernel_size": kernel}, x)
            x = _add(g, "BatchNorm", f"r{b}n{j}", {}, x)
            if j < len(kernels):
                x = _add(g, "ReLU", f"r{b}a{j}", {}, x, lengths=False)
        short = prev
        if width != filters:
            short = _add(g, "Conv1D", f"r{b}s", {"num_output": filters, "kernel_size": 1}, short)
        short = _add(g, "BatchNorm", f"r{b}sn", {}, short)
        g.add_layer("Eltwise", f"r{b}sum", {"operation": "SUM"})
        g.connect(*x, f"r{b}sum", "a")
        g.connect(*short, f"r{b}sum", "b")
        prev = _add(g, "ReLU", f"r{b}out", {}, (f"r{b}sum", "y"), lengths=False)
        width = filters
    return prev


def find(data: Path, name: str) -> Path:
    for sub in ("ucr", "japanese_vowels", "."):
        p = data / sub / f"{name}_TRAIN.ts"
        if p.is_file():
            return p
    raise SystemExit(f"no {name}_TRAIN.ts under {data}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("designs", nargs="+")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--data", default=None)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--probs", action="store_true",
                    help="write each run's test probabilities to OUT/probs.jsonl")
    args = ap.parse_args()
    import os
    data = Path(args.data or os.environ.get("RNN_DESIGNER_DATA", ROOT.parent / "shared/data"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "results.jsonl", "a")
    for set_name in args.sets.split(","):
        file = find(data, set_name) if not set_name.endswith(".ts") else Path(set_name)
        set_name = file.stem.replace("_TRAIN", "")
        peer_done = args.no_peer
        for design in args.designs:
            name, keys = parse(design)
            path = out / f"{set_name}-{name}.json"
            path.unlink(missing_ok=True)
            init_project(file, out=path, net="lstm-fcn")
            project = P.load(path)
            from designer.training.data.classes import ClassesSource
            from designer.graph import registry
            full = {q.name: q.default for q in registry.get("SequenceClasses").params}
            full.update(project.graph.layer("data").params, file=str(file), frame=1)
            longest = int(ClassesSource(file, full, 0).lengths.max())
            build(project, keys, longest)
            project.save(path)
            project = P.load(path)
            run = out / f"{set_name}-{name}.run"
            start = time.perf_counter()
            steps = 0
            for rec in run_training(project, RunOptions(out=str(run), device=args.device,
                                                        seed=args.seed, probe_steps=0)):
                if rec["kind"] == "step":
                    steps = rec.get("step", steps)
                if rec["kind"] == "note" and "CUDA graph" in rec.get("message", ""):
                    print("NOTE", set_name, name, rec["message"], flush=True)
                if rec["kind"] == "error":
                    print("ERROR", set_name, name, rec)
            took = time.perf_counter() - start
            report = evaluate_run(run, peer=not peer_done)
            if args.probs:  # each test sequence's class probabilities, for ensembles later
                model = load_trained(run, "best", "cpu")
                arrays = classify_arrays(model, test_source(model))
                with open(out / "probs.jsonl", "a") as f:
                    f.write(json.dumps({"set": set_name, "design": name, "seed": args.seed,
                                        "truth": arrays["truth"].tolist(),
                                        "probs": arrays["probs"].round(5).tolist()}) + "\n")
            peer = report.get("peer") or {}
            if peer:
                peer_done = True
            rec = {"set": set_name, "design": design, "accuracy": report.get("accuracy"),
                   "peer": peer.get("accuracy"), "train_s": round(took, 1),
                   "steps": project.solver["max_steps"],
                   "frame": project.graph.layer("data").params.get("frame", 1),
                   "params": sum(1 for _ in [])}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(f"SWEEP | {set_name:15s} | {name:10s} | acc {rec['accuracy']:.3f} | "
                  f"peer {peer.get('accuracy', float('nan')):.3f} | {took:6.1f} s | "
                  f"{rec['steps']} steps | frame {rec['frame']}", flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
