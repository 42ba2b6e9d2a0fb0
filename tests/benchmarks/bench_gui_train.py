"""Training through the window against ``rnn-designer train``, in one benchmark run.

    QT_QPA_PLATFORM=offscreen RNN_DESIGNER_DATA=../shared/data \\
        python tests/benchmarks/bench_gui_train.py [--project P] [--steps N] \\
        [--device cpu|cuda] [--engine cudnn|caffe] [--repeats R]

(a) ``headless``: ``python -m designer train P --steps N --device D --out RUN --quiet``, the
    command itself, in a child process started by this script.
(b) ``window``: the same project and steps through the real `MainWindow` in this process
    (offscreen): Train starts the worker thread, the charts and the device panel are live,
    records cross threads by queued signal.
(c) ``window_probed``: (b) again with a 10 ms precise ``QTimer`` in the GUI thread recording
    how late each tick fires (the GUI thread's responsiveness while training) and how far the
    loss chart is behind the records (``chart_lag_s``: at each tick, how long the oldest train
    record the loss curve does not show yet has waited). The probe wakes the GUI thread 100
    times a second, which the app itself never does, so its run is kept apart from (b)'s speed;
    its own tokens/s are printed too.

Both window runs also say where the loss curve stood the moment the run's end was announced
(``chart_at_end``: its last step against the run's, and the seconds until it caught up), and
the CPU share the charts' own drawing took (``chart_cpu_pct``).

Why a child process for (a): a process in which two threads have run torch's OpenMP-parallel
CPU kernels keeps two OpenMP thread teams, and the second runs ~7 % slower than the first
(measured with plain ``threading`` and no Qt at all); in the app, as with the command, only
one thread ever runs torch. One untimed warm-up run of each kind comes first (torch,
oneDNN/cuDNN and CUDA initialise), then the kinds alternate ``--repeats`` times so drifting
clocks or a busy neighbour hit both.
A run's speed is the median of its logged ``tokens_per_s`` records, the first record (warm-up,
CUDA-graph capture) left out, as the runs table shows it. Prints JSON lines and the ratio.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data"))
PROJECT = ROOT / "projects" / "char-rnn-shakespeare.json"


def rate_of(run_dir: Path) -> tuple[float, int]:
    """Median tokens/s of a run folder's train records (first left out), and their count."""
    rates = [r["tokens_per_s"] for r in map(json.loads, (run_dir / "metrics.jsonl").read_text()
                                            .splitlines()) if r["kind"] == "train"]
    rates = rates[1:] if len(rates) > 1 else rates
    return statistics.median(rates), len(rates)


def headless(project: Path, steps: int, device: str, engine: str | None, out: Path) -> dict:
    """``rnn-designer train``, the command, in a child process."""
    import subprocess
    argv = [sys.executable, "-m", "designer", "train", str(project), "--steps", str(steps),
            "--device", device, "--out", str(out), "--quiet"] + \
        (["--engine", engine] if engine else [])
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"rnn-designer train failed ({done.returncode}): {done.stderr}")
    rate, n = rate_of(out)
    return {"tokens_per_s": rate, "records": n, "wall_s_with_process_start": wall}


