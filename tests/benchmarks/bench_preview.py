"""New from Data on a large CSV: how soon the first rows show, how long the whole file takes to
read, and the longest the window's event loop goes without running while it is read (offscreen).

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_preview.py [--rows 2000000]

A table of ``--rows`` rows (a date, three numbers, one cell in 1,000 empty) is written to a
temporary folder, then picked in the real dialog. A 5 ms timer ticks in the GUI thread the
whole time; the longest gap between two ticks is how long the window could not answer.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def write_table(path: Path, rows: int) -> None:
    import datetime as dt
    start = dt.datetime(2000, 1, 1)
    with open(path, "w") as f:
        f.write("time,load,temp,price\n")
        for i in range(rows):
            when = (start + dt.timedelta(hours=i)).strftime("%Y-%m-%d %H:00")
            load = "" if i % 1000 == 7 else f"{500 + (i * 37) % 211 * 0.5:.1f}"
            f.write(f"{when},{load},{10 + (i % 24) * 0.3:.1f},{40 + (i * 13) % 97 * 0.1:.2f}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    a = ap.parse_args()
    from PySide6.QtCore import QTimer
    from designer.ui.app import make_app
    from designer.ui.sequences.new_from_data import NewFromDataDialog
    app = make_app()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        write_table(path, a.rows)
        size = path.stat().st_size
        dialog = NewFromDataDialog(tmp)
        dialog.show()
        app.processEvents()
        gaps, last = [0.0], [time.perf_counter()]

        def tick() -> None:
            now = time.perf_counter()
            gaps[0] = max(gaps[0], now - last[0])
            last[0] = now

        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(5)
        seen: dict = {}
        t0 = time.perf_counter()
        dialog.set_data_path(path)
        call_ms = 1e3 * (time.perf_counter() - t0)
        while "scanned" not in seen:
            app.processEvents()
            look = dialog.preview
            if look is not None and "head" not in seen:
                seen["head"] = time.perf_counter() - t0
            if look is not None and look.scanned:
                seen["scanned"] = time.perf_counter() - t0
            if dialog.error:
                raise SystemExit(dialog.error)
            time.sleep(0.001)
        timer.stop()
        print(json.dumps({
            "rows": a.rows, "mib": round(size / 2**20, 1),
            "set_data_path_ms": round(call_ms, 1),
            "first_rows_shown_ms": round(1e3 * seen["head"], 1),
            "whole_file_read_s": round(seen["scanned"], 2),
            "rows_per_s": round(a.rows / seen["scanned"]),
            "longest_event_loop_gap_ms": round(1e3 * gaps[0], 1),
            "summary": dialog.summary.text()}))
        dialog.done(0)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
