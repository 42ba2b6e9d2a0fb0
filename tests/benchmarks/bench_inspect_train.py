"""Training through the window with the Inspect view open (following the run live) against
training through the window without it, in one benchmark run.

    QT_QPA_PLATFORM=offscreen RNN_DESIGNER_DATA=../shared/data \\
        python tests/benchmarks/bench_inspect_train.py [--project P] [--steps N] \\
        [--device cpu|cuda] [--engine cudnn|caffe] [--repeats R] [--every K]

Both kinds run in the same offscreen `MainWindow` (the charts and the device panel live, as
in ``bench_gui_train.py``), alternating ``--repeats`` times after an untimed warm-up of each:

``closed``
    the Inspect tab is not open: nothing asks the loop for weights.
``open``
    the Inspect view is the current tab, following the run: every K steps (``--every``) it
    asks the loop for a copy of the weights, inspects the held-out snippet on the copy in its
    own thread (gates, states, surprise, gradient norms through every step) and draws it,
    resting REST times as long as each inspection took before asking again.

A run's speed is the median of its logged ``tokens_per_s`` records (the first left out), as
the runs table shows it. Prints JSON lines, then the ratio open/closed and how many live
updates were drawn and what they cost.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data"))
PROJECT = ROOT / "projects" / "char-rnn-shakespeare.json"

from bench_gui_train import Window, rate_of  # noqa: E402


def train(window: Window, steps: int, inspect: bool, every: int) -> dict:
    """One run through the window, with the Inspect view open (and live) or closed."""
    from PySide6.QtCore import QEventLoop
    w = window.w
    updates: list[dict] = []
    if inspect:
        view = w.show_inspect()
        view.every.setValue(every)
        view.follow.setChecked(True)
        view.inspected.connect(updates.append)
    else:
        w._close_inspect()
        w.tabs.setCurrentIndex(0)
    c = w.training
    loop = QEventLoop()
    c.run_ended.connect(loop.quit)
    t = time.perf_counter()
    run = c.train(steps=steps, device=window.device, engine=window.engine)
    if run is None:
        raise SystemExit("the window did not start the run")
    loop.exec()
    wall = time.perf_counter() - t
    c.run_ended.disconnect(loop.quit)
    if run.state != "finished":
        raise SystemExit(f"the window's run ended {run.state}: {c.last_error}")
    live = [u for u in updates if u.get("title", "").startswith("live")]
    rate, n = rate_of(Path(run.run_dir))
    return {"tokens_per_s": rate, "records": n, "wall_s": round(wall, 2),
            "live_updates": len(live),
            "live_steps": [u["inspection"].step for u in live],
            "inspect_s_each": [round(u["seconds"], 3) for u in live]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", default=str(PROJECT))
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per run (default: 120 on the CPU, 3000 on CUDA)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--engine", choices=("cudnn", "caffe"), default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--every", type=int, default=10, help="the view's update interval, steps")
    ap.add_argument("--warmup-steps", type=int, default=None,
                    help="steps of the untimed first runs (default: 20 on the CPU, 300 on "
                         "CUDA)")
    a = ap.parse_args()
    cuda = a.device == "cuda"
    a.steps = a.steps or (3000 if cuda else 120)
    a.warmup_steps = a.warmup_steps or (300 if cuda else 20)
    project = Path(a.project).resolve()
    runs = Path(tempfile.mkdtemp(prefix="bench-inspect-train-"))
    os.environ["RNN_DESIGNER_RUNS"] = str(runs)
    import torch
    from designer.ui.inspect.view import REST
    print(json.dumps({"setup": {
        "project": str(project.relative_to(ROOT) if project.is_relative_to(ROOT) else project),
        "steps": a.steps, "device": a.device, "engine": a.engine or "as drawn",
        "repeats": a.repeats, "every": a.every, "rest": REST, "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name() if cuda else None}}), flush=True)
    window = Window(project, a.device, a.engine)
    train(window, a.warmup_steps, False, a.every)
    train(window, a.warmup_steps, True, a.every)
    results: dict = {"closed": [], "open": []}
    for i in range(a.repeats):
        for kind in ("closed", "open") if i % 2 == 0 else ("open", "closed"):
            r = train(window, a.steps, kind == "open", a.every)
            results[kind].append(r)
            print(json.dumps({"repeat": i, kind: r}), flush=True)
    window.close()

    def median(kind):
        return statistics.median(r["tokens_per_s"] for r in results[kind])

    closed, opened = median("closed"), median("open")
    print(json.dumps({"summary": {
        "closed_tokens_per_s": round(closed, 1), "open_tokens_per_s": round(opened, 1),
        "ratio_open_to_closed": round(opened / closed, 4),
        "ratios_per_repeat": [round(o["tokens_per_s"] / c["tokens_per_s"], 4)
                              for c, o in zip(results["closed"], results["open"])],
        "live_updates_per_run": [r["live_updates"] for r in results["open"]],
        "inspect_s_median": statistics.median(
            [s for r in results["open"] for s in r["inspect_s_each"]] or [0.0]),
        "runs_folder": str(runs)}}), flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
