"""A trial's values applied to a copy of the project: retyped layers first, then the branches
switched off, then parameters and settings, then the convolution blocks made residual (laid
out again); a SequenceLast follows the recurrent layer it reads into or out of bidirectional.
The project itself is never changed.

A design that turns out invalid raises `DesignError` with the graph's own sentence ("the
design is not valid: ip1 expects ..."): the trial fails with it and the study goes on.
"""
from __future__ import annotations

from designer.graph import project as P
from designer.graph import registry
from designer.graph.errors import GraphError
from designer.graph.layout import layered_positions
from designer.graph.retype import replace_layer

from designer.search.residual import block_of, make_plain, make_residual, residual_parts
from designer.search.space import BOTH, POOL_LAST, Space



def retyping_kinds() -> tuple[str, ...]:
    """The recurrent types a search may make a recurrent layer into (``LAYER.type``), in the
    registry's order: every registered cell that takes padded sequences ('lengths'), as the
    recurrent layers drawn for sequences do, so that a retyped layer keeps every link. A cell
    without a 'lengths' input (the caffe-lstm layer, kept to read and write Caffe's models,
    which always runs unrolled) is none: retyping into it would let go of the layer's
    'lengths' link and count the padding as steps."""
    return tuple(k for k in registry.recurrent_kinds()
                 if any(port.name == "lengths" for port in registry.get(k).inputs))


class DesignError(Exception):
    """A trial's values make no valid net; ``str()`` is one sentence."""


def copy_project(project: P.Project) -> P.Project:
    """An independent copy of ``project`` (its data paths still found from its folder)."""
    folder = project.graph.project_dir or (project.path.parent if project.path else None)
    clone = P.loads(project.to_json(), file=project.path, project_dir=folder)
    clone.path = project.path
    return clone


def apply(project: P.Project, space: Space, values: dict) -> P.Project:
    """A copy of ``project`` with ``values`` (``{key: value}``, as `Space.suggest` gives);
    raises `DesignError` when the result is not a valid net."""
    out = copy_project(project)
    graph = out.graph
    by_role = {role: [d for d in space.dims if d.role == role and d.key in values]
               for role in ("type", "inputs", "param", "setting", "residual")}
    try:
        with graph.bulk():
            for d in by_role["type"]:
                if graph.layer(d.target).type != values[d.key]:
                    replace_layer(graph, d.target, values[d.key])
            # the join nearest the loss first: a branch it keeps may hold another join (a
            # Concat of Concats), which then still has its name when its own choice comes
            at = {name: i for i, name in enumerate(graph.topological_order())}
            for d in sorted(by_role["inputs"], key=lambda d: -at.get(d.target, -1)):
                if d.target in graph and values[d.key] != BOTH:
                    keep_branch(graph, d.target, values[d.key])
            explicit = set()
            for d in by_role["param"]:
                if d.target not in graph:
                    continue  # on a branch switched off
                value = values[d.key]
                if graph.layer(d.target).type == "SequencePool" and d.param == "method" \
                        and value == POOL_LAST:
                    replace_layer(graph, d.target, "SequenceLast")
                    continue
                if not graph.layer(d.target).spec.has_param(d.param):
                    continue  # a parameter of another of the layer's types
                graph.set_param(d.target, d.param, value)
                explicit.add((d.target, d.param))
            follow_bidirectional(graph, explicit)
            changed = [d for d in by_role["residual"] if block_of(graph, d.target) and
                       bool(values[d.key]) != (residual_parts(graph, d.target) is not None)]
            for d in changed:
                (make_residual if values[d.key] else make_plain)(graph, d.target)
            if changed:
                for name, pos in layered_positions(graph).items():
                    graph.move_layer(name, pos)
    except GraphError as e:
        raise DesignError(f"the design is not valid: {e}") from None
    for d in by_role["setting"]:
        getattr(out, d.target)[d.param] = values[d.key]
    errors = graph.errors()
    if errors:
        raise DesignError(f"the design is not valid: {errors[0]}")
    return out


def keep_branch(graph, join: str, keep: str) -> None:
    """Switch off all but one input of ``join`` (a Concat): what fed the kept input (named by
    its port or by its layer) is linked straight on to whatever ``join`` fed, ``join`` goes,
    and so does every layer that fed only the dropped inputs (never a data layer)."""
    links = {link.dst_port: link for link in graph.links_into(join)}
    kept = links.get(keep) or next(link for link in links.values() if link.src == keep)
    dropped = [link.src for link in links.values() if link is not kept]
    consumers = graph.links_out_of(join)
    graph.remove_layer(join)
    for link in consumers:
        graph.connect(kept.src, kept.src_port, link.dst, link.dst_port)
    for name in dropped:
        _drop_unused(graph, name)


def _drop_unused(graph, name: str) -> None:
    """Remove ``name`` when nothing reads it any more, then what fed it, upstream."""
    if name not in graph or graph.links_out_of(name) or graph.layer(name).spec.is_source:
        return
    feeders = {link.src for link in graph.links_into(name)}
    graph.remove_layer(name)
    for src in feeders:
        _drop_unused(graph, src)


def follow_bidirectional(graph, explicit: set) -> None:
    """A SequenceLast reads a recurrent layer as bidirectional exactly when that layer is
    (unless the search sets the SequenceLast's own ``bidirectional``)."""
    for layer in graph.layers():
        if layer.type != "SequenceLast" or (layer.name, "bidirectional") in explicit:
            continue
        link = graph.link_into(layer.name, "x")
        src = None if link is None else graph.layer(link.src)
        if src is None or registry.cell(src.type) is None or \
                not src.spec.has_param("bidirectional"):
            continue
        both = bool(graph.layer(link.src).get("bidirectional"))
        if bool(layer.get("bidirectional")) != both:
            graph.set_param(layer.name, "bidirectional", both)


def drawn_values(project: P.Project, space: Space) -> dict | None:
    """The values of the design as drawn (every dimension of ``space`` read off ``project``),
    queued as a new study's first trial so that the search starts from it; ``None`` when a
    value lies outside its range (the drawn design is then not one the space can make)."""
    graph, values = project.graph, {}
    for d in space.dims:
        if d.role == "setting":
            held = (project.solver_settings() if d.target == "solver"
                    else project.training_settings())
            value = held.get(d.param)
        elif d.role == "type":
            value = graph.layer(d.target).type
        elif d.role == "inputs":
            value = BOTH
        elif d.role == "residual":
            value = residual_parts(graph, d.target) is not None
        else:
            value = graph.layer(d.target).effective_params().get(d.param)
        if d.kind == "choice":
            match = [c for c in d.choices if c == value and type(c) is type(value)]
            if not match:
                return None
        elif value is None or isinstance(value, bool) or not d.low <= value <= d.high:
            return None
        values[d.key] = value
    return values
