"""The window: files, the modified marker, prompts, settings, themes, the problems panel, the
hooks for training, and a look at the picture it draws."""
import subprocess
import sys

from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from designer.graph import project as P
from designer.ui.look import theme
from designer.ui.shell.main_window import MainWindow
from tests.conftest import PROJECTS, ROOT
from tests.ui.conftest import not_blank, snapshot


def test_opening_a_broken_file_says_why_and_keeps_the_current_document(char_rnn, tmp_path):
    w = char_rnn
    w.doc.set_param("embed", "num_output", 20)
    before, graph = snapshot(w.doc.graph), w.doc.graph
    bad = tmp_path / "broken.json"
    bad.write_text('{"schema_version": 1, "graph": {"layers": [{"name": "x", "type": "LTSM"}],'
                   ' "links": []}}')
    assert not w.files.open_path(bad, confirmed=True)
    assert w.alerts == [f"{bad}: $.graph.layers[0].type: unknown layer type 'LTSM' "
                        "(did you mean LSTM?)"]
    assert w.doc.graph is graph and snapshot(graph) == before and w.doc.stack.count() == 1
    assert w.isWindowModified()


def test_the_title_shows_the_project_name_and_a_modified_marker(char_rnn, tmp_path):
    w = char_rnn
    assert w.windowTitle() == "Char-RNN Shakespeare (cuDNN)[*] \u2014 char-rnn-shakespeare.json " \
                              "\u2014 RNN Designer"
    assert not w.isWindowModified()
    w.doc.add_layer("ReLU", (300, 0))
    assert w.isWindowModified()
    w.doc.path and w.files._save_to(tmp_path / "copy.json")
    assert not w.isWindowModified() and "copy.json" in w.windowTitle()
    assert P.load(tmp_path / "copy.json").graph.names()[-1] == "relu"
    w.act.undo.trigger()
    assert w.isWindowModified()


def test_unsaved_changes_are_not_lost_without_asking(char_rnn):
    w = char_rnn
    w.doc.add_layer("ReLU", (300, 0))
    w.answer = QMessageBox.Cancel
    w.act.new.trigger()
    assert "relu" in w.doc.graph
    assert not w.close()
    w.answer = QMessageBox.Discard
    w.act.new.trigger()
    assert len(w.doc.graph) == 0 and w.doc.project.name == "untitled"
    assert not w.isWindowModified()


def test_saving_a_new_project_asks_where_then_remembers_it(window, tmp_path, monkeypatch):
    from designer.ui.shell import files
    target = tmp_path / "fresh"
    monkeypatch.setattr(files.QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(target), ""))
    window.doc.add_layer("LSTM", (0, 0))
    window.answer = QMessageBox.Save
    window.act.new.trigger()  # Save, then start anew
    assert (tmp_path / "fresh.json").exists() and len(window.doc.graph) == 0
    assert window.files.recent()[0] == str((tmp_path / "fresh.json").resolve())


def test_recent_files_are_kept_in_the_settings(window, settings):
    path = PROJECTS / "mnist-lstm.json"
    assert window.files.open_path(path)
    assert settings.value("recent_files") == [str(path.resolve())]
    menu = window.act.recent_menu
    window.files.fill_recent_menu(menu)
    assert menu.actions()[0].text().endswith("mnist-lstm.json")


def test_the_standard_shortcuts_are_bound(window):
    a = window.act

    def keys(act):
        return [k.toString() for k in act.shortcuts()]

    assert keys(a.redo) == ["Ctrl+Y", "Ctrl+Shift+Z"]
    assert keys(a.quit) == ["Ctrl+Q"]
    assert a.new.shortcut() == QKeySequence(QKeySequence.New).toString() or \
        keys(a.new) == ["Ctrl+N"]
    assert keys(a.open) == ["Ctrl+O"] and keys(a.save) == ["Ctrl+S"]
    assert keys(a.undo) == ["Ctrl+Z"]


