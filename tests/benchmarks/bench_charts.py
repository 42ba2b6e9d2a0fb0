"""Chart memory and redraw time as a run's curves grow to a million points (offscreen).

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_charts.py [--points 3000000]

One run is fed train records (a noisy falling loss, lr, noisy tokens/s) into the real
`MainWindow`'s charts, as the training loop would, in stages (1k, 10k, 100k, 1M, 3M points). At each stage: the points a series
holds, the bytes of its numpy buffers (all three metrics), the process's resident memory, and
the GUI thread's CPU time for one redraw (``refresh`` and the paints it causes), median of 7.
A series keeps at most 200,000 points (it thins its older half past that), so memory stays
flat; clipping to the view and peak downsampling keep the redraw bounded.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def rss_mib() -> float:
    import psutil
    return psutil.Process().memory_info().rss / 2**20


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=3_000_000)
    a = ap.parse_args()
    from PySide6.QtCore import QSettings
    from designer.ui.runs.run import Run
    from designer.ui.shell.app import make_app
    from designer.ui.shell.main_window import MainWindow
    app = make_app()
    tmp = tempfile.mkdtemp()
    w = MainWindow(settings=QSettings(f"{tmp}/b.ini", QSettings.IniFormat), restore=False)
    w.show()
    w.training.show_docks()
    charts = w.training.charts.panel
    run = w.training.runs.add(Run(w.training.runs.next_number(), "long run", None))
    for _ in range(10):
        app.processEvents()

    def redraw_ms() -> float:
        times = []
        for _ in range(7):
            run.series["loss"].version += 1  # as if a record had arrived
            t = time.thread_time()
            charts.refresh()
            for _ in range(3):
                app.processEvents()
            times.append(time.thread_time() - t)
        return round(1e3 * statistics.median(times), 2)

    fed = 0
    for stage in (1_000, 10_000, 100_000, 1_000_000, 3_000_000):
        if stage > a.points:
            break
        for i in range(fed, stage):
            run.add({"kind": "train", "step": i + 1, "loss": 3 + math.sin(i / 500) / (1 + i / 1e5) + 0.05 * math.sin(1.7 * i),
                     "lr": 2e-3, "tokens_per_s": 5e4 + 100 * math.sin(i), "time": i * 0.01})
        fed = stage
        s = run.series["loss"]
        print(json.dumps({"points_fed": stage, "points_held": len(s),
                          "buffers_mib": round(sum(x.nbytes for x in run.series.values()) / 2**20, 2),
                          "process_rss_mib": round(rss_mib(), 1), "redraw_ms": redraw_ms()}),
              flush=True)
    w.doc.stack.setClean()
    w.close()


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
