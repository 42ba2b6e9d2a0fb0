"""Benchmark: from an edit in the window to the problems updating, and to the smoke step's
result, on the Char-RNN and on a generated 2,000-layer graph.

QT_QPA_PLATFORM=offscreen RNN_DESIGNER_DATA=../shared/data \
    python tests/benchmarks/bench_problems.py [--repeat 5]

Each edit is made through the document (as the property form does), then events are processed
until the Problems panel has listed the new problems; the smoke step's time is from the same
edit to its result (the 400 ms pause that waits for a burst of edits to end included).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from designer.graph import project as P  # noqa: E402
from designer.ui.shell.app import make_app  # noqa: E402
from designer.ui.shell.main_window import MainWindow  # noqa: E402
from tests.benchmarks.bench_graph import generated  # noqa: E402


def until(check, timeout: float = 60.0) -> float:
    t0 = time.perf_counter()
    while not check():
        QApplication.processEvents(QEventLoop.AllEvents, 5)
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError
    return time.perf_counter() - t0


def rows(w) -> list[str]:
    p = w.problems
    return [p.topLevelItem(i).text(1) for i in range(p.topLevelItemCount())]


def edit_to_problems(w, edits, repeat: int, smoke: bool) -> dict:
    """Median ms per kind of edit: to the Problems panel listing the new state (an error
    row holding ``marker``, or none), and to the smoke step's result."""
    seen = {"errors": None}
    w.problems.count_changed.connect(lambda e, _w: seen.update(errors=e))
    out: dict[str, list[float]] = {}
    for i in range(repeat):
        for label, name, key, value, marker in edits(i):
            seen["errors"] = None
            t0 = time.perf_counter()
            w.doc.set_param(name, key, value)
            if marker:
                until(lambda: seen["errors"] and any(marker in t for t in rows(w)))
            else:
                until(lambda: seen["errors"] == 0)
            out.setdefault(label, []).append((time.perf_counter() - t0) * 1e3)
            if smoke and marker is None:
                w.smoke.wait()
                out.setdefault(label + " -> smoke result", []).append(
                    (time.perf_counter() - t0) * 1e3)
    return {k: round(statistics.median(v), 1) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    app = make_app()
    settings = QSettings(str(Path("/tmp") / "bench-problems.ini"), QSettings.IniFormat)
    settings.clear()
    w = MainWindow(settings=settings, restore=False)
    w.files.open_path(ROOT / "projects" / "char-rnn-shakespeare.json")
    w.show()
    w.smoke.wait()  # torch imported and the first step done
    results = {}

    def char_rnn(i):
        return [("valid edit", "lstm1", "dropout_ratio", 0.2 + 0.01 * (i % 5), None),
                ("edit making an error", "ip1", "num_output", 10,
                 "set ip1's num_output to V"),
                ("edit mending it", "ip1", "num_output", "V", None)]
    results["char_rnn"] = edit_to_problems(w, char_rnn, a.repeat, smoke=True)

    big = P.from_dict(generated(2000))
    w.doc.replace(big)
    w.smoke.wait()
    last_ip = [n for n in big.graph.names() if big.graph.layer(n).type == "InnerProduct"][-1]

    def large(i):
        return [("edit at the top (1,999 layers re-inferred)", "embed", "num_output",
                 32 + i % 2, None),
                ("edit making an error at the bottom", last_ip, "axis", 1, "set axis to 2"),
                ("edit mending it", last_ip, "axis", 2, None)]
    results["graph_2000"] = edit_to_problems(w, large, a.repeat, smoke=False)
    results["graph_2000"]["smoke"] = w.smoke.wait()["message"]
    print(json.dumps(results))
    w.doc.stack.setClean()
    w.close()


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
