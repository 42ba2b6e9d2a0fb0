"""Shared pieces for the window tests: a window with its own settings file, a loaded example,
and a snapshot of a graph to compare before and after undo."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from designer.ui.shell.main_window import MainWindow
from tests.conftest import PROJECTS


@pytest.fixture
def settings(tmp_path) -> QSettings:
    """A settings file of the test's own; the smoke step is off (tests/ui/test_problems.py
    turns it on), so that window tests do not each run a net in the background."""
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    s.setValue("problems/smoke_step", False)
    return s


@pytest.fixture
def window(qtbot, settings) -> MainWindow:
    """A shown window whose dialogs are recorded instead of shown."""
    w = MainWindow(settings=settings, restore=False)
    w.alerts = []
    w.alert = lambda title, text, details="": w.alerts.append(text)
    w.answer = QMessageBox.Discard
    w.ask_save_changes = lambda: w.answer
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def char_rnn(window) -> MainWindow:
    """The window with the cuDNN Char-RNN example open."""
    assert window.files.open_path(PROJECTS / "char-rnn-shakespeare.json")
    return window


def snapshot(graph) -> tuple:
    """Everything a user could see change in a graph, in a comparable form."""
    layers = sorted((la.name, la.type, tuple(sorted(la.params.items(), key=str)), la.pos)
                    for la in graph.layers())
    links = sorted(str(k) for k in graph.links())
    return tuple(layers), tuple(links)


def view_pos(view, scene_point: QPointF) -> QPoint:
    return view.mapFromScene(scene_point)


def mouse(widget, kind, pos: QPoint, button=Qt.LeftButton, buttons=Qt.LeftButton) -> None:
    """Send one mouse event (press, move or release) to ``widget`` at ``pos``."""
    glob = widget.mapToGlobal(pos)
    ev = QMouseEvent(kind, QPointF(pos), QPointF(glob), button, buttons, Qt.NoModifier)
    QApplication.sendEvent(widget, ev)


def drag(widget, start: QPoint, end: QPoint, steps: int = 6) -> None:
    """Press at ``start``, move to ``end`` in a few steps, release there."""
    mouse(widget, QMouseEvent.MouseButtonPress, start)
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        mouse(widget, QMouseEvent.MouseMove, p, Qt.NoButton)
    mouse(widget, QMouseEvent.MouseButtonRelease, end, Qt.LeftButton, Qt.NoButton)


def not_blank(image: QImage) -> bool:
    """True when the picture holds many colours (a rendered window, not a flat fill)."""
    colours = set()
    for y in range(0, image.height(), 7):
        for x in range(0, image.width(), 7):
            colours.add(image.pixel(x, y))
    return len(colours) > 40


# ------------------------------------------------------------------------------- training --
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        * 30)


@pytest.fixture(autouse=True)
def _runs_in_tmp(tmp_path, monkeypatch):
    """Runs go to the test's folder, never the user's; no test reaches the network."""
    monkeypatch.setenv("RNN_DESIGNER_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("RNN_DESIGNER_OFFLINE", "1")


def tiny_project(folder, name="tiny", steps=10, training=None, solver=None, corpus=TEXT,
                 engine="CUDNN", **data):
    """A Char-RNN small enough to train ten steps in well under a second on a CPU; saved to
    ``folder/<name>.json`` next to its corpus. Returns the project file."""
    from designer.graph import Graph
    from designer.graph.project import Project
    (folder / "corpus.txt").write_text(corpus)
    g = Graph(project_dir=folder)
    g.add_layer("CharText", "data", {"corpus": "corpus.txt", "seq_len": 10, "batch_size": 4,
                                     **data}, pos=(0, 0))
    g.add_layer("Embed", "embed", {"num_output": 8}, pos=(0, 110))
    g.add_layer("LSTM", "lstm1", {"num_output": 16, "engine": engine}, pos=(0, 220))
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2}, pos=(0, 330))
    g.add_layer("SoftmaxWithLoss", "loss", pos=(0, 440))
    for a, b in [("data.data", "embed.x"), ("embed.y", "lstm1.x"), ("lstm1.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    p = Project(g, name, "", {"type": "Adam", "base_lr": 0.01, "max_steps": steps,
                              **(solver or {})},
                {"log_interval": 2, "eval_interval": 5, "eval_batches": 2,
                 "checkpoint_interval": 5, "sample_interval": 5, "sample_length": 20,
                 "device": "cpu", **(training or {})})
    return p.save(folder / f"{name}.json")


@pytest.fixture
def tiny(window, tmp_path):
    """The window with the tiny Char-RNN open; its dialogs and notices recorded."""
    window.notices = []
    window.notify = lambda title, text, details="": window.notices.append((title, text))
    assert window.files.open_path(tiny_project(tmp_path), confirmed=True)
    return window


def train_and_wait(qtbot, w, timeout=60_000, **kw):
    """Press Train (with overrides, if any) and wait until the run's thread has ended."""
    with qtbot.waitSignal(w.training.run_ended, timeout=timeout) as blocker:
        run = w.training.train(**kw) if kw else (w.act.train.trigger() or w.training.run)
    assert blocker.args[0] is run
    return run