def test_geometry_and_dock_layout_are_kept(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    first = MainWindow(settings=settings)
    qtbot.addWidget(first)
    first.show()
    first.resize(760, 560)
    first.problems_dock.hide()
    size = first.size()
    assert first.close()
    second = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(second)
    second.show()
    assert second.size() == size and not second.problems_dock.isVisible()


def test_clicking_a_problem_selects_its_layer(char_rnn, qtbot):
    w = char_rnn
    w.doc.remove([], [next(k for k in w.doc.graph.links() if k.dst == "ip1")])
    qtbot.waitUntil(lambda: w.problems.topLevelItem(0).text(0) == "ip1")
    w.problems._clicked(w.problems.topLevelItem(0))
    assert w.scene.selected_names() == ["ip1"] and w.properties.layer == "ip1"
    assert "1 error" in w.summary.text()


def test_light_and_dark_themes(char_rnn, settings, qtbot):
    from designer.ui.shell import actions
    try:
        actions.set_theme(char_rnn, "dark")
        assert theme.colors.name == "dark" and settings.value("theme") == "dark"
        qtbot.waitUntil(lambda: char_rnn.palette().window().color().lightness() < 80)
        assert not_blank(char_rnn.grab().toImage())
    finally:
        actions.set_theme(char_rnn, "light")
    qtbot.waitUntil(lambda: char_rnn.palette().window().color().lightness() > 200)


def test_training_has_places_to_go(window):
    assert window.output_dock.windowTitle() == "Output"
    assert window.charts_dock.windowTitle() == "Charts"
    assert window.device_dock.windowTitle() == "Device"
    a = window.act
    assert window.train_toolbar.actions()[:4] == [a.train, a.pause, a.resume, a.stop]
    assert a.train.isEnabled() and not a.pause.isEnabled() and not a.stop.isEnabled()
    assert not a.resume.isVisible()
    train_menu = next(m.menu() for m in window.menuBar().actions() if m.text() == "&Train")
    assert {a.train, a.pause, a.resume, a.stop, a.generate, a.add_run} <= set(
        train_menu.actions())
    dock = window.add_dock(QMessageBox(), "Monitor")
    assert dock.toggleViewAction() in window.act.docks_menu.actions()


def test_the_window_draws_the_graph(char_rnn):
    image = char_rnn.grab().toImage()
    assert image.width() >= 1024 and image.height() >= 640 and not_blank(image)
    view = char_rnn.view.grab().toImage()
    assert not_blank(view)


def test_the_window_opens_without_importing_torch():
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from designer.ui.shell.app import make_app\n"
        "from designer.ui.shell.main_window import MainWindow\n"
        "app = make_app()\n"
        "w = MainWindow(restore=False)\n"
        f"w.files.open_path({str(PROJECTS / 'char-rnn-shakespeare.json')!r})\n"
        "w.show(); app.processEvents()\n"
        "w.show_unrolled('lstm1'); app.processEvents()\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'pyqtgraph', 'numpy'})))\n"
        "w.doc.stack.setClean(); w.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_reference_cycles_are_collected_in_the_gui_thread_only(char_rnn, qtbot):
    """A cycle holding a Qt object, collected in a worker thread, deadlocks Qt against the
    GIL: with a window open, automatic collection is off and a GUI-thread timer collects."""
    import gc
    import threading
    import weakref

    class Node:
        pass

    from designer.ui.shell.collector import collect_in_gui_thread as window_timer
    assert not gc.isenabled()
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    collected_in = []
    a.__dict__["probe"] = weakref.finalize(a, lambda: collected_in.append(
        threading.current_thread() is threading.main_thread()))
    del a, b
    threshold, kept = gc.get_threshold()[0], []

    def collected() -> bool:
        """Whether the timer has collected the cycle. Meanwhile allocate as a running app
        does, so that each tick finds generation 0 past its threshold: the count also falls
        as objects are freed, and a thread an earlier test left winding down may be freeing
        many at once."""
        while gc.get_count()[0] <= threshold:
            kept.append([])
        return gone() is None
    qtbot.waitUntil(collected, timeout=60_000)  # the timer's collection
    del kept
    assert window_timer().isActive()
    assert collected_in == [True]


def test_every_action_with_an_icon_has_its_picture(window):
    from PySide6.QtGui import QAction

    from designer.ui.look import resources
    assert resources.ICONS == ROOT / "resources" / "icons"
    named = [a for a in window.findChildren(QAction) if a.data()]
    assert len(named) >= 15   # New, Open, Save, Undo ... Generate
    for act in named:
        assert (resources.ICONS / f"{act.data()}.svg").exists(), act.data()
        assert not act.icon().isNull(), f"{act.text()} has no icon"
    assert not resources.app_icon().isNull()


def toolbar_items_out_of_sight(w) -> list[str]:
    """What of the window's toolbars is not shown on the bar itself (hidden behind the
    toolbar's >> menu, or past its edge), by text or class."""
    from PySide6.QtWidgets import QToolBar, QToolButton
    lost = []
    for bar in (b for b in w.findChildren(QToolBar) if b.parent() is w and b.isVisible()):
        if not w.rect().contains(bar.geometry()):
            lost.append(f"the {bar.windowTitle()} toolbar")
        for act in (a for a in bar.actions() if a.isVisible()):
            item = bar.widgetForAction(act)
            if item is None or not item.isVisible() or not bar.rect().contains(item.geometry()):
                lost.append(act.text() or type(item).__name__)
        more = bar.findChild(QToolButton, "qt_toolbar_ext_button")
        if more is not None and more.isVisible():
            lost.append(f"the {bar.windowTitle()} toolbar's >> menu")
    return lost


def test_every_toolbar_item_is_in_sight_at_1366_by_768(char_rnn, qtbot):
    from designer.monitor.sample import DeviceInfo
    from designer.ui.train.pickers import device_choices
    w = char_rnn

    def in_sight() -> None:  # polled: the toolbars lay themselves out after the event
        assert toolbar_items_out_of_sight(w) == []

    w.resize(1366, 768)
    qtbot.waitUntil(lambda: w.width() == 1366, timeout=60_000)
    qtbot.waitUntil(in_sight, timeout=60_000)
    # the widest the bar gets: two GPUs of long names listed and picked, the longest engine,
    # and Resume (wider than Pause) shown while a run is paused
    target = w.training.target
    gpus = [DeviceInfo(i, "NVIDIA H100 80GB HBM3", f"GPU-{i}", 81559.0) for i in range(2)]
    target.device_picker.set_choices(device_choices(gpus, {}))
    target.device_picker.select("all")
    target.engine_picker.select("persist")
    w.act.pause.setVisible(False)
    w.act.resume.setVisible(True)
    qtbot.waitUntil(in_sight, timeout=60_000)
    assert target.engine_picker.width() < 200  # a long entry is elided, not widening the bar


def test_each_group_of_tabbed_docks_has_one_tab_bar_and_none_strays_over_the_canvas(window,
                                                                                     settings,
                                                                                     qtbot):
    """Tabbing two groups before the window is laid out left a copy of the second group's tab
    bar, showing "Pr", over the canvas (Qt 6.11); the docks are now tabbed when first shown,
    and a kept layout comes back the same."""
    from PySide6.QtWidgets import QTabBar

    def bars(w):
        return sorted(tuple(b.tabText(i) for i in range(b.count()))
                      for b in w.findChildren(QTabBar) if b.parentWidget() is w and b.isVisible())

    qtbot.waitUntil(lambda: bars(window) == [("Problems", "History", "Output"),
                                             ("Properties", "Device")])
    assert window.tabifiedDockWidgets(window.properties_dock) == [window.device_dock]
    window.save_settings()
    again = MainWindow(settings=settings)
    again.show()
    assert window.device_dock.objectName() in [d.objectName() for d in
                                               again.tabifiedDockWidgets(again.properties_dock)]
    canvas = again.view.geometry()
    assert not [b for b in again.findChildren(QTabBar) if b.parentWidget() is again
                and b.isVisible() and b.geometry().intersects(canvas)]
    again.close()