class Window:
    """The real window, offscreen, with a 10 ms probe timer in the GUI thread."""

    def __init__(self, project: Path, device: str, engine: str | None) -> None:
        from PySide6.QtCore import QSettings, Qt, QTimer
        from designer.ui.shell.app import make_app
        from designer.ui.shell.main_window import MainWindow
        self.app = make_app()
        self.tmp = tempfile.TemporaryDirectory()
        settings = QSettings(str(Path(self.tmp.name) / "bench.ini"), QSettings.IniFormat)
        self.w = MainWindow(settings=settings, restore=False)
        self.w.notify = lambda *a, **k: None
        if not self.w.files.open_path(project, confirmed=True):
            raise SystemExit(f"{project} cannot be opened")
        self.w.show()
        self.device, self.engine = device, engine
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.ticks: list[float] = []

    def _tick(self) -> None:
        now = time.perf_counter()
        self.ticks.append(now)
        lag = self._chart_lag(now)
        if lag is not None:
            self.lags.append(lag)

    def _arrived(self, add, record: dict) -> None:
        """The run's ``add``, noting when each train record reached the GUI thread."""
        add(record)
        if record.get("kind") == "train":
            self.arrived.append((time.perf_counter(), float(record["step"])))

    def _drawn_step(self) -> float:
        charts, run = self.w.training.charts.panel, self.run
        curves = charts.curves.get(id(run)) if charts is not None else None
        x = curves.items["loss"].getData()[0] if curves is not None else None
        return -1.0 if x is None or not len(x) else float(x[-1])

    def _chart_lag(self, now: float) -> float | None:
        """Seconds the oldest train record the loss curve does not show has waited (0.0: it
        shows them all; None: no record yet)."""
        if not self.arrived:
            return None
        i = bisect.bisect_right([s for _, s in self.arrived], self._drawn_step())
        return now - self.arrived[i][0] if i < len(self.arrived) else 0.0

    def _ended(self, run) -> None:
        self.at_end = {"drawn_step": self._drawn_step(),
                       "last_step": self.arrived[-1][1] if self.arrived else None,
                       "at": time.perf_counter()}

    def _started(self, run) -> None:  # the run's start record: torch loaded, data read
        if self.started is None and run.state == "running":
            self.started = time.perf_counter()

    def train(self, steps: int, probe: bool = True) -> dict:
        from PySide6.QtCore import QEventLoop
        c = self.w.training
        loop = QEventLoop()
        c.run_ended.connect(loop.quit)
        c.run_ended.connect(self._ended)
        self.ticks, self.lags, self.arrived, self.at_end = [], [], [], {}
        before = _chart_counts(c.charts.panel)
        t, cpu = time.perf_counter(), time.thread_time()
        if probe:
            self.timer.start()
        run = c.train(steps=steps, device=self.device, engine=self.engine)
        if run is None:
            raise SystemExit("the window did not start the run")
        self.run = run
        run.add = lambda record, add=run.add: self._arrived(add, record)
        self.started = None
        c.runs.changed.connect(self._started)
        loop.exec()
        self.timer.stop()
        wall, cpu = time.perf_counter() - t, time.thread_time() - cpu
        c.runs.changed.disconnect(self._started)
        c.run_ended.disconnect(loop.quit)
        c.run_ended.disconnect(self._ended)
        end = self._catch_up()
        del run.add
        if run.state != "finished":
            raise SystemExit(f"the window's run ended {run.state}: {c.last_error}")
        rate, n = rate_of(Path(run.run_dir))
        ticks = self.ticks
        t0 = self.started or t
        late = [1e3 * (b - a) - 10.0 for a, b in zip(ticks, ticks[1:]) if a >= t0]
        late_all = [1e3 * (b - a) - 10.0 for a, b in zip(ticks, ticks[1:])]
        drawn = {k: (v - (before[k] or 0)) if v is not None else None
                 for k, v in _chart_counts(c.charts.panel).items()}
        return {"tokens_per_s": rate, "records": n, "wall_s": wall,
                "gui_thread_cpu_pct": round(100 * cpu / wall, 1),
                "chart_cpu_pct": None if drawn["cpu"] is None else
                round(100 * drawn["cpu"] / wall, 1),
                "start_record_after_s": round(t0 - t, 2),
                "chart_redraws_skipped": drawn["skipped"],
                "timer_late_ms": _pct(late), "timer_late_ms_incl_startup": _pct(late_all),
                "chart_lag_s": _pct(self.lags, 3), "chart_at_end": end,
                "chart_points": len(run.series["loss"]),
                "chart_redraws": drawn["redraws"],
                "device_samples": getattr(c.device.panel, "samples", 0)}

    def _catch_up(self, limit_s: float = 10.0) -> dict:
        """After the run's end: where the loss curve stood when it was announced, and the
        seconds until it showed the last record (the event loop runs meanwhile)."""
        from PySide6.QtCore import QCoreApplication, QEventLoop
        end = dict(self.at_end)
        if not end or end["last_step"] is None:
            return end
        while self._drawn_step() < end["last_step"] and \
                time.perf_counter() - end["at"] < limit_s:
            QCoreApplication.processEvents(QEventLoop.AllEvents, 10)
            time.sleep(0.002)
        caught = self._drawn_step() >= end["last_step"]
        end["caught_up_after_s"] = round(time.perf_counter() - end["at"], 3) if caught else None
        del end["at"]
        return end

    def close(self) -> None:
        self.w.doc.stack.setClean()
        self.w.close()
        self.tmp.cleanup()


