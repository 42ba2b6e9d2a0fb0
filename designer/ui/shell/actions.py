"""The window's actions, menus and toolbars, and the canvas edits they trigger.

Standard shortcuts: Ctrl+N/O/S, Ctrl+Shift+S, Ctrl+Z, Ctrl+Y and Ctrl+Shift+Z, Ctrl+Q, Delete,
Ctrl+X/C/V, Ctrl+D, Ctrl+A, F2; zoom with Ctrl+= / Ctrl+- / Ctrl+0, fit with F.
"""
from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox

from designer import __version__
from designer.engines.expansion import UNROLLS
from designer.graph.errors import GraphError
from designer.ui.editor import clipboard
from designer.ui.editor.layout import layered_positions
from designer.ui.exchange.menu import add_to_file_menu
from designer.ui.help.menu import add_to_help_menu
from designer.ui.look import resources, theme
from designer.ui.sequences import menu as sequences_menu


def _action(window, text: str, slot=None, shortcut=None, icon: str | None = None,
            tip: str = "") -> QAction:
    act = QAction(text, window)
    if icon:
        act.setIcon(resources.icon(icon))
        act.setData(icon)
    if shortcut is not None:
        keys = shortcut if isinstance(shortcut, list) else [shortcut]
        act.setShortcuts([QKeySequence(k) for k in keys])
    if tip:
        act.setToolTip(tip)
        act.setStatusTip(tip)
    if slot is not None:
        act.triggered.connect(lambda checked=False: slot())
    return act


