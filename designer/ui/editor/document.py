"""The open document: a project, its graph and the undo stack every edit goes through.

The views never change the model themselves; they call the methods here, each of which pushes
one undoable command (a drag, a paste or an insertion is one step). A change the model refuses
raises its ``GraphError`` (a sentence for the user) and leaves the stack as it was.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from designer.graph import project as P
from designer.graph import settings as S
from designer.graph.errors import GraphError, ParamError
from designer.graph.model import Link
from designer.graph.retype import kept

from designer.ui.editor import commands as C
from designer.ui.editor.commands import UNSET
from designer.ui.editor.layout import spread_clashes

PROJECT_FIELDS = ("name", "description")


class Document(QObject):
    """A project being edited.

    Signals
    -------
    graph_replaced(graph)
        A new or opened project replaced the graph (views rebuild from it).
    settings_changed(section)
        A solver or training setting, or the project's name or description, changed
        (``section`` is ``solver``, ``training`` or ``project``).
    path_changed()
        The file the document belongs to changed (opened, saved as, new).
    """

    graph_replaced = Signal(object)
    settings_changed = Signal(str)
    path_changed = Signal()

    def __init__(self, project: P.Project | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.stack = QUndoStack(self)
        self.project = project or P.new_project()

    # ------------------------------------------------------------------------- the file --
    @property
    def graph(self):
        return self.project.graph

    @property
    def path(self) -> Path | None:
        return self.project.path

    def is_modified(self) -> bool:
        return not self.stack.isClean()

    def replace(self, project: P.Project) -> None:
        """Start editing ``project``: the undo history is cleared.

        Layers the file places so close that their cards would be drawn over each other are
        moved apart first (`spread_clashes`); that is no edit of the user's, so the document
        stays unmodified, and the file gets the new places when it is next saved.
        """
        self.stack.clear()
        for name, pos in spread_clashes(project.graph).items():
            project.graph.move_layer(name, pos)
        self.project = project
        self.stack.setClean()
        self.graph_replaced.emit(project.graph)
        self.settings_changed.emit("project")
        self.path_changed.emit()

    def new(self) -> None:
        self.replace(P.new_project())

    def open(self, path: str | Path) -> None:
        """Load ``path``; raises ``ProjectError`` (and changes nothing) when it cannot."""
        self.replace(P.load(path))

    def save(self, path: str | Path | None = None) -> Path:
        """Save atomically to ``path`` (or where the project came from); raises ``OSError``."""
        old = self.project.path
        target = self.project.save(path)
        self.stack.setClean()
        if old != target:
            self.path_changed.emit()
        return target

    # ----------------------------------------------------------------------- edits --
    def push(self, cmd: C.ModelCommand) -> None:
        """Apply ``cmd`` (raising if the model refuses it), then put it on the stack."""
        cmd.apply()
        cmd._applied = True
        self.stack.push(cmd)

    def add_layer(self, type_id: str, pos=(0.0, 0.0), name: str | None = None,
                  params: dict | None = None) -> str:
        name = name or self.graph.unique_name(type_id.lower())
        self.push(C.AddLayer(self.graph, type_id, name, params or {}, pos))
        return name

    def insert_on_link(self, type_id: str, link: Link, pos, make_room: dict | None = None,
                       params: dict | None = None) -> str:
        """Add a layer and splice it into ``link`` (first input and first output).

        ``make_room`` moves other layers out of the way (name -> (old, new)), in the same step.
        """
        from designer.graph import registry
        spec = registry.get(type_id)
        if not spec.inputs or not spec.outputs:
            return self.add_layer(type_id, pos, params=params)
        name = self.graph.unique_name(type_id.lower())
        self.stack.beginMacro(f"Insert {name} into {link}")
        try:
            if make_room:
                self.push(C.MoveLayers(self.graph, make_room))
            self.push(C.AddLayer(self.graph, type_id, name, params or {}, pos))
            self.push(C.Disconnect(self.graph, link))
            self.push(C.Connect(self.graph, link.src, link.src_port, name, spec.inputs[0].name))
            self.push(C.Connect(self.graph, name, spec.outputs[0].name, link.dst, link.dst_port))
        finally:
            self.stack.endMacro()
        return name

    def remove(self, names=(), links=()) -> None:
        names, links = list(names), list(links)
        if names or links:
            self.push(C.RemoveItems(self.graph, names, links))

    def move(self, moves: dict, text: str | None = None) -> None:
        """Move layers: ``moves`` maps a name to ``(old_pos, new_pos)``; one undo step."""
        moves = {n: (tuple(o), tuple(p)) for n, (o, p) in moves.items() if tuple(o) != tuple(p)}
        if moves:
            self.push(C.MoveLayers(self.graph, moves, text))

    def connect(self, src: str, src_port: str, dst: str, dst_port: str) -> Link:
        self.graph.check_connect(src, src_port, dst, dst_port)
        self.push(C.Connect(self.graph, src, src_port, dst, dst_port))
        return Link(src, src_port, dst, dst_port)

    def reconnect(self, old: Link, src: str, src_port: str, dst: str, dst_port: str) -> None:
        """Move one end of ``old`` elsewhere, as one step; raises if the new link is refused."""
        g = self.graph
        with g.bulk():  # try the new link without the old one, then put the old one back
            g.disconnect(old)
            try:
                g.check_connect(src, src_port, dst, dst_port)
            finally:
                g.connect(old.src, old.src_port, old.dst, old.dst_port)
        self.stack.beginMacro(f"Reconnect {old}")
        try:
            self.push(C.Disconnect(g, old))
            self.push(C.Connect(g, src, src_port, dst, dst_port))
        finally:
            self.stack.endMacro()

    def disconnect(self, link: Link) -> None:
        self.push(C.Disconnect(self.graph, link))

    def apply_fix(self, fix, pos=None, make_room: dict | None = None) -> None:
        """Make a problem's fix (``designer.graph.hints.Fix``) as one undoable step.

        ``pos`` and ``make_room`` place a layer the fix inserts (default: between the ends).
        """
        g = self.graph
        if fix.kind == "set":
            self.set_param(fix.layer, fix.param, fix.value, fix.text[0].upper() + fix.text[1:])
            return
        if fix.kind == "insert":
            k = fix.link
            if pos is None:
                a, b = g.layer(k.src).pos, g.layer(k.dst).pos
                pos = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            self.insert_on_link(fix.insert_type, k, pos, make_room, fix.insert_params)
            return
        self.stack.beginMacro(fix.text[0].upper() + fix.text[1:])
        try:
            if fix.kind == "rewire":
                k, (src, port) = fix.link, fix.new_source
                self.push(C.Disconnect(g, k))
                self.push(C.Connect(g, src, port, k.dst, k.dst_port))
            elif fix.kind == "connect":
                k = fix.link
                self.push(C.Connect(g, k.src, k.src_port, k.dst, k.dst_port))
            elif fix.kind == "replace":  # the same name, place and links, a new type
                params, links = kept(g, fix.layer, fix.insert_type, fix.insert_params)
                pos, index = g.layer(fix.layer).pos, g.index_of(fix.layer)
                self.push(C.RemoveItems(g, [fix.layer], []))
                self.push(C.AddLayer(g, fix.insert_type, fix.layer, params, pos, index))
                for k in links:
                    self.push(C.Connect(g, k.src, k.src_port, k.dst, k.dst_port))
            elif fix.kind == "bypass":
                into, outs = g.links_into(fix.layer)[0], g.links_out_of(fix.layer)
                self.push(C.RemoveItems(g, [fix.layer], []))
                for k in outs:
                    self.push(C.Connect(g, into.src, into.src_port, k.dst, k.dst_port))
            else:
                raise ValueError(f"unknown fix kind {fix.kind!r}")
        finally:
            self.stack.endMacro()

    def set_param(self, name: str, key: str, value, text: str | None = None) -> None:
        """Set a parameter (``UNSET`` forgets it); raises ``ParamError`` saying what is allowed."""
        layer = self.graph.layer(name)
        if value is not UNSET:
            if not layer.spec.has_param(key):
                raise GraphError(f"{name}: {layer.spec.id} has no parameter '{key}'", name)
            try:
                value = layer.spec.param(key).check(value)
            except ParamError as e:
                raise e.for_layer(name) from None
            if key in layer.params and layer.params[key] == value:
                return
        elif key not in layer.params:
            return
        self.push(C.SetParam(self.graph, name, key, value, text))

    def rename(self, old: str, new: str) -> None:
        if new != old:
            self.push(C.RenameLayer(self.graph, old, new))

    def paste(self, layers: list[dict], links: list[Link], text: str = "Paste") -> list[str]:
        """Add copies of ``layers`` (renamed where taken) with the links among them."""
        taken = set(self.graph.names())
        renamed, out = {}, []
        for d in layers:
            name = d["name"]
            if name in taken:
                name = self.graph.unique_name(name)
                while name in taken:
                    name = self.graph.unique_name(name + "_")
            taken.add(name)
            renamed[d["name"]] = name
            out.append({**d, "name": name})
        new_links = [Link(renamed[k.src], k.src_port, renamed[k.dst], k.dst_port)
                     for k in links if k.src in renamed and k.dst in renamed]
        if out:
            self.push(C.AddLayers(self.graph, out, new_links, text))
        return [d["name"] for d in out]

    # ------------------------------------------------------------------- settings --
    def setting(self, section: str, key: str):
        """The explicit value of a setting (``UNSET`` when it falls back to the default)."""
        if section == "project":
            return getattr(self.project, key)
        return getattr(self.project, section).get(key, UNSET)

    def effective(self, section: str) -> dict:
        return S.effective(section, getattr(self.project, section))

    def store_setting(self, section: str, key: str, value) -> None:
        """Write a setting (commands call this; views call :meth:`set_setting`)."""
        if section == "project":
            setattr(self.project, key, value)
        elif value is UNSET:
            getattr(self.project, section).pop(key, None)
        else:
            getattr(self.project, section)[key] = value
        self.settings_changed.emit(section)

    def set_setting(self, section: str, key: str, value) -> None:
        """Set a solver/training setting or the project's name/description, undoably."""
        if section == "project":
            if key not in PROJECT_FIELDS:
                raise KeyError(key)
            value = str(value)
        elif value is not UNSET:
            spec = next(p for p in S.SECTIONS[section] if p.name == key)
            value = spec.check(value)
        if self.setting(section, key) == value:
            return
        self.push(C.SetSetting(self, section, key, value))
