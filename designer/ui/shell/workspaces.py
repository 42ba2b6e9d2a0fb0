"""Workspaces: Design, Train, Inspect and Experiments, each a layout of the docks of its own,
as Qt Creator has modes and Blender workspaces.

They are switched from the buttons at the right of the menu bar, from View > Workspace
(Ctrl+1 to Ctrl+4), and by what the window shows: the Inspect tab brings the Inspect workspace,
pressing Train the Train one. Every dock has one place, whatever the workspace (`PLACES`: the
layers on the left, the properties and the device on the right, the charts beside the output,
problems and history below); a workspace says which docks are in sight, which tab of a group is
on top and how much room they take, as shares of the window (`Workspace`), so a 1366x768 laptop
gets the desktop's arrangement scaled to it, the canvas keeping at least half the height while
designing. What the user changes (a dock shown, hidden or resized) is kept for that workspace,
in the settings, and comes back with it; a dock moved elsewhere stays there in every workspace.

Switching only shows, hides and resizes docks: moving docks between tab groups again and again
leaves stray tab bars over the window in Qt 6.11, and so does ``restoreState`` on a shown window.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QToolButton, QWidget

from designer.ui.look import resources

STATE_VERSION = 2   # the places of the docks kept in the settings (1: before workspaces)
KNOWN_DOCKS = ("layers", "properties", "device", "problems", "history", "output", "charts")
# where each dock lives: area -> groups side by side, each a row of tabs (its first on top)
PLACES = ((Qt.LeftDockWidgetArea, (("layers",),)),
          (Qt.RightDockWidgetArea, (("properties", "device"),)),
          (Qt.BottomDockWidgetArea, (("charts",), ("problems", "history", "output"))))


@dataclass(frozen=True)
class Workspace:
    """A workspace: its name (the key kept in the settings), what its button says, the view it
    shows in the middle (``design``: the canvas or an unrolled view), the docks in sight (the
    first of each tab group named is brought to the top), and their room: ``bottom`` of the
    window's height, ``left``/``right`` of its width (at most ``side_max`` pixels each), and
    ``charts`` of the bottom row's width when the charts share it."""
    name: str
    title: str
    icon: str
    tip: str
    view: str
    docks: tuple = ()
    bottom: float = 0.25
    left: float = 0.16
    right: float = 0.22
    side_max: tuple = (250, 340)
    charts: float = 0.56
    raised: tuple = field(default=())


WORKSPACES = (
    Workspace("design", "Design", "layout", "Draw the net: the layers, their properties and "
              "the problems found, the canvas at least half the height", "design",
              docks=("layers", "properties", "device", "problems", "history", "output"),
              raised=("problems", "properties"), bottom=0.24),
    Workspace("train", "Train", "train", "Watch a run train: the charts and the log below "
              "the canvas, the device beside it", "design",
              docks=("properties", "device", "charts", "problems", "history", "output"),
              raised=("output", "device"), bottom=0.45, right=0.2, side_max=(250, 300)),
    Workspace("inspect", "Inspect", "inspect", "See a run's gates, states, surprise and "
              "gradient flow step by step, on the whole window", "inspect"),
    Workspace("experiments", "Experiments", "search", "A search's trials and what they "
              "say, on the whole window (a trial opened brings its charts)", "experiments"),
)
BY_NAME = {w.name: w for w in WORKSPACES}


def dock(window, name: str) -> QDockWidget:
    return window.findChild(QDockWidget, f"{name}_dock")


def place_docks(window) -> None:
    """Put every known dock in its place (`PLACES`); once, on a first start, when shown."""
    for area, groups in PLACES:
        previous = None
        for group in groups:
            first = dock(window, group[0])
            first.setFloating(False)
            window.addDockWidget(area, first)
            if previous is not None:
                window.splitDockWidget(previous, first, Qt.Horizontal)
            for name in group[1:]:
                window.tabifyDockWidget(first, dock(window, name))
            previous = first