def build(w) -> SimpleNamespace:
    """Create the actions, menus and toolbars of window ``w``."""
    a = SimpleNamespace()

    def f(name):  # late binding: the file handler is made after the actions
        return lambda: getattr(w.files, name)()

    a.new = _action(w, "&New", f("new"), QKeySequence.New, "new", "Start a new project")
    a.open = _action(w, "&Open\u2026", f("open"), QKeySequence.Open, "open", "Open a project")
    a.open_run = _action(w, "Open &Run\u2026", lambda: w.training.open_run(), None, None,
                         "Continue a training run from its last checkpoint")
    a.save = _action(w, "&Save", f("save"), QKeySequence.Save, "save", "Save the project")
    a.save_as = _action(w, "Save &As\u2026", f("save_as"), QKeySequence.SaveAs)
    a.quit = _action(w, "&Quit", w.close, "Ctrl+Q")
    a.undo = w.doc.stack.createUndoAction(w, "&Undo")
    a.undo.setShortcuts([QKeySequence(QKeySequence.Undo)])
    a.undo.setIcon(resources.icon("undo"))
    a.undo.setData("undo")
    a.redo = w.doc.stack.createRedoAction(w, "&Redo")
    a.redo.setShortcuts([QKeySequence("Ctrl+Y"), QKeySequence("Ctrl+Shift+Z")])
    a.redo.setIcon(resources.icon("redo"))
    a.redo.setData("redo")
    a.cut = _action(w, "Cu&t", lambda: cut(w), QKeySequence.Cut)
    a.copy = _action(w, "&Copy", lambda: copy(w), QKeySequence.Copy)
    a.paste = _action(w, "&Paste", lambda: paste(w), QKeySequence.Paste)
    a.duplicate = _action(w, "D&uplicate", lambda: duplicate(w), "Ctrl+D")
    a.delete = _action(w, "&Delete", lambda: delete_selection(w),
                       [QKeySequence.Delete, "Backspace"], "delete",
                       "Delete the selected layers and links")
    a.select_all = _action(w, "Select &All", lambda: select_all(w), QKeySequence.SelectAll)
    a.rename = _action(w, "&Rename\u2026", lambda: rename(w), "F2")
    a.zoom_in = _action(w, "Zoom &In", lambda: w.view.zoom_by(1.25), ["Ctrl+=", "Ctrl++"],
                        "zoom-in")
    a.zoom_out = _action(w, "Zoom &Out", lambda: w.view.zoom_by(0.8), "Ctrl+-", "zoom-out")
    a.zoom_reset = _action(w, "&Actual Size", lambda: w.view.set_zoom(1.0), "Ctrl+0")
    a.fit = _action(w, "&Fit to View", lambda: w.view.fit(), "F", "fit",
                    "Show the whole net")
    a.layout = _action(w, "Auto-&Layout", lambda: auto_layout(w), "Ctrl+L", "layout",
                       "Arrange the layers in rows, top to bottom")
    a.unrolled = _action(w, "Show &Unrolled Net", lambda: w.show_unrolled_safely(), "Ctrl+U",
                         "unroll", "Show the per-time-step net of the selected recurrent "
                         "layer (what the CAFFE engine runs)")
    a.inspect = _action(w, "&Inspect the Recurrence", lambda: w.show_inspect(), "Ctrl+I",
                        "inspect", "See a run's gates, states, surprise and gradient flow, "
                        "step by step over a piece of text (live while a run trains)")

    def t(name):  # late binding: the training controller is made after the actions
        return lambda: getattr(w.training, name)()

    a.train = _action(w, "&Train", t("train"), "F5", "train",
                      "Train a snapshot of the net in the background (F5)")
    a.pause = _action(w, "&Pause", t("pause"), "F6", "pause",
                      "Pause training after the current step (F6)")
    a.resume = _action(w, "&Resume", t("resume"), "F6", "train", "Resume training (F6)")
    a.stop = _action(w, "&Stop", t("stop"), "Shift+F5", "stop",
                     "Stop training after the current step and save a checkpoint (Shift+F5)")
    a.experiments = _action(w, "E&xperiments", lambda: w.show_experiments(), "Ctrl+E", "search",
                            "A search's trials, the objective's history, parallel coordinates, "
                            "importances and Pareto front (Ctrl+E)")
    a.search = _action(w, "Searc&h\u2026", lambda: w.start_search(), "F7", "search",
                       "Search the parameters marked “Search over” in Properties: each trial "
                       "trains the design once (F7)")
    a.stop_search = _action(w, "Stop Sea&rch", lambda: w.stop_search(), None, "stop",
                            "Stop the search (the trials under way end; again: at once)")
    a.stop_search.setEnabled(False)
    a.add_run = _action(w, "&Add Run Folder\u2026", lambda: w.training.charts.add_folder(),
                        None, "open", "Overlay a previous run's curves on the charts")
    a.generate = _action(w, "&Generate\u2026", lambda: show_generate(w), "Ctrl+G", "generate",
                         "Make the latest run write text (or audio, or read digits)")
    a.about = _action(w, "&About RNN Designer", lambda: about(w))
    a.smoke = _action(w, "&Check Each Edit on a Real Batch", None, None, None,
                      "After each edit, run the net forward and backward on a tiny real batch "
                      "(the smoke step), so that what is called valid trains")
    a.smoke.setCheckable(True)
    a.smoke.setChecked(w.smoke.enabled)
    a.smoke.toggled.connect(w.set_smoke_step)

    # canvas edits answer their shortcuts only while the canvas has the focus, so Delete and
    # Ctrl+C keep their usual meaning in text fields and lists
    for act in (a.cut, a.copy, a.paste, a.duplicate, a.delete, a.select_all, a.fit):
        act.setShortcutContext(Qt.WidgetWithChildrenShortcut)
        w.view.addAction(act)

    mb = w.menuBar()
    m = mb.addMenu("&File")
    m.addActions([a.new, a.open])
    sequences_menu.add_to_file_menu(w, m, a, before=a.open)
    a.recent_menu = m.addMenu("Open &Recent")
    a.recent_menu.aboutToShow.connect(lambda: w.files.fill_recent_menu(a.recent_menu))
    m.addAction(a.open_run)
    m.addSeparator()
    m.addActions([a.save, a.save_as])
    m.addSeparator()
    add_to_file_menu(w, m, a)
    m.addSeparator()
    m.addAction(a.quit)
    m = mb.addMenu("&Edit")
    m.addActions([a.undo, a.redo])
    m.addSeparator()
    m.addActions([a.cut, a.copy, a.paste, a.duplicate, a.delete])
    m.addSeparator()
    m.addActions([a.select_all, a.rename])
    m = mb.addMenu("&View")
    m.addActions([a.zoom_in, a.zoom_out, a.zoom_reset, a.fit])
    m.addSeparator()
    m.addActions([a.layout, a.unrolled, a.inspect, a.experiments])
    m.addSeparator()
    themes = m.addMenu("&Theme")
    group = QActionGroup(w)
    current = w.settings.value("theme", "system")
    a.themes = {}
    for name in ("system", "light", "dark"):
        act = themes.addAction(name.capitalize())
        act.setCheckable(True)
        act.setChecked(name == current)
        act.triggered.connect(lambda checked=False, n=name: set_theme(w, n))
        group.addAction(act)
        a.themes[name] = act
    a.docks_menu = m.addMenu("&Panels")
    for dock in (w.palette_dock, w.properties_dock, w.problems_dock, w.history_dock,
                 w.output_dock, w.charts_dock, w.device_dock):
        a.docks_menu.addAction(dock.toggleViewAction())
    m = mb.addMenu("&Train")
    m.addActions([a.train, a.pause, a.resume, a.stop])
    m.addSeparator()
    m.addActions([a.search, a.stop_search])
    m.addSeparator()
    m.addActions([a.generate, a.inspect, a.add_run])
    m.addSeparator()
    m.addAction(a.smoke)
    m = mb.addMenu("&Help")
    add_to_help_menu(w, m, a)
    m.addSeparator()
    m.addAction(a.about)

    tb = w.addToolBar("Main")
    tb.setObjectName("main_toolbar")
    tb.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
    tb.addActions([a.new, a.open, a.save])
    tb.addSeparator()
    tb.addActions([a.undo, a.redo])
    tb.addSeparator()
    tb.addActions([a.zoom_out, a.zoom_in, a.fit, a.layout])
    tb.addSeparator()
    tb.addAction(a.unrolled)
    tb.addAction(a.inspect)
    for act in (a.new, a.open, a.save, a.undo, a.redo, a.zoom_out, a.zoom_in):
        tb.widgetForAction(act).setToolButtonStyle(Qt.ToolButtonIconOnly)
    # short words on the toolbar (the menus keep the full names), so that the whole toolbar
    # and the device and engine pickers fit a 1366-pixel screen
    for act, word in ((a.fit, "Fit"), (a.layout, "Layout"), (a.unrolled, "Unrolled"),
                      (a.inspect, "Inspect")):
        act.setIconText(word)
        act.setToolTip(f"<b>{act.text().replace('&', '')}</b> "
                       f"({act.shortcut().toString(QKeySequence.NativeText)})<br>{act.toolTip()}")
    w.train_toolbar = w.addToolBar("Train")
    w.train_toolbar.setObjectName("train_toolbar")
    w.train_toolbar.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
    w.train_toolbar.addActions([a.train, a.pause, a.resume, a.stop])
    w.main_toolbar = tb
    return a


