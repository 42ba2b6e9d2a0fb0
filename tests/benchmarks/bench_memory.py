"""The memory estimate against what training really takes, per project, engine and device.

Each configuration trains a few steps through the real training loop
(``designer.training.run.loop.train``) in a fresh process, so one run's memory cannot hide in
another's. What is measured starts just before the model is built (after the data is read):

- on the CPU: the growth of the process's resident memory, its peak (``VmHWM``, reset through
  ``/proc/self/clear_refs``) minus what it held just before the model was built; a tiny net
  trains first, so that what torch loads once per process is not counted;
- on CUDA: ``torch.cuda.max_memory_allocated()``, the allocator's peak (reset at the same
  point; the data layer keeps its data on the CPU).

Commands::

    # the CPU (the development machine)
    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_memory.py --device cpu
    # a GPU
    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_memory.py --device cuda

It prints one line per configuration (estimate, measured, ratio) and, with ``--json FILE``,
writes the rows. ``--only`` picks projects by a part of their file name.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ("projects/char-rnn-shakespeare.json", "projects/char-rnn-shakespeare-unrolled.json",
            "projects/char-rnn-audio.json", "projects/mnist-lstm.json",
            "tests/benchmarks/char-rnn-bench.json")


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def warm_up() -> None:
    """Train a tiny net first, so that what torch loads once per process (its optimizers'
    modules, oneDNN's kernels, the autograd threads) is not counted as the net's memory."""
    import torch
    import torch._dynamo  # noqa: F401  (the optimizers import it on first use)
    from torch import nn
    for kind in (nn.LSTM, nn.GRU):
        m = kind(8, 8, 2, dropout=0.1)
        opt = torch.optim.Adam(m.parameters())
        y, _ = m(torch.randn(3, 2, 8))
        y.sum().backward()
        nn.utils.clip_grad_norm_(list(m.parameters()), 1.0, foreach=True)
        opt.step()


def measure(project_path: str, device: str, engine: str, steps: int, precision: str) -> dict:
    """Train ``steps`` steps in this process; the estimate and the measured peak, in bytes."""
    import torch

    from designer.graph import project as P
    from designer.graph.memory import Setup, estimate
    from designer.training.run import loop, session

    warm_up()
    project = P.load(project_path)
    project.training["precision"] = precision
    settings = project.training_settings()
    est = estimate(project.graph, Setup(device, engine, precision, project.solver_settings(),
                                        settings["cuda_graphs"]))
    base = {}
    real_net = session.Net

    def net_marking_the_start(*args, **kwargs):  # just before the model is built
        import gc
        gc.collect()
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base["allocated"] = torch.cuda.memory_allocated()
        base["rss"] = _status("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
        return real_net(*args, **kwargs)

    session.Net = net_marking_the_start
    with tempfile.TemporaryDirectory() as tmp:
        opts = loop.RunOptions(out=Path(tmp) / "run", steps=steps, device=device,
                               engine=engine, seed=1)
        project.training.update(log_interval=1, eval_interval=steps, eval_batches=2,
                                checkpoint_interval=steps, sample_interval=0)
        for rec in loop.train(project, opts):
            if rec["kind"] == "error":
                raise RuntimeError(rec["message"])
    if device == "cuda":
        torch.cuda.synchronize()
        measured = torch.cuda.max_memory_allocated() - base["allocated"]
    else:
        measured = _status("VmHWM") - base["rss"]
    return {"project": project_path, "device": device, "engine": engine,
            "precision": precision, "steps": steps, "estimate": est.total,
            "parts": est.parts(), "measured": measured, "ratio": est.total / measured,
            "threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name() if device == "cuda" else None}


CELLS = {"sLSTM": {"num_heads": 4}, "mLSTM": {"num_heads": 4}, "MinGRU": {}, "MinLSTM": {}}


def cell_projects(folder: Path) -> list[str]:
    """The Char-RNN example with its LSTM retyped into each newer cell (same size, levels
    and dropout; each cell's own engines), written into ``folder``."""
    base = json.loads((ROOT / PROJECTS[0]).read_text())
    out = []
    for kind, extra in CELLS.items():
        p = json.loads(json.dumps(base))
        for layer in p["graph"]["layers"]:
            if layer["name"] == "lstm1":
                keep = {k: layer["params"][k] for k in ("num_output", "num_layers",
                                                         "dropout_ratio")}
                layer.update(type=kind, params={**keep, **extra})
        path = folder / f"char-rnn-{kind.lower()}.json"
        path.write_text(json.dumps(p))
        out.append(str(path))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--engines", default="cudnn,caffe")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--only", default="", help="projects whose path contains this")
    ap.add_argument("--fixed-mmap-threshold", action="store_true",
                    help="run the children with MALLOC_MMAP_THRESHOLD_=131072: glibc then hands "
                    "freed large blocks back at once instead of keeping them for reuse")
    ap.add_argument("--cells", action="store_true",
                    help="also the Char-RNN with its LSTM retyped into each of the newer cells "
                    "(sLSTM and mLSTM in 4 heads, MinGRU, MinLSTM)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--one", nargs=2, metavar=("PROJECT", "ENGINE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:  # the child: one configuration, one JSON line
        print(json.dumps(measure(a.one[0], a.device, a.one[1], a.steps, a.precision)))
        return
    rows = []
    cells_dir = tempfile.TemporaryDirectory()
    paths = list(PROJECTS) + (cell_projects(Path(cells_dir.name)) if a.cells else [])
    print(f"{'project':46} {'engine':6} {'estimate MiB':>12} {'measured MiB':>12} {'ratio':>6}")
    for path in paths:
        if a.only not in path:
            continue
        for engine in a.engines.split(","):
            cmd = [sys.executable, __file__, "--device", a.device, "--steps", str(a.steps),
                   "--precision", a.precision, "--one", path, engine]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
            if a.fixed_mmap_threshold:
                env["MALLOC_MMAP_THRESHOLD_"] = "131072"
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
            if done.returncode:
                print(f"{path:46} {engine:6} failed: {done.stderr.strip().splitlines()[-1]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{path:46} {engine:6} {row['estimate'] / 2**20:12.1f} "
                  f"{row['measured'] / 2**20:12.1f} {row['ratio']:6.2f}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