def show_workspace(window, ws: Workspace, kept: dict | None = None) -> None:
    """The docks in sight in ``ws`` (or as ``kept`` had them: name -> [shown, width,
    height]), on top where it says, in their room."""
    shown = {n for n, (on, *_) in kept.items() if on} if kept else set(ws.docks)
    for name in KNOWN_DOCKS:
        d = dock(window, name)
        if not d.isFloating():
            d.setVisible(name in shown)
    for name in ws.raised:
        if name in shown:
            dock(window, name).raise_()
    if kept:
        sizes = {n: (w, h) for n, (on, w, h) in kept.items() if on}
        size = lambda: _resize(window, sizes)  # noqa: E731
    else:
        size = lambda: _room(window, ws, shown)  # noqa: E731
    size()
    # the docks just shown take their places in the next layout pass: size them again then
    QTimer.singleShot(0, window, size)


def _room(window, ws: Workspace, shown: set) -> None:
    size = window.size()
    sides = []
    for names, share, most in ((("layers",), ws.left, ws.side_max[0]),
                               (("properties", "device"), ws.right, ws.side_max[1])):
        d = next((dock(window, n) for n in names if n in shown), None)
        if d is not None:
            sides.append((d, min(most, int(share * size.width()))))
    if sides:
        window.resizeDocks([d for d, _ in sides], [w for _, w in sides], Qt.Horizontal)
    group = sorted((n for n in ("problems", "history", "output") if n in shown),
                   key=lambda n: n not in ws.raised)  # the tab on top is the one in sight
    below = [dock(window, n) for n in ("charts",) if n in shown] + \
        [dock(window, n) for n in group[:1]]
    if below:
        window.resizeDocks(below[:1], [int(ws.bottom * size.height())], Qt.Vertical)
    if len(below) > 1:
        width = size.width() - sum(w for _, w in sides)
        window.resizeDocks(below, [int(ws.charts * width), int((1 - ws.charts) * width)],
                           Qt.Horizontal)


def _resize(window, sizes: dict) -> None:
    docks = [(dock(window, n), w, h) for n, (w, h) in sizes.items() if w is not None]
    docks = [(d, w, h) for d, w, h in docks if not d.isHidden() and not d.isFloating()]
    area = window.dockWidgetArea
    sides = [(d, w) for d, w, _ in docks if area(d) in (Qt.LeftDockWidgetArea,
                                                        Qt.RightDockWidgetArea)]
    rows = [(d, w, h) for d, w, h in docks if area(d) in (Qt.TopDockWidgetArea,
                                                          Qt.BottomDockWidgetArea)]
    if sides:
        window.resizeDocks([d for d, _ in sides], [w for _, w in sides], Qt.Horizontal)
    if rows:  # the row as tall as its tallest dock (a tab group's dock is short by its tabs)
        tallest = max(rows, key=lambda r: r[2])
        window.resizeDocks([tallest[0]], [tallest[2]], Qt.Vertical)
        window.resizeDocks([d for d, _, _ in rows], [w for _, w, _ in rows], Qt.Horizontal)


def what_is_shown(window) -> dict:
    """The known docks as they are now: name -> [shown, width, height] (the size of those in
    sight only)."""
    seen = {}
    for n in KNOWN_DOCKS:
        d = dock(window, n)
        # a tab behind another is moved out of the window by Qt: it has no size to keep
        in_sight = d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()
        seen[n] = [not d.isHidden(), d.width() if in_sight else None,
                   d.height() if in_sight else None]
    return seen


