"""Benchmarks of the designer window (offscreen).

QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_ui.py [--starts 7] [--moves 120]

- ``startup``: from launching ``python -m designer gui projects/char-rnn-shakespeare.json`` in a
  fresh process to the window shown and painted with the project loaded (the app's startup
  probe prints the time and quits), several times.
- ``unrolled``: expanding lstm1 of the cuDNN Char-RNN (2 layers x 75 steps, 609 nodes, 1,350
  edges), laying it out, creating the items and painting the first frame, all steps unfolded;
  also one full repaint with the whole expansion in view.
- ``drag``: a scripted drag of one node, one mouse move at a time, each followed by a
  synchronous repaint of the view: in the designer canvas with a generated 600-layer graph,
  and in the 609-node unrolled view. Figures are per move (event handling + painting).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data"))
PROJECT = ROOT / "projects" / "char-rnn-shakespeare.json"


def ms(seconds: float) -> float:
    return round(seconds * 1e3, 1)


def summary(values: list[float]) -> dict:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return {"median_ms": ms(statistics.median(values)), "p95_ms": ms(p95),
            "max_ms": ms(values[-1])}


def startup(starts: int) -> dict:
    """Seconds from process launch to the painted window, in fresh processes."""
    env = dict(os.environ, RNN_DESIGNER_STARTUP_PROBE="1", PYTHONPATH=str(ROOT))
    times, heavy = [], set()
    for _ in range(starts):
        t0 = time.time()
        out = subprocess.run([sys.executable, "-m", "designer", "gui", str(PROJECT)],
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        line = next(x for x in out.stdout.splitlines() if x.startswith("visible "))
        times.append(float(line.split()[1]) - t0)
        heavy |= set(line.split()[2].split(",")) - {"-"}
    return {"runs": starts, **summary(times), "torch_or_pyqtgraph_imported": sorted(heavy)}


def _app():
    from designer.ui.shell.app import make_app
    return make_app()


def _mouse(widget, kind, pos, buttons):
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication
    button = Qt.LeftButton if kind != QMouseEvent.MouseMove else Qt.NoButton
    QApplication.sendEvent(widget, QMouseEvent(kind, QPointF(pos), QPointF(
        widget.mapToGlobal(pos)), button, buttons, Qt.NoModifier))


def _drag(view, start, moves: int, full: bool = True) -> list[float]:
    """Press at ``start``; move right and down one step at a time; time each move and the
    frame after it: a repaint of the whole view (``full``), or Qt's own partial update."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication
    vp = view.viewport()
    _mouse(vp, QMouseEvent.MouseButtonPress, start, Qt.LeftButton)
    times = []
    for i in range(1, moves + 1):
        p = start + QPoint(3 * i, 2 * (i % 20))
        t0 = time.perf_counter()
        _mouse(vp, QMouseEvent.MouseMove, p, Qt.LeftButton)
        if full:
            vp.repaint()
        else:
            QApplication.processEvents()
        times.append(time.perf_counter() - t0)
    _mouse(vp, QMouseEvent.MouseButtonRelease, start + QPoint(3 * moves, 0), Qt.NoButton)
    return times


