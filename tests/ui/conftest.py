"""Shared pieces for the window tests: a window with its own settings file, a loaded example,
and a snapshot of a graph to compare before and after undo."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from designer.ui.main_window import MainWindow
from tests.conftest import PROJECTS


@pytest.fixture
def settings(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


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