def _chart_counts(charts) -> dict:
    """The charts' redraws, waits and drawing CPU seconds so far (this run's: the difference)."""
    pacer = getattr(charts, "pacer", None)  # (charts from before the pacer have no CPU count)
    return {"redraws": getattr(charts, "redraws", 0), "skipped": getattr(charts, "skipped", 0),
            "cpu": pacer.spent if pacer is not None else None}


def _pct(values: list[float], digits: int = 2) -> dict:
    if not values:
        return {}
    v = sorted(values)

    def at(q):
        return round(max(0.0, v[min(len(v) - 1, int(round(q * (len(v) - 1))))]), digits)
    return {"ticks": len(v), "p50": at(0.5), "p99": at(0.99), "max": at(1.0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", default=str(PROJECT))
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per run (default: 60 on the CPU, 3000 on CUDA)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--engine", choices=("cudnn", "caffe"), default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup-steps", type=int, default=None,
                    help="steps of the untimed first runs (default: 20 on the CPU, 300 on CUDA)")
    a = ap.parse_args()
    cuda = a.device == "cuda"
    a.steps = a.steps or (3000 if cuda else 60)
    a.warmup_steps = a.warmup_steps or (300 if cuda else 20)
    project = Path(a.project).resolve()
    runs = Path(tempfile.mkdtemp(prefix="bench-gui-train-"))
    os.environ["RNN_DESIGNER_RUNS"] = str(runs / "window")
    import torch  # imported only: no kernel runs in this thread
    info = {"project": str(project.relative_to(ROOT) if project.is_relative_to(ROOT) else
                           project), "steps": a.steps, "device": a.device,
            "engine": a.engine or "as drawn", "repeats": a.repeats,
            "torch": torch.__version__, "threads": torch.get_num_threads(),
            "gpu": torch.cuda.get_device_name() if a.device == "cuda" else None}
    print(json.dumps({"setup": info}), flush=True)
    window = Window(project, a.device, a.engine)
    headless(project, a.warmup_steps, a.device, a.engine, runs / "warmup")
    window.train(a.warmup_steps)
    results = {"headless": [], "window": [], "window_probed": []}
    for i in range(a.repeats):
        h = headless(project, a.steps, a.device, a.engine, runs / f"headless-{i}")
        w = window.train(a.steps, probe=False)
        p = window.train(a.steps, probe=True)
        for key, value in (("headless", h), ("window", w), ("window_probed", p)):
            results[key].append(value)
        print(json.dumps({"repeat": i, "headless": h, "window": w, "window_probed": p}),
              flush=True)
    window.close()

    def median(kind):
        return statistics.median(r["tokens_per_s"] for r in results[kind])

    hs, ws, ps = median("headless"), median("window"), median("window_probed")
    late = [r["timer_late_ms"] for r in results["window_probed"]]
    lags = [r["chart_lag_s"] for r in results["window_probed"] if r["chart_lag_s"]]
    ends = [r["chart_at_end"] for kind in ("window", "window_probed") for r in results[kind]]
    print(json.dumps({"summary": {
        "headless_tokens_per_s": round(hs, 1), "window_tokens_per_s": round(ws, 1),
        "ratio_window_to_headless": round(ws / hs, 4),
        "ratios_per_repeat": [round(w["tokens_per_s"] / h["tokens_per_s"], 4)
                              for h, w in zip(results["headless"], results["window"])],
        "window_probed_tokens_per_s": round(ps, 1), "ratio_probed_to_headless": round(ps / hs, 4),
        "gui_timer_10ms_late_ms_worst_run": {"p50": max(x["p50"] for x in late),
                                             "p99": max(x["p99"] for x in late),
                                             "max": max(x["max"] for x in late)},
        "chart_lag_s_worst_run": {"p50": max(x["p50"] for x in lags),
                                  "p99": max(x["p99"] for x in lags),
                                  "max": max(x["max"] for x in lags)} if lags else None,
        "chart_caught_up_after_end_s_worst": max(
            (e.get("caught_up_after_s") if e.get("caught_up_after_s") is not None
             else float("inf")) for e in ends) if ends else None,
        "runs_folder": str(runs)}}), flush=True)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