def unrolled(moves: int) -> dict:
    from PySide6.QtWidgets import QApplication

    from designer.graph import project as P
    from designer.ui.editor.document import Document
    from designer.ui.unrolled.view import UnrolledView
    app = _app()
    doc = Document(P.load(PROJECT))
    builds, paints, fits = [], [], []
    for _ in range(5):
        t0 = time.perf_counter()
        view = UnrolledView(doc, "lstm1")
        view.resize(1400, 800)
        view.expand_all()
        view.show()
        t1 = time.perf_counter()
        QApplication.processEvents()
        view.canvas.viewport().repaint()
        t2 = time.perf_counter()
        view.fit()
        t3 = time.perf_counter()
        view.canvas.viewport().repaint()
        t4 = time.perf_counter()
        builds.append(t1 - t0), paints.append(t2 - t0), fits.append(t4 - t3)
        last = view
        if _ < 4:
            view.close()
            view.deleteLater()
            QApplication.processEvents()
    view = last
    view.show_start()
    QApplication.processEvents()
    item = view.nodes["L0/unit_2"]
    start = view.canvas.mapFromScene(item.sceneBoundingRect().center())
    drag = _drag(view.canvas, start, moves)
    start = view.canvas.mapFromScene(view.nodes["L1/unit_3"].sceneBoundingRect().center())
    partial = _drag(view.canvas, start, moves, full=False)
    view.close()
    app.processEvents()
    return {"nodes": len(view.exp.nodes), "edges": len(view.exp.edges()),
            "build_ms": ms(statistics.median(builds)),
            "build_and_first_paint_ms": ms(statistics.median(paints)),
            "repaint_whole_expansion_ms": ms(statistics.median(fits)),
            "drag_per_move_full_repaint": summary(drag),
            "drag_per_move_partial_update": summary(partial)}


def canvas(layers: int, moves: int) -> dict:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from designer.graph import project as P
    from designer.ui.shell.main_window import MainWindow
    from tests.benchmarks.bench_graph import generated
    _app()
    data = generated(layers)
    for i, layer in enumerate(data["graph"]["layers"]):  # 30 columns of 20, read down
        layer["pos"] = [250 * (i // 20), 110 * (i % 20)]
    proj = P.loads(P.dumps(data).encode())
    links = len(proj.graph.links())
    t0 = time.perf_counter()
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    w = MainWindow(settings=QSettings(str(ini), QSettings.IniFormat), restore=False)
    w.doc.replace(proj)
    w.show()
    QApplication.processEvents()
    w.view.viewport().repaint()
    shown = time.perf_counter() - t0
    name = f"l{layers // 2}"
    w.view.set_zoom(1.0)
    w.view.centre_on_layer(name)
    QApplication.processEvents()
    node = w.scene.node(name)
    proj_pos = w.doc.graph.layer(name).pos
    start = w.view.mapFromScene(node.sceneBoundingRect().center())
    drag = _drag(w.view, start, moves)
    assert w.doc.stack.count() == 1, "the drag should be one undo step"
    assert w.doc.graph.layer(name).pos != proj_pos, "the node should have moved"
    drag_partial_100 = _drag(w.view, w.view.mapFromScene(
        w.scene.node(name).sceneBoundingRect().center()), moves, full=False)
    w.view.fit()
    QApplication.processEvents()
    start = w.view.mapFromScene(w.scene.node(name).sceneBoundingRect().center())
    drag_all = _drag(w.view, start, moves // 2)
    start = w.view.mapFromScene(w.scene.node(name).sceneBoundingRect().center())
    drag_partial = _drag(w.view, start, moves // 2, full=False)
    assert w.doc.stack.count() == 4 and len(w.doc.graph.links()) == links, "four moves"
    w.doc.stack.setClean()
    w.close()
    ini.unlink(missing_ok=True)
    return {"layers": layers, "links": links, "zoom_all_in_view": round(w.view.zoom(), 3),
            "open_and_first_paint_ms": ms(shown),
            "drag_per_move_zoom_100_full_repaint": summary(drag),
            "drag_per_move_zoom_100_partial_update": summary(drag_partial_100),
            "drag_per_move_all_in_view_full_repaint": summary(drag_all),
            "drag_per_move_all_in_view_partial_update": summary(drag_partial)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=7)
    ap.add_argument("--moves", type=int, default=120)
    ap.add_argument("--only", choices=("startup", "unrolled", "canvas"))
    a = ap.parse_args()
    if a.only in (None, "startup"):
        print(json.dumps({"startup_to_visible": startup(a.starts)}))
    if a.only in (None, "unrolled"):
        print(json.dumps({"unrolled_view": unrolled(a.moves)}))
    if a.only in (None, "canvas"):
        print(json.dumps({"canvas_600_layers": canvas(600, a.moves)}))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
