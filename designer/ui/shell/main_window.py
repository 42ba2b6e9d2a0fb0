"""The designer window: palette, canvas, properties, problems, and training.

The window wires the parts together; the actions and file handling live in ``actions`` and
``files``, the unrolled and Inspect tabs in ``tabs``, training in ``designer.ui.train`` (its Output,
Charts and Device docks are made here and filled by the `TrainingController`).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (QDockWidget, QLabel, QMainWindow, QMessageBox, QTabWidget,
                               QUndoView, QVBoxLayout, QWidget)

from designer.graph import dims as D
from designer.graph.errors import GraphError
from designer.ui.editor import describe
from designer.ui.editor.document import Document
from designer.ui.editor.palette import LayerPalette
from designer.ui.editor.scene import GraphScene
from designer.ui.editor.view import CanvasView
from designer.ui.forms.properties import PropertiesPanel
from designer.ui.look import resources
from designer.ui.look.fitting import ElidedLabel
from designer.ui.memory import MemoryFit
from designer.ui.shell.collector import collect_in_gui_thread
from designer.ui.problems import ProblemsPanel, SmokeChecker
from designer.ui.problems.pick import picked_fix
from designer.ui.shell import actions, files, screen_fit
from designer.ui.shell.experiments_tab import ExperimentsTab
from designer.ui.shell.tabs import ViewTabs
from designer.ui.shell.workspaces import WorkspaceSwitcher

APP_NAME = resources.APP_NAME


class MainWindow(WorkspaceSwitcher, ViewTabs, ExperimentsTab, QMainWindow):
    """The main window around one :class:`Document`.

    It opens inside its screen and nothing it shows grows it (`screen_fit`); its docks are
    laid out by workspace (`workspaces`).

    Parameters
    ----------
    settings
        Where geometry, dock layout, recent files and the theme are kept (``QSettings()`` by
        default; tests pass a file of their own).
    restore
        Restore the geometry and dock layout kept in ``settings``.
    on_screen
        The window is shown on a screen, and kept inside it (``False``: it is rendered to a
        picture of its own size, as ``gui --screenshot`` does).
    """

    def __init__(self, settings: QSettings | None = None, restore: bool = True,
                 on_screen: bool = True) -> None:
        super().__init__()
        self.on_screen = on_screen
        collect_in_gui_thread()  # cycles holding Qt objects die in this thread, not a worker's
        self.settings = settings if settings is not None else QSettings()
        self.setObjectName("main_window")
        self.setWindowIcon(resources.app_icon())
        self.setDockOptions(QMainWindow.AnimatedDocks | QMainWindow.AllowTabbedDocks)
        # the side docks run the whole height; the bottom ones sit under the view between them
        self.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        self._tabs_pending: list[tuple[QDockWidget, QDockWidget]] = []  # tabbed when shown
        self.doc = Document(parent=self)
        self.scene = GraphScene(self.doc, self)
        self.view = CanvasView(self.scene)
        self.tabs = QTabWidget(documentMode=True, tabsClosable=True, movable=True)
        self.tabs.setTabBarAutoHide(True)
        self.tabs.addTab(self.view, resources.icon("layout"), "Design")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        self.tabs.currentChanged.connect(self.only_the_shown_tab_sizes)
        self.banner = QLabel()
        self.banner.setObjectName("training_banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        central = QWidget()
        box = QVBoxLayout(central)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.banner)
        box.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.unrolled: dict[str, QWidget] = {}
        self.inspect_view = None  # the Inspect tab, made when first asked for

        self.layer_palette = LayerPalette()
        self.memory = MemoryFit(self.doc, self)
        self.properties = PropertiesPanel(self.doc, memory=self.memory)
        self.problems = ProblemsPanel(self.doc)
        smoke_on = self.settings.value("problems/smoke_step", True, type=bool)
        self.smoke = SmokeChecker(self.doc, self, enabled=smoke_on)
        self.problems.smoke_enabled = smoke_on
        self.history = QUndoView(self.doc.stack)
        self.history.setEmptyLabel("(opened)")
        self.palette_dock = self.add_dock(self.layer_palette, "Layers", Qt.LeftDockWidgetArea)
        self.properties_dock = self.add_dock(self.properties, "Properties",
                                             Qt.RightDockWidgetArea)
        self.problems_dock = self.add_dock(self.problems, "Problems", Qt.BottomDockWidgetArea)
        self.charts_dock = self.add_dock(QWidget(), "Charts", Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.problems_dock, self.charts_dock, Qt.Horizontal)  # side by side
        self.history_dock = self.add_dock(self.history, "History", Qt.BottomDockWidgetArea,
                                          tabify_with=self.problems_dock)
        self.output_dock = self.add_dock(QWidget(), "Output", Qt.BottomDockWidgetArea,
                                         tabify_with=self.problems_dock)
        self.device_dock = self.add_dock(QWidget(), "Device", Qt.RightDockWidgetArea,
                                         tabify_with=self.properties_dock)

        # the net's summary and memory give way (cut, whole in their tool-tips) to the
        # training status line and the messages on the left, on a narrow screen
        self.summary = ElidedLabel(min_width=140)
        self.summary.setIndent(16)  # a gap after a long status message that reaches it
        self.memory_label = ElidedLabel(min_width=90, objectName="memory_label")
        self.zoom_label = QLabel("Zoom 100%")
        self.zoom_label.setToolTip("The canvas's zoom (Ctrl+= and Ctrl+- zoom, F fits the "
                                   "net)")
        self.statusBar().addPermanentWidget(self.summary)
        self.statusBar().addPermanentWidget(self.memory_label)
        self.statusBar().addPermanentWidget(self.zoom_label)

        self.act = actions.build(self)
        self.files = files.FileHandler(self)
        from designer.ui.train.trainer import TrainingController
        self.training = TrainingController(self)
        self.training.install()
        self.build_workspaces()
        self._connect()
        screen_fit.guard(self, on_screen)
        if on_screen:
            screen_fit.place(self)
        else:
            self.resize(screen_fit.PREFERRED)
        self._laid_out = False  # the workspace's docks are laid out when first shown
        if restore and self._restore():
            self._tabs_pending.clear()  # the kept layout has its own tabs
            self._laid_out = True
        self._update_title()
        self._update_summary()

    # ----------------------------------------------------------------------- hooks --
    def add_dock(self, widget: QWidget, title: str, area=Qt.RightDockWidgetArea,
                 tabify_with: QDockWidget | None = None) -> QDockWidget:
        """Put ``widget`` in a dock (for the training output, charts, monitors...)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(title.lower().replace(" ", "_") + "_dock")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        if tabify_with is not None and not self.isVisible():
            # tabbed when first shown: Qt 6.11 tabifying two groups before the window is
            # laid out leaves a stray copy of the second group's tab bar over the canvas
            self._tabs_pending.append((tabify_with, dock))
        elif tabify_with is not None:
            self.tabifyDockWidget(tabify_with, dock)
        if hasattr(self, "act"):
            self.act.docks_menu.addAction(dock.toggleViewAction())
        return dock

    # ------------------------------------------------------------------------ wiring --
    def _connect(self) -> None:
        # bound methods, not lambdas: Qt drops them when the window goes
        d = self.doc
        d.stack.cleanChanged.connect(self._update_title)
        d.path_changed.connect(self._update_title)
        d.settings_changed.connect(self._update_title)
        d.graph_replaced.connect(self._close_unrolled)
        d.path_changed.connect(self._project_has_study)
        self.statusBar().messageChanged.connect(self._status_message)
        self.scene.selectionChanged.connect(self._selection_changed)
        self.scene.message.connect(self.show_message)
        self.scene.layer_activated.connect(self._activate_layer)
        self.view.zoom_changed.connect(self._zoomed)
        self.view.layer_dropped.connect(self._dropped)
        self.view.context_requested.connect(self._context_menu)
        self.layer_palette.add_requested.connect(self.add_layer_at_centre)
        self.problems.layer_clicked.connect(self.reveal_layer)
        self.problems.count_changed.connect(self._problems_counted)
        self.problems.fix_requested.connect(self.apply_fix)
        self.smoke.changed.connect(self.problems.set_smoke)
        self.smoke.changed.connect(self._smoke_on_canvas)
        self.smoke.changed.connect(self.training.refresh_train_action)
        self.problems.count_changed.connect(self.training.refresh_train_action)
        self.memory.changed.connect(self._update_memory)
        self.memory.changed.connect(self.training.refresh_train_action)
        self.properties.layer_panel.unroll_requested.connect(self.show_unrolled_safely)

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def _status_message(self, text: str) -> None:
        """While a message shows, the net's summary and memory give it their room (cut,
        whole in their tool-tips)."""
        for label in (self.summary, self.memory_label):
            label.give_way(bool(text))

    def set_banner(self, text: str | None) -> None:
        """A line above the canvas (while training: the running model is a snapshot)."""
        if not text:
            self.banner.hide()
            return
        from designer.ui.look import theme
        light = theme.colors.name == "light"
        self.banner.setStyleSheet(
            "QLabel#training_banner { padding: 5px 10px; border-bottom: 1px solid %s; "
            "background: %s; color: %s; }" % (("#b9d3f3", "#e8f1fc", "#1d3d66") if light else
                                              ("#2c4a70", "#1f2f44", "#cfe2fb")))
        self.banner.setText(text)
        self.banner.show()

    def _zoomed(self, zoom: float) -> None:
        self.zoom_label.setText(f"Zoom {zoom:.0%}")

    def _dropped(self, name: str) -> None:
        self.view.setFocus()

    def _context_menu(self, scene_pos, global_pos) -> None:
        actions.context_menu(self, scene_pos).exec(global_pos)

    def _selection_changed(self) -> None:
        if self.scene.graph is None:
            return
        names = self.scene.selected_names()
        self.properties.set_selection(names)
        actions.update_enabled(self)
        if len(names) == 1:
            self.properties.setCurrentIndex(0)

    def _activate_layer(self, name: str) -> None:
        self.properties_dock.raise_()
        self.properties.setCurrentIndex(0)
        self.properties.layer_panel.name_edit.setFocus()
        self.properties.layer_panel.name_edit.selectAll()

    def reveal_layer(self, name: str) -> None:
        """Select a layer and bring it into sight (from the problems panel, say)."""
        self.tabs.setCurrentWidget(self.view)
        self.scene.select_layers([name])
        self.view.centre_on_layer(name)

    def apply_fix(self, fix) -> None:
        """Make a problem's fix as one undoable step (from the Problems panel's Fix button)."""
        if fix.kind == "pick_data":
            fix = picked_fix(self, fix, self.doc.graph.project_dir)
            if fix is None:
                return
        try:
            if fix.kind == "insert":
                g = self.doc.graph
                a, b = g.layer(fix.link.src).pos, g.layer(fix.link.dst).pos
                pos, room = self.view.room_on_link(fix.link, ((a[0] + b[0]) / 2,
                                                              (a[1] + b[1]) / 2))
                self.doc.apply_fix(fix, pos, room)
            else:
                self.doc.apply_fix(fix)
        except GraphError as e:
            self.show_message(str(e))
            return
        self.show_message(f"Done: {fix.text} (Ctrl+Z undoes it)")
        if fix.kind != "bypass" and fix.layer in self.doc.graph:
            self.scene.select_layers([fix.layer])

    def _smoke_on_canvas(self, result) -> None:
        failed = result is not None and result["status"] == "failed" and result["layer"]
        self.scene.set_run_errors({result["layer"]: result["message"]} if failed else {})

    def set_smoke_step(self, on: bool) -> None:
        """Turn the smoke step after each edit on or off (remembered)."""
        self.settings.setValue("problems/smoke_step", bool(on))
        if self.act.smoke.isChecked() != bool(on):
            self.act.smoke.setChecked(bool(on))  # the menu shows the switch as it is
        self.problems.smoke_enabled = bool(on)
        self.smoke.set_enabled(on)
        self.problems.refresh()

    def add_layer_at_centre(self, type_id: str) -> None:
        centre = self.view.visible_scene_rect().center()
        self.view.drop_layer(type_id, centre)
        self.view.setFocus()

    def _problems_counted(self, errors: int, warnings: int) -> None:
        self.problems_dock.setWindowTitle(
            "Problems" + (f" ({errors + warnings})" if errors + warnings else ""))
        self._update_summary(errors, warnings)

    def _update_summary(self, errors: int | None = None, warnings: int = 0) -> None:
        g = self.doc.graph
        if errors is None:
            errors = len(g.errors())
        flops = [g.info(n).flops for n in g.names()]
        known = all(f is not None and D.known(f) for f in flops)
        dims = " ".join(f"{k}={v}" for k, v in g.dims.items())
        parts = [f"{len(g)} layers", f"{describe.count(g.total_params())} params",
                 f"{describe.flops(sum(flops)) if known else '? FLOPs'}/sample"]
        if dims:
            parts.append(dims)
        state = "\u2714 valid" if not errors else f"\u26a0 {errors} error{'s' * (errors > 1)}"
        if warnings:  # valid, but something to look at (a layer that reaches no loss...)
            state += f", {warnings} warning{'s' * (warnings > 1)}"
        self.summary.setText("   \u00b7   ".join(parts) + f"   \u00b7   {state}")

    def _update_memory(self) -> None:
        """The status bar's memory figure: red, with the device's size, when it cannot fit."""
        m = self.memory
        self.memory_label.setText(("\u00b7   " + m.short_text()) if m.short_text() else "")
        self.memory_label.setVisible(bool(m.short_text()))
        from designer.ui.look import theme
        self.memory_label.setStyleSheet(
            f"QLabel#memory_label {{ color: {theme.colors.error.name()}; }}" if m.message else "")
        tip = m.message or ""
        if m.estimate is not None and not tip:
            from designer.graph.memory import parts_text
            tip = (f"Training on {m.where} takes about this much memory: "
                   f"{parts_text(m.estimate)}")
        self.memory_label.setToolTip(tip)

    def _update_title(self, *_) -> None:
        p = self.doc.project
        where = f" \u2014 {Path(p.path).name}" if p.path else ""
        self.setWindowTitle(f"{p.name}[*]{where} \u2014 {APP_NAME}")
        self.setWindowModified(self.doc.is_modified())

    # ---------------------------------------------------------------- dialogs --
    def notify(self, title: str, text: str, details: str = "") -> None:
        """Tell the user something without blocking (a training error: the run goes on or
        has ended, the window keeps working); tests replace this."""
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        if details and details != text:
            box.setDetailedText(details)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.setModal(False)
        box.show()

    def alert(self, title: str, text: str, details: str = "") -> None:
        """Tell the user something went wrong, in a dialog (tests replace this)."""
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        if details and details != text:
            box.setDetailedText(details)
        box.exec()

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        """Save, Discard or Cancel, for a document with unsaved changes (tests replace this)."""
        name = self.doc.project.name
        return QMessageBox.question(
            self, "Unsaved changes", f"“{name}” has changes that are not saved. Save them?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)

    # ---------------------------------------------------------------- settings --
    def _restore(self) -> bool:
        """The geometry and the workspaces' dock layouts kept in the settings (a geometry
        from a larger monitor is brought inside this one's); whether a layout was kept."""
        geometry = self.settings.value("window/geometry")
        if geometry is not None and self.restoreGeometry(geometry):
            self.setProperty("placed_by_us", False)
        return self.restore_workspaces(self.settings)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.on_screen:
            screen_fit.settle(self)
        if self._tabs_pending:  # the first time: the docks' tabs, each group's first on top
            for first, dock in self._tabs_pending:
                self.tabifyDockWidget(first, dock)
            self._tabs_pending.clear()
        if not self._laid_out:  # a first start: the workspace's own layout
            self._laid_out = True
            self.lay_out_workspace()

    def save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.keep_workspaces(self.settings)
        self.settings.sync()

    def closeEvent(self, event) -> None:
        if not self.files.confirm_discard():
            event.ignore()
            return
        self.training.shutdown()  # a running run stops at the next step and saves a checkpoint
        if self.experiments_view is not None:
            self.experiments_view.shutdown()  # a search running is ended
        self.smoke.shutdown()
        for view in self.unrolled.values():
            view.shutdown()
        self.save_settings()
        event.accept()
