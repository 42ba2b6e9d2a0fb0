"""Fixes for the problems of a design, found by trying changes rather than by rules per case.

For an error found on layer L, :func:`explain` tries one change at a time, nearest first: on L,
then on the layers that feed it, up to ``MAX_DEPTH`` links upstream:

- every *shaping* parameter (``ParamSpec.shaping``: axis, num_output, batch_first, input_dim,
  top_k...) set to each value that could matter there: the bound dims (``V``), the sizes seen
  around L, the other axes of the input;
- on L itself, its input fed from another output of the same layer (``rewire``), an Embed
  inserted where ids meet a layer that wants features, or a Reshape inserted where a port gets
  the right number of values in the wrong shape (``insert``).

A change is a fix when, re-inferred from where it is made, L has no error left and no layer that
was sound before breaks. The problem is then told on the layer the fix changes (the cause, not
where it showed), with the fix in words, and carries the :class:`Fix`, so that the window can
apply it in one click as an undoable edit and tests can apply it with :func:`apply`.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from designer.graph import dims as D
from designer.graph import registry
from designer.graph.errors import GraphError, RangeError, ShapeError
from designer.graph.retype import replace_layer
from designer.graph.shapes import LayerInfo, infer_layer, resolve_params
from designer.graph.spec import FLOAT, INDEX

MAX_DEPTH = 4      # links upstream of the problem where fixes are looked for
MAX_LAYERS = 24    # layers whose parameters are tried, per problem
MAX_TRIES = 240    # changes tried per problem
MAX_SPREAD = 120   # layers re-inferred per try (beyond: the try is given up)
MAX_PROBLEMS = 12  # problems searched per call; the rest keep their own words


@dataclass(frozen=True)
class Fix:
    """One edit that mends a problem.

    Attributes
    ----------
    kind : str
        ``set`` (``param`` of ``layer`` to ``value``), ``insert`` (a new ``insert_type`` layer
        spliced into ``link``), ``rewire`` (``link``'s destination fed from ``new_source``
        instead), ``bypass`` (``layer`` removed, what fed it feeding what it fed) or
        ``connect`` (``link``, not in the graph yet, made: an optional input wired up) or
        ``replace`` (``layer`` made an ``insert_type`` layer of the same name, with
        ``insert_params``: see :mod:`designer.graph.retype`) or ``pick_data`` (``param`` of
        the data layer ``layer`` set to a file the user picks: the window asks for it).
    layer : str
        The layer the fix changes (for an insert or a rewire: the one whose input changes).
    text : str
        The fix in words: "set ip1's axis to 2".
    gives : str
        For ``set``: what the changed layer outputs afterwards, "(75, 25, 65)".
    """

    kind: str
    layer: str
    text: str
    param: str | None = None
    value: Any = None
    link: Any = None
    insert_type: str | None = None
    insert_params: dict = field(default_factory=dict)
    new_source: tuple | None = None
    gives: str = ""


def value_text(value, dims: dict) -> str:
    """A parameter value as a user writes it: ``true``, ``2``, ``V (65)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value in dims:
        return f"{value} ({dims[value]})"
    return str(value)


def explain(graph, problems: list[GraphError]) -> list[GraphError]:
    """The problems, each shape or range error that one change can mend told with its fix."""
    out, searched = [], 0
    search = _Search(graph)
    for p in problems:
        mend = getattr(p, "mend", None)  # ShapeError.mended: its layer's check knows the change
        if isinstance(p, ShapeError) and p.layer in graph and mend is not None:
            param, value = mend
            text = f"set {p.layer}'s {param} to {value_text(value, graph.dims)}"
            out.append(told(p, Fix("set", p.layer, text, param=param, value=value), graph))
        elif isinstance(p, ShapeError) and p.layer in graph and searched < MAX_PROBLEMS:
            searched += 1
            fix = search.find(p)
            out.append(told(p, fix, graph) if fix else p)
        else:
            out.append(p)
    return out


