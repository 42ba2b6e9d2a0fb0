"""Workspaces: Design, Train, Inspect and Experiments each show the docks they need, switched
from the menu bar's corner, View > Workspace, the tab shown or the Train button; what the user
changes in one is kept for it, across sessions too."""
from PySide6.QtCore import QSettings

from designer.ui.shell.main_window import MainWindow
from designer.ui.shell.workspaces import KNOWN_DOCKS, dock


def shown(w) -> set:
    return {n for n in KNOWN_DOCKS if not dock(w, n).isHidden()}


def test_the_window_opens_in_design_with_the_canvas_and_its_docks(window):
    w = window
    assert w.workspace == "design" and w.workspace_actions["design"].isChecked()
    assert shown(w) == {"layers", "properties", "device", "problems", "history", "output"}
    corner = w.menuBar().cornerWidget()
    assert corner is not None and corner.isVisible()
    keys = [a.shortcut().toString() for a in w.act.workspace_menu.actions()]
    assert keys == ["Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+4"]
    assert w.view.height() >= w.height() / 2


def test_each_workspace_shows_what_it_needs_and_the_tab_shown_brings_its_own(window, qtbot):
    w = window
    w.workspace_actions["train"].trigger()
    assert w.workspace == "train" and "layers" not in shown(w)
    assert {"charts", "output", "device"} <= shown(w)
    w.workspace_actions["inspect"].trigger()
    assert w.tabs.currentWidget() is w.inspect_view and shown(w) == set()
    w.tabs.setCurrentWidget(w.view)  # the Design tab: the Design workspace
    assert w.workspace == "design" and "layers" in shown(w)
    w.tabs.setCurrentWidget(w.inspect_view)
    assert w.workspace == "inspect"
    w._close_tab(w.tabs.indexOf(w.inspect_view))
    assert w.inspect_view is None and w.workspace == "design"
    w.workspace_actions["experiments"].trigger()
    assert w.tabs.currentWidget() is w.experiments_view and w.workspace == "experiments"


def test_what_the_user_changes_in_a_workspace_is_kept_for_it(window, qtbot):
    w = window
    w.switch_workspace("train")
    w.device_dock.hide()  # closed by the user while watching a run
    w.switch_workspace("design")
    assert "device" in shown(w)  # Design still has it
    w.switch_workspace("train")
    assert "device" not in shown(w) and "charts" in shown(w)


def test_the_workspaces_come_back_in_the_next_session(qtbot, tmp_path):
    path = str(tmp_path / "s.ini")
    first = MainWindow(settings=QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    first.switch_workspace("train")
    first.history_dock.show()
    first.charts_dock.hide()
    assert first.close()
    second = MainWindow(settings=QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert second.workspace == "train" and "charts" not in shown(second)
    second.switch_workspace("design")
    assert shown(second) == {"layers", "properties", "device", "problems", "history", "output"}
    second.close()