class WorkspaceSwitcher:
    """The `MainWindow` methods that switch workspaces and keep their layouts
    (``workspace``: the name of the current one)."""

    workspace = "design"

    def build_workspaces(self) -> None:
        """The actions (in View > Workspace, Ctrl+1...), their buttons at the right of the
        menu bar, and the link from the tab shown to the workspace."""
        self._kept: dict[str, dict] = {}
        self.workspace_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        group.setExclusive(True)
        menu = self.act.workspace_menu
        self.workspace_bar = corner = QWidget(objectName="workspace_bar")  # kept: Qt does
        row = QHBoxLayout(corner)                                        # not take it over
        row.setContentsMargins(0, 0, 6, 0)
        row.setSpacing(2)
        for i, ws in enumerate(WORKSPACES, 1):
            act = QAction(resources.icon(ws.icon), ws.title, self)
            act.setData(ws.icon)
            act.setCheckable(True)
            act.setShortcut(QKeySequence(f"Ctrl+{i}"))
            act.setToolTip(f"<b>{ws.title}</b> (Ctrl+{i})<br>{ws.tip}")
            act.setStatusTip(ws.tip)
            act.triggered.connect(lambda checked=False, n=ws.name: self.switch_workspace(n))
            group.addAction(act)
            menu.addAction(act)
            self.addAction(act)
            button = QToolButton(objectName=f"workspace_{ws.name}")
            button.setDefaultAction(act)
            button.setToolButtonStyle(Qt.ToolButtonTextOnly)
            button.setAutoRaise(True)
            row.addWidget(button)
            self.workspace_actions[ws.name] = act
        self.menuBar().setCornerWidget(corner, Qt.TopRightCorner)
        self.workspace_actions[self.workspace].setChecked(True)
        self.tabs.currentChanged.connect(self._tab_shown)

    def switch_workspace(self, name: str, view: bool = True) -> None:
        """Show the docks as workspace ``name`` had them (as it says, the first time); with
        ``view``, its view in the middle too."""
        if name != self.workspace:
            self._kept[self.workspace] = what_is_shown(self)
            self.workspace = name
            show_workspace(self, BY_NAME[name], self._kept.get(name))
            self.workspace_actions[name].setChecked(True)
        if view:
            self._show_view(BY_NAME[name].view)

    def lay_out_workspace(self) -> None:
        """A first start: every dock in its place, then the workspace's own layout."""
        place_docks(self)
        show_workspace(self, BY_NAME[self.workspace], self._kept.get(self.workspace))

    def _show_view(self, view: str) -> None:
        if view == "inspect":
            self.show_inspect()
        elif view == "experiments":
            self.show_experiments()
        elif self.tabs.currentWidget() in (self.inspect_view, self.experiments_view):
            self.tabs.setCurrentWidget(self.view)

    def _tab_shown(self, index: int) -> None:
        """The tab shown brings its workspace (a design tab: Design, unless training)."""
        widget = self.tabs.widget(index)
        if widget is None:
            return
        if widget is self.inspect_view:
            self.switch_workspace("inspect", view=False)
        elif widget is self.experiments_view:
            self.switch_workspace("experiments", view=False)
        elif BY_NAME[self.workspace].view != "design":
            self.switch_workspace("design", view=False)

    def show_dock_in_workspace(self, dock_widget: QDockWidget, share: float = 0.4) -> None:
        """Bring a dock into sight in the current workspace (``share`` of the height below a
        view that had the whole window)."""
        alone = not any(not dock(self, n).isHidden() for n in KNOWN_DOCKS)
        dock_widget.show()
        dock_widget.raise_()
        if alone and not dock_widget.isFloating() and \
                self.dockWidgetArea(dock_widget) == Qt.BottomDockWidgetArea:
            self.resizeDocks([dock_widget], [int(share * self.height())], Qt.Vertical)

    # --------------------------------------------------------------------- settings --
    def keep_workspaces(self, settings) -> None:
        """Write every workspace's docks (the current one's as they are now) and the places
        of the docks to ``settings``."""
        self._kept[self.workspace] = what_is_shown(self)
        settings.setValue("window/state", self.saveState(STATE_VERSION))
        settings.setValue("window/workspace", self.workspace)
        settings.setValue("window/workspaces", json.dumps(self._kept))

    def restore_workspaces(self, settings) -> bool:
        """The places and workspaces kept in ``settings`` (before the window is shown);
        whether they came back. The window opens on its Design tab, so in Design or Train
        (Train if it was left there)."""
        try:
            kept = json.loads(settings.value("window/workspaces", "{}"))
        except (TypeError, ValueError):
            kept = {}
        self._kept = {n: v for n, v in kept.items() if n in BY_NAME and isinstance(v, dict)}
        name = settings.value("window/workspace", "design")
        self.workspace = name if name in ("design", "train") else "design"
        self.workspace_actions[self.workspace].setChecked(True)
        state = settings.value("window/state")
        return state is not None and bool(self.restoreState(state, STATE_VERSION))