def update_enabled(w) -> None:
    """Enable the actions that need a selection, a recurrent layer, a clipboard."""
    a, names = w.act, w.scene.selected_names()
    some = bool(names) or bool(w.scene.selected_links())
    a.delete.setEnabled(some)
    for act in (a.cut, a.copy, a.duplicate):
        act.setEnabled(bool(names))
    a.rename.setEnabled(len(names) == 1)
    a.unrolled.setEnabled(len(names) == 1 and w.doc.graph.layer(names[0]).type in UNROLLS)


def refresh_icons(w) -> None:
    for act in vars(w.act).values():
        if isinstance(act, QAction) and isinstance(act.data(), str) and act.data():
            act.setIcon(resources.icon(act.data()))


def set_theme(w, name: str) -> None:
    app = QApplication.instance()
    theme.apply(app, name)
    resources.retint()
    refresh_icons(w)
    for i in range(w.tabs.count()):
        icon_name = w.tabs.tabBar().tabData(i) or ("layout" if i == 0 else "unroll")
        w.tabs.setTabIcon(i, resources.icon(icon_name))
    w.settings.setValue("theme", name)
    for item in w.scene.items():
        item.update()
    for view in w.unrolled.values():
        view.refresh_theme()
    w.problems.refresh()
    w.training.refresh_theme()
    if w.experiments_view is not None:
        w.experiments_view.refresh_theme()