def told(problem: GraphError, fix: Fix, graph) -> GraphError:
    """A copy of ``problem`` about the layer ``fix`` changes, saying what to do."""
    new = problem.copy()
    new.fix = fix
    new.layer = fix.layer
    msg = problem.message.rstrip(".")
    if isinstance(problem, RangeError) and fix.kind == "set":
        what = "labels" if problem.what == "classes" else "ids"
        old = graph.layer(fix.layer).effective_params().get(fix.param)
        has = f"has {value_text(old, {})} outputs" if fix.param == "num_output" else \
            f"has {fix.param} {value_text(old, {})}"
        msg = f"{fix.layer} {has}, but the {what} take {problem.values} values: {fix.text}"
    elif not (fix.kind == "set" and fix.layer == problem.layer and
              f"set {fix.param} to {value_text(fix.value, {})}" in msg):
        msg = f"{msg}; {fix.text}"
        if fix.gives:
            msg += f" ({fix.layer} then gives {fix.gives})"
    new.message = msg
    return new


def apply(graph, fix: Fix, choice: Any = None) -> None:
    """Make ``fix``'s edit on a graph directly (the window does it through undoable commands);
    ``choice``: for ``pick_data``, the file picked."""
    if fix.kind == "pick_data":
        graph.set_param(fix.layer, fix.param, choice)
    elif fix.kind == "set":
        graph.set_param(fix.layer, fix.param, fix.value)
    elif fix.kind == "rewire":
        k = fix.link
        graph.disconnect(k)
        graph.connect(fix.new_source[0], fix.new_source[1], k.dst, k.dst_port)
    elif fix.kind == "insert":
        k = fix.link
        spec = registry.get(fix.insert_type)
        a, b = graph.layer(k.src).pos, graph.layer(k.dst).pos
        with graph.bulk():
            name = graph.unique_name(fix.insert_type.lower())
            graph.add_layer(fix.insert_type, name, fix.insert_params,
                            ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))
            graph.disconnect(k)
            graph.connect(k.src, k.src_port, name, spec.inputs[0].name)
            graph.connect(name, spec.outputs[0].name, k.dst, k.dst_port)
    elif fix.kind == "connect":
        k = fix.link
        graph.connect(k.src, k.src_port, k.dst, k.dst_port)
    elif fix.kind == "replace":
        replace_layer(graph, fix.layer, fix.insert_type, fix.insert_params)
    elif fix.kind == "bypass":
        into = graph.links_into(fix.layer)[0]
        outs = graph.links_out_of(fix.layer)
        with graph.bulk():
            graph.remove_layer(fix.layer)
            for k in outs:
                graph.connect(into.src, into.src_port, k.dst, k.dst_port)
    else:  # pragma: no cover - a Fix made elsewhere with a new kind
        raise ValueError(f"unknown fix kind {fix.kind!r}")


