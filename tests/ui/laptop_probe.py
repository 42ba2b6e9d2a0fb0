"""The window on a real screen, view by view: Design, Train with two runs, Inspect, Unrolled,
Generate, Experiments after a search, and New from Data. After each it notes the window's frame,
the screen's available geometry, and every plot and table in sight with its height; it prints
them as one JSON object. tests/ui/test_laptop_screens.py runs it under Xvfb (with a window
manager) at 1366x768 and at 1440x900.

    DISPLAY=:1 QT_QPA_PLATFORM=xcb python tests/ui/laptop_probe.py [--shots DIR]

The runs are run folders of metrics only and the study a real Optuna study of made-up trials
(tests/ui/experiments_fakes.py): no net trains, so it takes seconds.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CSV = "time,co2,temperature\n" + "".join(f"{2000 + i / 12:.3f},{350 + i * 0.1 + (i % 12):.2f},"
                                         f"{10 + (i % 12):.1f}\n" for i in range(240))


def pump(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def wait_until(app, check, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            return False
        app.processEvents()
        time.sleep(0.02)
    return True


def in_sight(widget) -> bool:
    """Shown and not hidden behind another tab or window (a scroll area by its viewport)."""
    area = widget.viewport() if hasattr(widget, "viewport") else widget
    return widget.isVisible() and not area.visibleRegion().isEmpty()


def key(widget, top) -> str:
    """A name for ``widget`` that is the same on every screen: its class and those of the
    widgets above it, each with its place among its brothers of the same class."""
    parts = []
    w = widget
    while w is not None and w is not top:
        parent = w.parentWidget()
        if w.objectName() and not w.objectName().startswith("qt_"):
            parts.append(w.objectName())
        else:
            same = [c for c in (parent.children() if parent is not None else [])
                    if type(c) is type(w)]
            parts.append(f"{type(w).__name__}{same.index(w) if w in same else 0}")
        w = parent
    return "/".join(reversed(parts))


def plots_and_tables(top) -> dict:
    """Every pyqtgraph view and every table (a list with a header) in sight: its height. A
    plot of a fixed height (the device's small plots) is named "sparkline", not "plot"."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsView, QTableView, QTreeView
    found = {}
    for w in top.findChildren(QGraphicsView):
        if isinstance(w, pg.GraphicsView) and in_sight(w):
            fixed = w.minimumHeight() == w.maximumHeight()
            found[("sparkline " if fixed else "plot ") + key(w, top)] = w.height()
    for w in top.findChildren(QTableView) + top.findChildren(QTreeView):
        header = w.horizontalHeader() if isinstance(w, QTableView) else w.header()
        if in_sight(w) and not header.isHidden() and w.model() is not None \
                and w.model().columnCount() > 1:
            found["table " + key(w, top)] = w.height()
    return found


def look(window, app, top=None) -> dict:
    top = top or window
    frame, area = top.frameGeometry(), top.screen().availableGeometry()
    seen = {"frame": frame.getRect(), "available": area.getRect(),
            "inside": area.contains(frame), "items": plots_and_tables(top)}
    if getattr(window, "inspect_view", None) is not None and top is window and \
            in_sight(window.inspect_view):
        seen["items"]["inspect heatmap"] = round(window.inspect_view.charts.heat.height())
    if top is window:
        seen["canvas"] = window.view.height() if in_sight(window.view) else None
        seen["workspace"] = window.workspace
    return seen


def restored_from_a_larger_monitor(app, folder: Path) -> dict:
    """A window whose kept geometry was 1900x1150 at (300, 200), on a monitor larger than
    this screen: where it opens."""
    from PySide6.QtCore import QSettings

    from designer.ui.shell.main_window import MainWindow
    settings = QSettings(str(folder / "big.ini"), QSettings.IniFormat)
    settings.setValue("problems/smoke_step", False)
    big = MainWindow(settings=settings, restore=False, on_screen=False)
    big.setMinimumSize(0, 0)
    big.resize(1900, 1150)
    big.move(300, 200)
    settings.setValue("window/geometry", big.saveGeometry())
    big.deleteLater()
    again = MainWindow(settings=settings)
    again.show()
    pump(app, 0.9)
    seen = look(again, app)
    again.close()
    return seen


def main(shots: str | None = None) -> int:
    from PySide6.QtCore import QSettings

    from designer.ui.shell.app import make_app
    from designer.ui.look import theme
    app = make_app()
    theme.apply(app, "light")
    folder = Path(tempfile.mkdtemp(prefix="laptop-probe-"))
    os.environ["RNN_DESIGNER_RUNS"] = str(folder / "runs")
    from designer.ui.sequences.menu import new_from_data
    from designer.ui.shell import actions
    from designer.ui.shell.main_window import MainWindow
    from tests.ui.conftest import tiny_project
    from tests.ui.experiments_fakes import fake_run, make_study, search_project
    project = tiny_project(folder)
    runs = [fake_run(folder / f"run-{i}", json.loads(project.read_text()), loss)
            for i, loss in ((1, 1.9), (2, 1.6))]
    (folder / "s").mkdir()
    studied = search_project(folder / "s")
    make_study(studied, 8)
    (folder / "co2.csv").write_text(CSV)

    settings = QSettings(str(folder / "settings.ini"), QSettings.IniFormat)
    settings.setValue("problems/smoke_step", False)
    w = MainWindow(settings=settings, restore=False)
    w.notify = w.alert = lambda *a, **k: None
    w.show()
    pump(app, 0.9)  # the window manager frames it; the window settles inside the screen
    report = {}

    def note(name: str, top=None) -> None:
        pump(app, 0.3)
        report[name] = look(w, app, top)
        if shots:
            (top or w).screen().grabWindow(0).save(str(Path(shots) / f"{name}.png"))

    w.files.open_path(project, confirmed=True)
    note("design")
    for run in runs:
        w.training.charts.add_folder(str(run))
    w.switch_workspace("train")
    device = w.training.device  # a reading's plot shows once the monitor reports it (CPU
    wait_until(app, lambda: device.panel is not None and device.panel.samples >= 2)  # %: 2nd)
    note("train")
    w.show_inspect(w.training.runs.runs[-1] if hasattr(w.training.runs, "runs")
                   else list(w.training.runs)[-1])
    note("inspect")
    w.switch_workspace("design")
    w.scene.select_layers(["lstm1"])
    w.show_unrolled("lstm1")
    note("unrolled")
    actions.show_generate(w)
    note("generate")
    w.files.open_path(studied, confirmed=True)
    view = w.show_experiments()
    wait_until(app, lambda: len(view.rows) == 8)
    note("experiments")
    dialog = new_from_data(w, folder / "co2.csv")
    wait_until(app, lambda: dialog.preview is not None)
    note("new_from_data", dialog)
    dialog.reject()
    w.doc.stack.setClean()
    w.close()
    report["restored"] = restored_from_a_larger_monitor(app, folder)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[args.index("--shots") + 1] if "--shots" in args else None))