def show_generate(w) -> None:
    """Bring the Generate panel forward."""
    w.output_dock.show()
    w.output_dock.raise_()
    w.training.output.setCurrentWidget(w.training.output.generate)


def context_menu(w, scene_pos) -> QMenu:
    """The canvas menu for what is under ``scene_pos``: a layer, a link or empty canvas."""
    from designer.ui.editor.link_item import LinkItem, LinkLabel
    from designer.ui.editor.node_item import NodeItem
    item = w.scene.itemAt(scene_pos, w.view.transform())
    if isinstance(item, LinkLabel):
        item = item.link
    while item is not None and not isinstance(item, (NodeItem, LinkItem)):
        item = item.parentItem()
    if item is not None and not item.isSelected():
        w.scene.clearSelection()
        item.setSelected(True)
    menu = QMenu(w)
    a = w.act
    if isinstance(item, NodeItem):
        menu.addActions([a.rename, a.unrolled])
        menu.addSeparator()
        menu.addActions([a.cut, a.copy, a.duplicate, a.delete])
    elif isinstance(item, LinkItem):
        disconnect = menu.addAction(resources.icon("delete"), f"Disconnect {item.link}")
        disconnect.triggered.connect(lambda: w.doc.disconnect(item.link))
    else:
        menu.addAction(a.paste)
        menu.addSeparator()
        menu.addActions([a.select_all, a.layout, a.fit])
    return menu


# ------------------------------------------------------------------------- canvas edits --
def delete_selection(w) -> None:
    w.doc.remove(w.scene.selected_names(), w.scene.selected_links())


def copy(w) -> bool:
    names = w.scene.selected_names()
    if not names:
        return False
    QGuiApplication.clipboard().setMimeData(clipboard.to_mime(w.doc.graph, names))
    w._paste_offset = 0
    return True


def cut(w) -> None:
    if copy(w):
        w.doc.remove(w.scene.selected_names())


def paste(w, data=None) -> list[str]:
    got = clipboard.from_mime(data if data is not None else
                              QGuiApplication.clipboard().mimeData())
    if got is None:
        w.statusBar().showMessage("The clipboard holds no layers to paste", 5000)
        return []
    layers, links = got
    w._paste_offset = getattr(w, "_paste_offset", 0) + 40
    off = w._paste_offset
    for d in layers:
        d["pos"] = (d["pos"][0] + off, d["pos"][1] + off)
    try:
        names = w.doc.paste(layers, links)
    except GraphError as e:
        w.statusBar().showMessage(str(e), 8000)
        return []
    w.scene.select_layers(names)
    return names


def duplicate(w) -> list[str]:
    names = w.scene.selected_names()
    if not names:
        return []
    w._paste_offset = 0
    return paste(w, clipboard.to_mime(w.doc.graph, names))


def select_all(w) -> None:
    for item in w.scene.nodes() + w.scene.link_items():
        item.setSelected(True)


def rename(w) -> None:
    names = w.scene.selected_names()
    if len(names) == 1:
        w._activate_layer(names[0])


def auto_layout(w) -> None:
    g = w.doc.graph
    new = layered_positions(g)
    w.doc.move({n: (g.layer(n).pos, p) for n, p in new.items()}, text="Auto-layout")
    w.scene.reroute_all()
    w.view.fit()


def about(w) -> None:
    QMessageBox.about(w, "About RNN Designer",
                      f"<b>RNN Designer {__version__}</b><p>Design, train and compare recurrent "
                      "networks by drawing them: a Char-RNN's LSTM on the fused cuDNN engine or "
                      "on Caffe's unrolled net, one small layer per time step.</p>")
