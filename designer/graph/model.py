"""The graph model: the single source of truth for a network design.

Every change goes through a method of :class:`Graph`, which validates it, re-infers the shapes of
what lies downstream and emits a fine-grained event. Views (the canvas, the property form, the
problems list) subscribe to the events and never change the model themselves.
"""
from __future__ import annotations

import contextlib
import copy
import difflib
import re
from typing import Iterable

import networkx as nx

from designer.graph import registry
from designer.graph.connecting import check_connect, connect_verdict
from designer.graph.dimbind import bind_dims
from designer.graph.elements import Layer, Link
from designer.graph.errors import (DuplicateNameError, GraphError, GraphWarning, ParamError,
                                   PortError)
from designer.graph.shapes import LayerInfo, infer_layer
from designer.graph.signals import Signal
from designer.graph.spec import LayerSpec, TensorInfo
from designer.graph.validate import collect

__all__ = ["Graph", "Layer", "LayerInfo", "Link"]

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


class Graph:
    """A network design: layers, links, bound dims and everything inferred from them.

    Events (each a :class:`~designer.graph.signals.Signal`):

    ``layer_added(name)``, ``layer_removed(name)``, ``layer_renamed(old, new)``,
    ``layer_moved(name, pos)``, ``link_added(link)``, ``link_removed(link)``,
    ``param_changed(name, key, old, new)``, ``shapes_changed(names)`` (a set of layer names whose
    inferred shapes or problems changed) and ``dims_changed(dims)``.
    """

    def __init__(self, project_dir=None) -> None:
        self.project_dir = project_dir
        self._layers: dict[str, Layer] = {}
        self._g = nx.MultiDiGraph()
        self._info: dict[str, LayerInfo] = {}
        self.dims: dict[str, int] = {}
        self._dim_notes: list[GraphError] = []
        self._pinned: dict[str, int] = {}  # dims fixed from outside (a checkpoint's V)
        self._deferred: list | None = None  # start layers collected inside bulk()
        self._deferred_sources = False
        self.version = 0  # bumped on every change that can alter shapes or problems
        self.layer_added = Signal("layer_added")
        self.layer_removed = Signal("layer_removed")
        self.layer_renamed = Signal("layer_renamed")
        self.layer_moved = Signal("layer_moved")
        self.link_added = Signal("link_added")
        self.link_removed = Signal("link_removed")
        self.param_changed = Signal("param_changed")
        self.shapes_changed = Signal("shapes_changed")
        self.dims_changed = Signal("dims_changed")

    # ---------------------------------------------------------------------------- queries --
    def __contains__(self, name: str) -> bool:
        return name in self._layers

    def __len__(self) -> int:
        return len(self._layers)

    def layer(self, name: str) -> Layer:
        try:
            return self._layers[name]
        except KeyError:
            raise GraphError(f"there is no layer named '{name}'", name) from None

    def layers(self) -> list[Layer]:
        """Every layer, in the order they were added."""
        return list(self._layers.values())

    def names(self) -> list[str]:
        return list(self._layers)

    def links(self) -> list[Link]:
        """Every link, ordered by where its ends are (layer order, then port order)."""
        order = {n: i for i, n in enumerate(self._layers)}

        def key(link: Link):
            src, dst = self._layers[link.src].spec, self._layers[link.dst].spec
            return (order[link.src], src.output_index(link.src_port), order[link.dst],
                    dst.input_index(link.dst_port))
        return sorted((d["link"] for _, _, d in self._g.edges(data=True)), key=key)

    def index_of(self, name: str) -> int:
        """The layer's place in the order layers are listed and saved in."""
        return self.names().index(name)

    def links_into(self, name: str) -> list[Link]:
        return [d["link"] for _, _, d in self._g.in_edges(name, data=True)]

    def links_out_of(self, name: str) -> list[Link]:
        return [d["link"] for _, _, d in self._g.out_edges(name, data=True)]

    def link_into(self, name: str, port: str) -> Link | None:
        for link in self.links_into(name):
            if link.dst_port == port:
                return link
        return None

    def info(self, name: str) -> LayerInfo:
        return self._info[name]

    def output(self, name: str, port: str) -> TensorInfo | None:
        spec = self.layer(name).spec
        return self._info[name].outputs[spec.output_index(port)]

    def topological_order(self) -> list[str]:
        """Layer names so that every layer comes after what feeds it."""
        order = {n: i for i, n in enumerate(self._layers)}
        return list(nx.lexicographical_topological_sort(self._g, key=order.__getitem__))

    def sources(self) -> list[str]:
        return [n for n, layer in self._layers.items() if layer.spec.is_source]

    def total_params(self) -> int | None:
        """Learned parameters of the whole net (``None`` while any count is unknown)."""
        total = 0
        for info in self._info.values():
            if info.params is None:
                return None
            total += info.params
        return total

    def problems(self) -> list[GraphError]:
        """Every problem: per layer, in topological order, then data notes (warnings)."""
        return collect(self)

    def errors(self) -> list[GraphError]:
        return [p for p in self.problems() if not isinstance(p, GraphWarning)]

    # ------------------------------------------------------------------------------ edits --
    def unique_name(self, base: str) -> str:
        """``base`` if free, else ``base`` followed by the first free number."""
        base = re.sub(r"[^A-Za-z0-9_\-]", "_", base) or "layer"
        if not base[0].isalpha() and base[0] != "_":
            base = "l" + base
        if base not in self._layers:
            return base
        stem = base.rstrip("0123456789") or base
        i = 1
        while f"{stem}{i}" in self._layers:
            i += 1
        return f"{stem}{i}"

    def add_layer(self, type_id: str, name: str | None = None, params: dict | None = None,
                  pos: Iterable[float] = (0.0, 0.0), index: int | None = None) -> Layer:
        """Add a layer of type ``type_id``; a name is made up from the type when none is given.

        ``index`` places it in the layer order (undoing a removal puts it back where it was);
        by default it goes last. Raises ``UnknownLayerError``, ``DuplicateNameError`` or
        ``ParamError``.
        """
        spec = registry.get(type_id)
        if name is None:
            name = self.unique_name(type_id.lower())
        self._check_name(name)
        checked = {k: self._checked(spec, name, k, v) for k, v in (params or {}).items()}
        layer = Layer(name, type_id, checked, tuple(float(p) for p in pos))
        if index is None or index >= len(self._layers):
            self._layers[name] = layer
        else:
            items = list(self._layers.items())
            items.insert(max(index, 0), (name, layer))
            self._layers = dict(items)
        self._g.add_node(name)
        self._info[name] = LayerInfo()
        self.layer_added.emit(name)
        self._reinfer([name], sources_changed=spec.is_source)
        return layer

    def remove_layer(self, name: str) -> tuple[Layer, list[Link]]:
        """Remove a layer and its links; returns both so the removal can be undone."""
        layer = self.layer(name)
        links = self.links_into(name) + self.links_out_of(name)
        downstream = [link.dst for link in self.links_out_of(name)]
        for link in links:
            self.disconnect(link, _reinfer=False)
        del self._layers[name]
        self._g.remove_node(name)
        del self._info[name]
        self.layer_removed.emit(name)
        self._reinfer(downstream, sources_changed=layer.spec.is_source)
        return copy.deepcopy(layer), links

    def rename_layer(self, old: str, new: str) -> None:
        """Rename a layer, keeping its links and its place in the order."""
        if new == old:
            return
        self.layer(old)
        self._check_name(new)
        links_in, links_out = self.links_into(old), self.links_out_of(old)
        self._layers = {(new if k == old else k): v for k, v in self._layers.items()}
        self._layers[new].name = new
        self._info[new] = self._info.pop(old)
        self._g.remove_node(old)
        self._g.add_node(new)
        for link in links_in:
            self._add_edge(Link(link.src, link.src_port, new, link.dst_port))
        for link in links_out:
            self._add_edge(Link(new, link.src_port, link.dst, link.dst_port))
        self.layer_renamed.emit(old, new)
        # problems and messages name the layer: refresh it and what it feeds
        self._reinfer([new] + [link.dst for link in links_out], sources_changed=False, force=True)

    def move_layer(self, name: str, pos: Iterable[float]) -> None:
        layer = self.layer(name)
        layer.pos = tuple(float(p) for p in pos)
        self.layer_moved.emit(name, layer.pos)

    def set_param(self, name: str, key: str, value) -> None:
        """Set one parameter; raises ``ParamError`` naming the allowed values."""
        layer = self.layer(name)
        spec = layer.spec
        value = self._checked(spec, name, key, value)
        old = layer.get(key)
        layer.params[key] = value
        self.param_changed.emit(name, key, old, value)
        self._reinfer([name], sources_changed=spec.is_source)

    def unset_param(self, name: str, key: str) -> None:
        """Forget an explicitly set parameter (it falls back to the spec's default)."""
        layer = self.layer(name)
        if key not in layer.params:
            return
        old = layer.params.pop(key)
        self.param_changed.emit(name, key, old, layer.get(key))
        self._reinfer([name], sources_changed=layer.spec.is_source)

    def check_connect(self, src: str, src_port: str, dst: str, dst_port: str) -> None:
        """Raise ``PortError`` or ``CycleError`` if this link cannot be made."""
        check_connect(self, src, src_port, dst, dst_port)

    def connect_problem(self, src: str, src_port: str, dst: str, dst_port: str) -> str | None:
        """Why this link could not be made or would leave ``dst`` invalid, or ``None``.

        Used for live feedback while a wire is dragged; changes nothing. See
        :meth:`connect_verdict` for the whole layer's judgement.
        """
        return connect_verdict(self, src, src_port, dst, dst_port).problem

    def connect_verdict(self, src: str, src_port: str, dst: str, dst_port: str):
        """The link judged with the whole layer it feeds (a ``ConnectVerdict``): its problem,
        or what ``dst`` still lacks before the link can be checked."""
        return connect_verdict(self, src, src_port, dst, dst_port)

    def connect(self, src: str, src_port: str, dst: str, dst_port: str) -> Link:
        """Link an output port to a free input port; refuses cycles and taken inputs."""
        self.check_connect(src, src_port, dst, dst_port)
        link = Link(src, src_port, dst, dst_port)
        self._add_edge(link)
        self.link_added.emit(link)
        self._reinfer([dst], sources_changed=False)
        return link

    def disconnect(self, link: Link, _reinfer: bool = True) -> None:
        key = (link.src_port, link.dst_port)
        if not self._g.has_edge(link.src, link.dst, key):
            raise PortError(f"there is no link {link}")
        self._g.remove_edge(link.src, link.dst, key)
        self.link_removed.emit(link)
        if _reinfer:
            self._reinfer([link.dst], sources_changed=False)

    def clear(self) -> None:
        for name in reversed(self.names()):
            self.remove_layer(name)

    def pin_dims(self, dims: dict[str, int]) -> None:
        """Fix dims from outside, e.g. the vocabulary size a checkpoint was trained with, so
        shapes stay known where the data itself cannot be read."""
        self._pinned.update(dims)
        self._reinfer(self.names(), sources_changed=True)

    @contextlib.contextmanager
    def bulk(self):
        """Make many changes, inferring shapes once at the end (loading, pasting, layout)."""
        if self._deferred is not None:
            yield self
            return
        self._deferred, self._deferred_sources = [], False
        try:
            yield self
        finally:
            start, sources = self._deferred, self._deferred_sources
            self._deferred = None
            self._reinfer(start, sources_changed=sources)

    # ---------------------------------------------------------------------------- helpers --
    def _add_edge(self, link: Link) -> None:
        self._g.add_edge(link.src, link.dst, key=(link.src_port, link.dst_port), link=link)

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise GraphError(f"'{name}' is not a usable layer name: use letters, digits, _ and -,"
                             " starting with a letter", name)
        if name in self._layers:
            raise DuplicateNameError(f"a layer named '{name}' already exists", name)

    @staticmethod
    def _checked(spec: LayerSpec, name: str, key: str, value):
        if not spec.has_param(key):
            near = difflib.get_close_matches(key, [p.name for p in spec.params], n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise GraphError(f"{name}: {spec.id} has no parameter '{key}'{hint}", name)
        try:
            return spec.param(key).check(value)
        except ParamError as e:
            raise e.for_layer(name) from None

    def _gather(self, name: str) -> tuple[list, list, list]:
        spec = self._layers[name].spec
        inputs, sources, connected = [], [], []
        for port in spec.inputs:
            link = self.link_into(name, port.name)
            if link is None:
                inputs.append(None), sources.append(None), connected.append(False)
            else:
                inputs.append(self.output(link.src, link.src_port))
                sources.append(link.src)
                connected.append(True)
        return inputs, sources, connected

    def _refresh_dims(self) -> bool:
        dims, self._dim_notes = bind_dims(self)
        if dims != self.dims:
            self.dims = dims
            self.dims_changed.emit(dict(dims))
            return True
        return False

    def _reinfer(self, start: Iterable[str], sources_changed: bool, force: bool = False) -> None:
        """Re-infer ``start`` and, where outputs change, what lies downstream, in order."""
        self.version += 1
        if self._deferred is not None:
            self._deferred.extend(start)
            self._deferred_sources |= sources_changed
            return
        start = [n for n in dict.fromkeys(start) if n in self._layers]
        if sources_changed and self._refresh_dims():
            start = self.names()
        if not start:
            return
        affected, frontier = set(start), list(start)
        while frontier:  # everything downstream of any start layer, in one traversal
            for succ in self._g.successors(frontier.pop()):
                if succ not in affected:
                    affected.add(succ)
                    frontier.append(succ)
        dirty = set(start)
        changed: set[str] = set()
        # the whole graph's order, filtered: a subgraph view is many times slower to sort
        order = nx.topological_sort(self._g)
        for name in (n for n in order if n in affected):
            if name not in dirty:
                continue
            layer = self._layers[name]
            inputs, sources, connected = self._gather(name)
            new = infer_layer(name, layer.spec, layer.params, inputs, sources, connected,
                              self.dims)
            old = self._info.get(name)
            same_out = old is not None and old.outputs == new.outputs
            if force or not same_out or old.inputs != new.inputs or \
                    _problem_texts(old) != _problem_texts(new) or \
                    old.params != new.params or old.flops != new.flops:
                changed.add(name)
            self._info[name] = new
            if not same_out or force:
                dirty.update(self._g.successors(name))
        if changed:
            self.shapes_changed.emit(changed)


def _problem_texts(info: LayerInfo | None) -> list[str]:
    return [] if info is None else [str(p) for p in info.problems]
