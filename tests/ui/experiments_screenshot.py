"""The README's picture of the Experiments view: a real small search (the tests' tiny
Char-RNN, 16 trials of 40 steps on the CPU, val_loss against ms/step), opened in the window.

    QT_QPA_PLATFORM=offscreen python tests/ui/experiments_screenshot.py \
        resources/screenshots/experiments.png
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(out: str, trials: int = 16) -> int:
    from PySide6.QtCore import QSettings

    from designer.ui.shell.app import make_app
    from tests.ui.experiments_fakes import search_project
    folder = Path(tempfile.mkdtemp(prefix="experiments-"))
    os.environ["RNN_DESIGNER_RUNS"] = str(folder / "app-runs")
    project = search_project(folder, "char-rnn")
    subprocess.run([sys.executable, "-m", "designer", "search", str(project), "--json",
                    "--trials", str(trials), "--device", "cpu", "--steps", "40",
                    "--objective", "val_loss,ms_per_step", "--seed", "1"], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL)
    app = make_app()
    from designer.ui.shell.main_window import MainWindow
    settings = QSettings(str(folder / "settings.ini"), QSettings.IniFormat)
    settings.setValue("problems/smoke_step", False)
    window = MainWindow(settings=settings, restore=False)
    window.resize(1400, 1000)
    window.show()
    window.files.open_path(project, confirmed=True)
    view = window.experiments_view
    read = []
    view.study_read.connect(read.append)
    deadline = time.time() + 120
    while not read and time.time() < deadline:
        app.processEvents()
        time.sleep(0.02)
    for dock in window.findChildren(type(window.charts_dock)):
        dock.hide()
    window.tabs.setCurrentWidget(view)
    view.split.setSizes([370, 520])
    view.table.select_number(view.best().number)
    view.table.scrollToTop()
    for _ in range(30):
        app.processEvents()
        time.sleep(0.02)
    ok = view.grab().save(out, "PNG")
    print(f"wrote {out}: {view.width()}x{view.height()}, {len(view.rows)} trials")
    window.doc.stack.setClean()
    view.shutdown()
    window.close()
    return 0 if ok else 1


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "experiments.png"))
