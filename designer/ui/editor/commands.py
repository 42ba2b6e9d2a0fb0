"""Undoable edits: one small ``QUndoCommand`` per kind of change, each calling the model API.

The document runs a command once before pushing it (:meth:`ModelCommand.apply`), so a change the
model refuses raises its ``GraphError`` and never reaches the stack; the stack's first ``redo``
is then skipped.
"""
from __future__ import annotations

import time

from PySide6.QtGui import QUndoCommand

from designer.graph.model import Link

MERGE_SECONDS = 1.5  # parameter edits closer together than this undo as one step


class ModelCommand(QUndoCommand):
    """A command applied once by the document, then redone and undone by the stack."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._applied = False

    def apply(self) -> None:
        raise NotImplementedError

    def revert(self) -> None:
        raise NotImplementedError

    def redo(self) -> None:
        if self._applied:
            self._applied = False
            return
        self.apply()

    def undo(self) -> None:
        self.revert()


class AddLayer(ModelCommand):
    """Add a layer, last in the order or at ``index`` (a layer replaced keeps its place)."""

    def __init__(self, graph, type_id: str, name: str, params: dict, pos,
                 index: int | None = None) -> None:
        super().__init__(f"Add {name}")
        self.graph, self.args = graph, (type_id, name, dict(params), tuple(pos))
        self.index = index

    def apply(self) -> None:
        self.graph.add_layer(*self.args, index=self.index)

    def revert(self) -> None:
        self.graph.remove_layer(self.args[1])


class RemoveItems(ModelCommand):
    """Remove layers (with their links) and links, as one step."""

    def __init__(self, graph, names: list[str], links: list[Link]) -> None:
        what = ", ".join(names) if names else f"{len(links)} link{'s' * (len(links) > 1)}"
        super().__init__(f"Delete {what}")
        self.graph, self.names = graph, list(names)
        self.links = [k for k in links if k.src not in names and k.dst not in names]
        self.removed: list = []
        self.cut: list[Link] = []

    def apply(self) -> None:
        g, self.removed, self.cut = self.graph, [], list(self.links)
        order = {n: i for i, n in enumerate(g.names())}
        with g.bulk():
            for link in self.links:
                g.disconnect(link)
            for name in sorted(self.names, key=order.__getitem__):
                index = g.index_of(name) + len(self.removed)  # its place before any removal
                layer, links = g.remove_layer(name)
                self.removed.append((index, layer))
                self.cut.extend(k for k in links if k not in self.cut)

    def revert(self) -> None:
        g = self.graph
        with g.bulk():
            for index, layer in self.removed:  # ascending: each goes back where it was
                g.add_layer(layer.type, layer.name, layer.params, layer.pos, index)
            for link in self.cut:
                g.connect(link.src, link.src_port, link.dst, link.dst_port)


class MoveLayers(ModelCommand):
    def __init__(self, graph, moves: dict, text: str | None = None) -> None:
        names = list(moves)
        super().__init__(text or (f"Move {names[0]}" if len(names) == 1 else
                                  f"Move {len(names)} layers"))
        self.graph, self.moves = graph, dict(moves)

    def apply(self) -> None:
        for name, (_, new) in self.moves.items():
            self.graph.move_layer(name, new)

    def revert(self) -> None:
        for name, (old, _) in self.moves.items():
            self.graph.move_layer(name, old)


class Connect(ModelCommand):
    def __init__(self, graph, src: str, src_port: str, dst: str, dst_port: str) -> None:
        super().__init__(f"Connect {src}.{src_port} to {dst}.{dst_port}")
        self.graph, self.link = graph, Link(src, src_port, dst, dst_port)

    def apply(self) -> None:
        k = self.link
        self.graph.connect(k.src, k.src_port, k.dst, k.dst_port)

    def revert(self) -> None:
        self.graph.disconnect(self.link)


class Disconnect(ModelCommand):
    def __init__(self, graph, link: Link) -> None:
        super().__init__(f"Disconnect {link}")
        self.graph, self.link = graph, link

    def apply(self) -> None:
        self.graph.disconnect(self.link)

    def revert(self) -> None:
        k = self.link
        self.graph.connect(k.src, k.src_port, k.dst, k.dst_port)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()  # the value of a parameter that falls back to its default


class SetParam(ModelCommand):
    """Set (or, with ``UNSET``, forget) a layer parameter; quick successive edits merge."""

    ID = 1001

    def __init__(self, graph, name: str, key: str, value, text: str | None = None) -> None:
        verb = "Reset" if value is UNSET else "Set"
        super().__init__(text or f"{verb} {name}.{key}")
        self.graph, self.name, self.key, self.value = graph, name, key, value
        self.mergeable = text is None  # a named step (a fix) stays a step of its own
        layer = graph.layer(name)
        self.old = layer.params.get(key, UNSET)
        self.when = time.monotonic()

    def _set(self, value) -> None:
        if value is UNSET:
            self.graph.unset_param(self.name, self.key)
        else:
            self.graph.set_param(self.name, self.key, value)

    def apply(self) -> None:
        self._set(self.value)

    def revert(self) -> None:
        self._set(self.old)

    def id(self) -> int:
        return self.ID if self.mergeable else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetParam) or (other.name, other.key) != (self.name, self.key):
            return False
        if other.when - self.when > MERGE_SECONDS:
            return False
        self.value, self.when = other.value, other.when
        return True


class RenameLayer(ModelCommand):
    def __init__(self, graph, old: str, new: str) -> None:
        super().__init__(f"Rename {old} to {new}")
        self.graph, self.old, self.new = graph, old, new

    def apply(self) -> None:
        self.graph.rename_layer(self.old, self.new)

    def revert(self) -> None:
        self.graph.rename_layer(self.new, self.old)


class SetSetting(ModelCommand):
    """Set (or forget) a solver or training setting, or the project's name or description."""

    def __init__(self, doc, section: str, key: str, value) -> None:
        super().__init__(f"Set {section} {key}" if section != "project" else f"Set project {key}")
        self.doc, self.section, self.key, self.value = doc, section, key, value
        self.old = doc.setting(section, key)

    def apply(self) -> None:
        self.doc.store_setting(self.section, self.key, self.value)

    def revert(self) -> None:
        self.doc.store_setting(self.section, self.key, self.old)


class AddLayers(ModelCommand):
    """Add several layers and the links among them (paste, duplicate)."""

    def __init__(self, graph, layers: list[dict], links: list[Link], text: str) -> None:
        super().__init__(text)
        self.graph, self.layers, self.links = graph, layers, links

    def apply(self) -> None:
        g = self.graph
        with g.bulk():
            for d in self.layers:
                g.add_layer(d["type"], d["name"], d.get("params", {}), d.get("pos", (0, 0)))
            for k in self.links:
                g.connect(k.src, k.src_port, k.dst, k.dst_port)

    def revert(self) -> None:
        g = self.graph
        with g.bulk():
            for d in reversed(self.layers):
                g.remove_layer(d["name"])