# ------------------------------------------------------------------------------ search --
class _Search:
    """Tries changes on a graph without changing it: re-inference on the side."""

    def __init__(self, graph) -> None:
        self.g = graph
        self._rank: dict[str, int] | None = None

    @property
    def rank(self) -> dict[str, int]:
        if self._rank is None:
            self._rank = {n: i for i, n in enumerate(self.g.topological_order())}
        return self._rank

    def find(self, problem: ShapeError) -> Fix | None:
        target = problem.layer
        tries = 0
        for depth, names in enumerate(self._upstream(target, problem.port)):
            for name in names:
                for fix, params, feeds, start in self._candidates(name, problem, depth):
                    tries += 1
                    if tries > MAX_TRIES:
                        return None
                    infos = self._simulate(start, params, feeds)
                    if infos is not None and self._mends(target, infos):
                        if fix.kind == "set":
                            outs = infos[name].outputs
                            fix = _with_gives(fix, outs)
                        return fix
        return None

    def _upstream(self, target: str, port: str | None = None):
        """Layers by distance from ``target`` (itself first), along the links into them."""
        seen, level, count = {target}, [target], 0
        for _ in range(MAX_DEPTH + 1):
            if not level or count >= MAX_LAYERS:
                return
            level = level[:MAX_LAYERS - count]
            count += len(level)
            yield level
            nxt = []
            for n in level:
                links = self.g.links_into(n)
                if n == target and port:  # the input the problem is about comes first
                    links.sort(key=lambda k: k.dst_port != port)
                for k in links:
                    if k.src not in seen:
                        seen.add(k.src)
                        nxt.append(k.src)
            level = nxt

    # -- candidates ------------------------------------------------------------------------
    def _candidates(self, name: str, problem: ShapeError, depth: int):
        """``(fix, params, feeds, start)`` for each change to try on ``name``."""
        g = self.g
        layer = g.layer(name)
        spec = layer.spec
        eff = resolve_params(spec, layer.params, g.dims)
        pool = self._sizes(name, problem)
        for p in spec.params:
            if not p.shaping:
                continue
            for v in self._values(name, p, eff[p.name], pool, problem):
                try:
                    v = p.check(v)
                except GraphError:
                    continue
                if v == layer.get(p.name) or D.bind(v, g.dims) == eff[p.name]:
                    continue
                text = f"set {name}'s {p.name} to {value_text(v, g.dims)}"
                fix = Fix("set", name, text, param=p.name, value=v)
                yield fix, {**layer.params, p.name: v}, {}, name
        if depth == 0:
            yield from self._structural(name, problem)

    def _values(self, name: str, p, current, pool: list[int], problem) -> list:
        """Values to try for parameter ``p``: what the problem asks for first (a range
        error's count, and the dim bound to it), then the rest."""
        g = self.g
        need = getattr(problem, "values", None)
        if need is not None and p.kind in ("dim", "int"):
            first = [s for s in sorted(g.dims) if g.dims[s] == need and p.kind == "dim"]
            first += [need] if D.known(need) else []
            rest = self._values(name, p, current, pool, None)
            return first + [v for v in rest if v not in first]
        if p.kind == "bool":
            return [not current]
        if p.kind == "choice":  # a shaping choice (Conv1D's padding): the other choices
            return [c for c in p.choices if c != current]
        if p.name == "axis":
            ins = [t for t in g.info(name).inputs if t is not None]
            rank = ins[0].rank if ins else 3
            ahead = list(range(rank - 1, -1, -1))
            behind = [-k for k in range(1, rank + 1)]
            return behind + ahead if p.default < 0 else ahead + behind
        if p.kind == "dim":
            return [s for s in sorted(g.dims)] + pool
        if p.kind == "int":  # its default first: the way back from a value typed in error
            return [p.default] + [v for v in pool if v != p.default]
        return []

    def _sizes(self, name: str, problem: ShapeError) -> list[int]:
        """Sizes that could be the right value here: bound dims and sizes seen nearby."""
        g, seen = self.g, []
        infos = [g.info(name), g.info(problem.layer)]
        for k in g.links_into(problem.layer):
            infos.append(g.info(k.src))
        extra = [getattr(problem, "values", None), getattr(problem, "size", None)]
        for v in list(g.dims.values()) + extra:
            if D.known(v):
                seen.append(v)
        for info in infos:
            for t in list(info.inputs) + list(info.outputs):
                if t is not None:
                    seen.extend(d for d in t.shape if D.known(d))
        return sorted(set(v for v in seen if v > 0))[:16]

    def _structural(self, name: str, problem: ShapeError):
        """Rewire the input the problem is about, or splice an Embed or a Reshape into it."""
        g = self.g
        ports = [problem.port] if problem.port else [p.name for p in g.layer(name).spec.inputs]
        for port in ports:
            link = g.link_into(name, port)
            if link is None:
                continue
            src_spec = g.layer(link.src).spec
            outs = sorted(src_spec.outputs, key=lambda o: o.name != port)  # label -> label
            for out in outs:
                if out.name == link.src_port:
                    continue
                t = g.output(link.src, out.name)
                text = (f"connect {link.src}.{out.name} to {name}.{port} instead of "
                        f"{link.src}.{link.src_port}")
                fix = Fix("rewire", name, text, link=link, new_source=(link.src, out.name))
                yield fix, None, {(name, port): (t, link.src)}, name
            got = g.output(link.src, link.src_port)
            want_port = g.layer(name).spec.inputs[g.layer(name).spec.input_index(port)]
            if got is None:
                continue
            if got.dtype == INDEX and want_port.dtype == FLOAT:
                yield self._insert(link, "Embed", {}, name, port)
            if problem.port == port and problem.want is not None:
                shape = _reshape_to(got.shape, problem.want)
                if shape is not None:
                    yield self._insert(link, "Reshape", {"shape": shape, "axis": 0,
                                                         "num_axes": -1}, name, port)

    def _insert(self, link, type_id: str, params: dict, name: str, port: str):
        g = self.g
        spec = registry.get(type_id)
        got = g.output(link.src, link.src_port)
        made = infer_layer("(new)", spec, params, [got] + [None] * (len(spec.inputs) - 1),
                           [link.src] + [None] * (len(spec.inputs) - 1),
                           [True] + [False] * (len(spec.inputs) - 1), g.dims)
        a = "an" if type_id[0] in "AEIOU" else "a"
        text = f"insert {a} {type_id} layer between {link.src} and {name}"
        if type_id == "Reshape":
            text += f" (shape {params['shape']})"
        fix = Fix("insert", name, text, link=link, insert_type=type_id,
                  insert_params=dict(params))
        t = made.outputs[0] if made.ok else None
        return fix, None, {(name, port): (t, link.src)}, name

    # -- re-inference on the side ----------------------------------------------------------
    def _simulate(self, start: str, params: dict | None, feeds: dict) -> dict | None:
        """New infos for ``start`` (with ``params``, or its inputs replaced by ``feeds``) and
        what changes downstream of it; ``None`` when the change spreads too far."""
        g, rank = self.g, self.rank
        infos: dict[str, LayerInfo] = {}
        heap, queued = [(rank[start], start)], {start}
        while heap:
            _, name = heapq.heappop(heap)
            if len(infos) >= MAX_SPREAD:
                return None
            layer = g.layer(name)
            inputs, sources, connected = [], [], []
            for port in layer.spec.inputs:
                if (name, port.name) in feeds:
                    t, src = feeds[(name, port.name)]
                    inputs.append(t), sources.append(src), connected.append(True)
                    continue
                k = g.link_into(name, port.name)
                if k is None:
                    inputs.append(None), sources.append(None), connected.append(False)
                    continue
                info = infos.get(k.src) or g.info(k.src)
                i = g.layer(k.src).spec.output_index(k.src_port)
                inputs.append(info.outputs[i] if i < len(info.outputs) else None)
                sources.append(k.src), connected.append(True)
            use = params if (name == start and params is not None) else layer.params
            new = infer_layer(name, layer.spec, use, inputs, sources, connected, g.dims)
            infos[name] = new
            if new.outputs != g.info(name).outputs:
                for k in g.links_out_of(name):
                    if k.dst not in queued:
                        queued.add(k.dst)
                        heapq.heappush(heap, (rank[k.dst], k.dst))
        return infos

    def _mends(self, target: str, infos: dict) -> bool:
        """The target has no error left, and no layer that was sound before breaks."""
        if target not in infos or _errors(infos[target]):
            return False
        for name, new in infos.items():
            old = self.g.info(name)
            sound = not _errors(old) and all(t is not None for t in old.outputs)
            if sound and (_errors(new) or any(t is None for t in new.outputs)):
                return False
        return True


def _errors(info: LayerInfo) -> list:
    return [p for p in info.problems if p.kind != "data"]


def _with_gives(fix: Fix, outs: list) -> Fix:
    shown = [str(t) for t in outs if t is not None and t.rank]
    gives = shown[0] if len(shown) == 1 else ", ".join(shown)
    return Fix(fix.kind, fix.layer, fix.text, fix.param, fix.value, fix.link, fix.insert_type,
               fix.insert_params, fix.new_source, gives)


def _reshape_to(got: tuple, want: tuple) -> list | None:
    """Caffe Reshape ``shape`` (0 copies a dim, -1 is inferred) turning ``got`` into ``want``,
    when both hold the same number of values; ``None`` otherwise."""
    if not D.same(D.numel(got), D.numel(want)) or D.numel(got) == D.numel(()):
        return None
    shape, unknown = [], 0
    for i, w in enumerate(want):
        if i < len(got) and D.same(got[i], w) and all(D.same(got[j], want[j]) for j in range(i)):
            shape.append(0)
        elif D.known(w):
            shape.append(w)
        else:
            shape.append(-1)
            unknown += 1
    if unknown > 1:
        return None
    if unknown == 0 and len(shape) == 1:
        shape = [-1]
    return shape
