"""The window under a real X server, driven by real clicks: Xvfb at a laptop's size with the
openbox window manager; xdotool moves the pointer, clicks and types, as a user does. It goes
through Design, Train with two runs, Inspect, Unrolled, Generate, Experiments after a search and
New from Data, saves a picture of the screen after each, and says whether the window's frame
stayed inside the screen's available geometry.

    python tests/benchmarks/window_clicks.py                    # 1366x768 and 1440x900
    python tests/benchmarks/window_clicks.py --size 1366x768 --out /tmp/shots

Pictures go to resources/screenshots/laptop/<size>-<view>.png by default. The nets are the
Char-RNN example made small for a CPU (one LSTM level of 128 units, a few hundred steps): the
whole tour takes a few minutes on 2 cores. Needs xvfb, openbox, xdotool and x11-utils (Debian).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SIZES = ("1366x768", "1440x900")
OUT = ROOT / "resources" / "screenshots" / "laptop"
STEPS = 300          # each run's steps (a few seconds each on a CPU)
SEARCH = {"lstm1.num_output": {"int": [32, 192], "step": 32},
          "embed.num_output": {"choice": [15, 32]},
          "solver.base_lr": {"float": [0.001, 0.01], "log": True}}


# ------------------------------------------------------------------------------ the parent --
def main(argv: list[str]) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--size", action="append", choices=SIZES)
    args.add_argument("--out", default=str(OUT))
    args.add_argument("--drive", help=argparse.SUPPRESS)  # the child, on the X server
    a = args.parse_args(argv)
    if a.drive:
        return drive(a.drive, Path(a.out))
    from tests.ui.xserver import PACKAGES, missing, x_screen
    if missing():
        print(f"window_clicks: {', '.join(missing())} not found: apt-get install {PACKAGES}",
              file=sys.stderr)
        return 2
    Path(a.out).mkdir(parents=True, exist_ok=True)
    code = 0
    for size in a.size or SIZES:
        width, height = (int(v) for v in size.split("x"))
        start = time.monotonic()
        with x_screen(width, height) as env:
            env.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data"))
            env["RNN_DESIGNER_OFFLINE"] = "1"
            out = subprocess.run([sys.executable, __file__, "--drive", size, "--out", a.out],
                                 env=env, cwd=ROOT, capture_output=True, text=True)
        sys.stderr.write(out.stderr[-3000:] if out.returncode else "")
        report = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        for r in report:
            print(f"{size} {r['view']:<14} frame {r['frame']} inside {r['inside']}  {r['shot']}")
        print(f"{size}: {len(report)} views in {time.monotonic() - start:.0f} s, "
              f"{'every' if all(r['inside'] for r in report) else 'NOT every'} frame inside the "
              "screen")
        code = code or out.returncode or int(not all(r["inside"] for r in report))
    return code


# ------------------------------------------------------------------------------- the child --
class Tour:
    """The app on the X server, and the user's hands (xdotool)."""

    def __init__(self, size: str, out: Path) -> None:
        from PySide6.QtCore import QSettings

        from designer.ui.look import theme
        from designer.ui.shell.app import make_app
        self.app = make_app()
        theme.apply(self.app, "light")
        self.size, self.out = size, out
        self.folder = Path(tempfile.mkdtemp(prefix="window-clicks-"))
        os.environ["RNN_DESIGNER_RUNS"] = str(self.folder / "runs")
        from designer.ui.shell.main_window import MainWindow
        settings = QSettings(str(self.folder / "settings.ini"), QSettings.IniFormat)
        settings.setValue("problems/smoke_step", False)
        self.w = MainWindow(settings=settings, restore=False)
        self.w.notify = lambda *a, **k: None

    # ---- time passing, hands, eyes ---------------------------------------------------------
    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def until(self, check, timeout: float = 120.0) -> bool:
        end = time.monotonic() + timeout
        while not check():
            if time.monotonic() > end:
                return False
            self.app.processEvents()
            time.sleep(0.02)
        return True

    def xdotool(self, *words) -> None:
        """Run xdotool while the window goes on answering events."""
        proc = subprocess.Popen(["xdotool", *map(str, words)])
        self.until(lambda: proc.poll() is not None, 20)
        self.pump(0.25)

    def click(self, widget, at=None) -> None:
        """A real click at the middle of ``widget`` (or at ``at``, in its coordinates)."""
        point = widget.mapToGlobal(at if at is not None else widget.rect().center())
        self.xdotool("mousemove", "--sync", point.x(), point.y(), "click", "1")

    def key(self, keys: str) -> None:
        self.xdotool("key", "--clearmodifiers", keys)

    def button(self, action):
        """The tool button of a toolbar action."""
        for bar in (self.w.main_toolbar, self.w.train_toolbar):
            widget = bar.widgetForAction(action)
            if widget is not None:
                return widget
        raise LookupError(action.text())

    def workspace_button(self, name: str):
        """A workspace's button, at the right of the menu bar."""
        from PySide6.QtWidgets import QToolButton
        return self.w.findChild(QToolButton, f"workspace_{name}")

    def shot(self, view: str, top=None) -> None:
        self.pump(0.6)
        top = top or self.w
        frame, area = top.frameGeometry(), top.screen().availableGeometry()
        path = self.out / f"{self.size}-{view}.png"
        image = top.screen().grabWindow(0).toImage()
        image.save(str(path), "PNG", 9)
        print(json.dumps({"view": view, "frame": frame.getRect(), "inside":
                          area.contains(frame), "shot": str(path)}), flush=True)

    # ---- the tour ---------------------------------------------------------------------------
    def project(self) -> Path:
        """The Char-RNN example, small enough to train a few hundred steps on a CPU."""
        from designer.graph.project import load
        p = load(ROOT / "projects" / "char-rnn-shakespeare.json")
        p.graph.set_param("lstm1", "num_output", 128)
        p.graph.set_param("lstm1", "num_layers", 1)
        p.graph.set_param("lstm1", "dropout_ratio", 0.0)
        p.solver.update(max_steps=STEPS, warmup_steps=20, base_lr=0.004)
        p.training.update(eval_interval=100, eval_batches=8, checkpoint_interval=100,
                          sample_interval=100, log_interval=10)
        p.search = SEARCH
        p.name = "Char-RNN Shakespeare (small)"
        return p.save(self.folder / "char-rnn-small.json")

    def train(self) -> None:
        w = self.w
        ended = []
        w.training.run_ended.connect(ended.append)
        self.click(self.button(w.act.train))
        self.until(lambda: ended, 600)
        w.training.run_ended.disconnect(ended.append)

    def run(self) -> None:
        w = self.w
        w.show()
        self.pump(1.5)  # framed by openbox, placed inside the screen
        w.files.open_path(self.project(), confirmed=True)
        self.click(self.button(w.act.fit))
        self.shot("design")

        self.train()
        w.doc.set_setting("solver", "base_lr", 0.008)  # as typed in Properties > Solver
        self.train()
        self.shot("train")

        self.click(self.workspace_button("inspect"))
        view = w.inspect_view
        self.until(lambda: view.result is not None, 180)
        view.quantity.setCurrentIndex(max(0, view.quantity.findData("c")))
        self.shot("inspect")

        self.click(w.tabs.tabBar(), w.tabs.tabBar().tabRect(0).center())  # the Design tab
        node = w.scene.node("lstm1")
        at = w.view.mapFromScene(node.sceneBoundingRect().center())
        self.click(w.view.viewport(), at)
        self.click(self.button(w.act.unrolled))
        self.shot("unrolled")

        self.click(w.tabs.tabBar(), w.tabs.tabBar().tabRect(0).center())  # the Design tab
        self.key("ctrl+g")  # Generate: the Output dock's Generate panel, in Train
        panel = w.training.output.generate
        panel.length.setValue(400)
        busy = []
        panel.busy_changed.connect(busy.append)
        self.click(panel.go)
        self.until(lambda: busy and not busy[-1], 120)
        self.shot("generate")

        self.click(self.workspace_button("experiments"))
        ex = w.experiments_view

        def fill_the_dialog() -> None:  # the Search dialog is modal: answered from inside it
            from PySide6.QtWidgets import QApplication, QDialogButtonBox
            dialog = QApplication.activeModalWidget()
            if dialog is None:
                return
            dialog.trials.setValue(6)
            dialog.steps.setValue(60)
            dialog.device.setCurrentIndex(dialog.device.findData("cpu"))
            ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.Ok)
            point = ok.mapToGlobal(ok.rect().center())
            subprocess.Popen(["xdotool", "mousemove", "--sync", str(point.x()),
                              str(point.y()), "click", "1"])

        from PySide6.QtCore import QTimer
        QTimer.singleShot(1500, fill_the_dialog)
        ended = []
        ex.search_ended.connect(ended.append)
        self.click(ex.search_button)
        self.until(lambda: ended, 900)
        self.until(lambda: ex.rows and all(r.state != "RUNNING" for r in ex.rows), 60)
        self.pump(1.0)
        self.shot("experiments")

        self.key("ctrl+shift+n")
        self.until(lambda: getattr(w, "new_from_data_dialog", None) is not None and
                   w.new_from_data_dialog.isVisible(), 10)
        dialog = w.new_from_data_dialog
        self.click(dialog.data_edit)
        data = Path(os.environ["RNN_DESIGNER_DATA"]) / "co2_weekly.csv"
        self.xdotool("type", "--delay", "2", str(data))
        self.key("Return")
        self.until(lambda: dialog.preview is not None, 60)
        self.shot("new_from_data", dialog)
        dialog.reject()
        w.doc.stack.setClean()
        w.close()


def drive(size: str, out: Path) -> int:
    tour = Tour(size, out)
    tour.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
