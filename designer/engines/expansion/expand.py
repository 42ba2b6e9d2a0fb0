"""The unrolled (CAFFE engine) net of a recurrent layer, as data.

A recurrent layer unrolls as MyCaffe's RecurrentLayer does, one small layer per time step. Per
stacked level and direction it is one **chain**: once an INNER_PRODUCT ``x_transform`` (``W_xc``
and ``b_c``, one block of rows per gate) over all T steps and SLICEs of it and of the
continuation flags; then for every step a SCALE (h_conted = cont_t x h_{t-1}) and the nodes the
cell adds for its step (its product of h_conted by its recurrent weights, the ELTWISE sum with
the step's input transform, its unit: :class:`Step`), which read the states the step found and
make the step's new h and other states; finally a CONCAT of the h_t over time. A cell may give a
whole expansion of its own instead (:func:`own_expansion`).

Two additions go beyond MyCaffe, which has neither:

- **bidirectional**: each level gets a second chain with weights of its own (``W_xc_reverse``...,
  nodes and blobs suffixed ``_reverse``) whose steps run from T down to 1: step t reads h_{t+1}
  (``h_0_reverse`` at step T). A CONCAT along the features joins the two outputs, forward first.
- **lengths** (padding at the end of each sequence): a SEQUENCE_MASK turns the lengths into
  ``valid`` (T, N) flags, sliced per step like ``cont``; after every unit a HOLD keeps the state
  the step found where the step is padding, so the forward chain ends at each sequence's last
  valid step and the backward chain starts at it; a SCALE by ``valid`` zeroes the output at
  padded steps (and with it every gradient through them).

The cells register how they unroll (:func:`chain`, :func:`own_expansion`, :func:`draw_as`) when
they load (each cell's ``expansion`` module, pure as this one); their facts (gates, carried states) come from their specs
(:class:`designer.graph.cell.CellSpec`). This module is pure Python (no torch): the unrolled
engine (:mod:`designer.engines.unrolled`) runs exactly these nodes, and the ``unroll`` command
and the designer's unrolled view show them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from designer.graph import dims as D
from designer.graph import registry
from designer.graph.cell import article

from designer.engines.expansion.data import (SUFFIXES, Expansion, Node, Step,  # noqa: F401
                                              step_rails)  # (public here)


@dataclass(frozen=True)
class Chain:
    """How one chain of a recurrent layer type unrolls.

    ``step(step)`` adds the nodes of one step (:class:`Step`); ``weights(params, hidden,
    rows)`` names the weights a chain holds besides its input transform's ``W_xc`` (rows x E)
    and ``b_c`` (rows), each with its shape, in the order the layer holds them.
    """

    step: Callable[[Step], None]
    weights: Callable[[dict, int, int], dict]


CHAINS: dict[str, Chain] = {}            # layer type -> how its chains unroll
EXPANSIONS: dict[str, Callable] = {}     # layer type -> its own whole expansion
DRAWN_AS: dict[str, str] = {}            # a cell's node type -> the generic node drawn alike


def _no_weights(params: dict, hidden: int, rows: int) -> dict:
    return {}


def chain(*kinds: str, weights: Callable[[dict, int, int], dict] = _no_weights):
    """Decorator: the function adds the nodes of one step of a ``kinds`` chain (see
    :class:`Chain`); ``weights`` names the recurrent weights of one chain and their shapes."""
    def register(step: Callable[[Step], None]):
        for kind in kinds:
            CHAINS[kind] = Chain(step, weights)
        return step
    return register


def own_expansion(*kinds: str):
    """Decorator: the function is the whole expansion of a ``kinds`` layer, called as
    ``expand(params, steps, batch, features, name, lengths)`` -> :class:`Expansion`."""
    def register(expand_kind: Callable):
        for kind in kinds:
            EXPANSIONS[kind] = expand_kind
        return expand_kind
    return register


def draw_as(*node_types: str, like: str = "UNIT") -> None:
    """Draw a cell's ``node_types`` in the unrolled view as the generic node ``like`` (its
    units as ``UNIT``)."""
    for node_type in node_types:
        DRAWN_AS[node_type] = like


def drawn_as(node_type: str) -> str:
    """The generic node type a cell's node type is drawn as: what it registered with
    :func:`draw_as`, ``UNIT`` for the unit its spec names, else the node type itself."""
    if DRAWN_AS.get(node_type):
        return DRAWN_AS[node_type]
    units = {registry.cell(k).unit for k in registry.recurrent_kinds()}
    return "UNIT" if node_type in units else node_type


def unrolls(kind: str) -> bool:
    """Whether a layer type has an unrolled net: every recurrent layer has (its CAFFE
    engine). Reads the specs alone, so the window asks without loading an engine."""
    return registry.cell(kind) is not None


def unrolling_kinds() -> tuple[str, ...]:
    """The layer types whose unrolled net is registered, in the registry's order."""
    return tuple(k for k in registry.recurrent_kinds() if k in CHAINS or k in EXPANSIONS)


def _chain(add, shapes, cell, chain_of: Chain, params: dict, p: str, s: str, reverse: bool,
           steps: int, n_, h: int, g: int, bottom: str, lengths: bool) -> tuple:
    """One direction of one level: the input transform, the rails and the per-step nodes.

    Returns the blob of the outputs over time, the final h blob and the final blobs of the
    other states the chain carries (the cell's ``states`` after h).
    """
    per_step = step_rails(add, shapes, p, s, bottom, g, steps, n_, lengths,
                          (f"{p}W_xc{s}", f"{p}b_c{s}"))
    extra = cell.states[1:]
    h_prev, prevs = f"{p}h_0{s}", [f"{p}{x}_0{s}" for x in extra]
    hs = {}
    prev = 0  # the step whose state the next step reads (0: the initial state)
    order = range(steps, 0, -1) if reverse else range(1, steps + 1)
    for t in order:
        x_t, cont_t = per_step["W_xc_x"][t - 1], per_step["cont"][t - 1]
        hc = f"{p}h_conted_{prev}{s}"
        shapes[hc] = (1, n_, h)
        add(hc, "SCALE", (h_prev, cont_t), (hc,), t, {"axis": 0})
        new = "_new" if lengths else ""
        h_t, news = f"{p}h{new}_{t}{s}", [f"{p}{x}{new}_{t}{s}" for x in extra]
        shapes[h_t] = (1, n_, h)
        for b in news:
            shapes[b] = (1, n_, h)
        chain_of.step(Step(add, shapes, cell, params, p, s, t, prev, n_, g, hc, x_t, cont_t,
                           tuple(prevs), tuple(news), h_t))
        if lengths:  # padded steps keep the state they found
            held_h, held = f"{p}h_{t}{s}", [f"{p}{x}_{t}{s}" for x in extra]
            for b in [held_h] + held:
                shapes[b] = (1, n_, h)
            add(f"{p}hold_{t}{s}", "HOLD", tuple(news) + (h_t,) + tuple(prevs) +
                (h_prev, per_step["valid"][t - 1]), tuple(held) + (held_h,), t)
            h_t, news = held_h, held
        hs[t] = h_t
        h_prev, prevs, prev = h_t, news, t
    out = f"{p}h{s}"
    shapes[out] = (steps, n_, h)
    add(f"{p}h_concat{s}", "CONCAT", tuple(hs[t] for t in range(1, steps + 1)), (out,), None,
        {"axis": 0})
    return out, h_prev, prevs


def expand_params(kind: str, params: dict, steps: int, batch, features, name: str = "rnn",
                  lengths: bool = False) -> Expansion:
    """Expand a recurrent layer of ``kind`` with effective ``params`` over ``steps`` steps.

    ``batch`` (N) and ``features`` (E) may be ints or dim names; only shapes depend on them.
    ``lengths``: the layer gets each sequence's valid length, and its padded steps are masked
    (a SEQUENCE_MASK once, a HOLD per step keeping the state, a SCALE zeroing the outputs).
    """
    cell, chain_of = registry.cell(kind), CHAINS.get(kind)
    if cell is None or (chain_of is None and kind not in EXPANSIONS):
        raise ValueError(f"{name} ({kind}) is not a recurrent layer")
    if steps < 1:
        raise ValueError(f"{name}: the number of steps must be at least 1, not {steps}")
    if chain_of is None:
        return EXPANSIONS[kind](params, steps, batch, features, name, lengths)
    h = params["num_output"]
    g = len(cell.gates) * h
    levels = params.get("num_layers", 1)
    dirs = 2 if params.get("bidirectional", False) else 1
    dropout = params.get("dropout_ratio", 0.0)
    t_, n_ = steps, batch
    shapes: dict = {"x": (t_, n_, features), "cont": (t_, n_)}
    nodes: list[Node] = []
    weights: dict = {}
    inputs = ["x", "cont"]
    outputs = []
    level, direction = 0, 0

    def add(node_name, node_type, bottoms, tops, step, node_params=None):
        nodes.append(Node(node_name, node_type, tuple(bottoms), tuple(tops), step, level,
                          node_params or {}, direction))

    if lengths:
        inputs.append("lengths")
        shapes["lengths"], shapes["valid"] = (n_,), (t_, n_)
        add("valid", "SEQUENCE_MASK", ("lengths",), ("valid",), None, {"steps": t_})
    bottom = "x"
    for lv in range(levels):
        level = lv
        p = f"L{lv}/" if levels > 1 else ""
        e = features if lv == 0 else dirs * h
        outs = []
        for d in range(dirs):
            direction = d
            s = SUFFIXES[d]
            for x0 in cell.states:
                shapes[f"{p}{x0}_0{s}"] = (1, n_, h)
                inputs.append(f"{p}{x0}_0{s}")
            weights[f"{p}W_xc{s}"], weights[f"{p}b_c{s}"] = (g, e), (g,)
            for stem, shape in chain_of.weights(params, h, g).items():
                weights[f"{p}{stem}{s}"] = shape
            out, h_last, lasts = _chain(add, shapes, cell, chain_of, params, p, s, d == 1, t_,
                                        n_, h, g, bottom, lengths)
            outs.append(out)
            outputs.extend([h_last] + lasts)
        direction = 0
        out = outs[0]
        if dirs == 2:
            out = f"{p}h_both"
            shapes[out] = (t_, n_, dirs * h)
            add(f"{p}directions_concat", "CONCAT", tuple(outs), (out,), None, {"axis": 2})
        if lengths:
            masked = f"{p}h_masked"
            shapes[masked] = (t_, n_, dirs * h)
            add(f"{p}mask_padding", "SCALE", (out, "valid"), (masked,), None, {"axis": 0})
            out = masked
        bottom = out
        if dropout and lv < levels - 1:
            dropped = f"{p}h_dropped"
            shapes[dropped] = (t_, n_, dirs * h)
            add(f"{p}dropout", "DROPOUT", (out,), (dropped,), None, {"dropout_ratio": dropout})
            bottom = dropped
    return Expansion(name, kind, t_, n_, h, levels, nodes, shapes, tuple(inputs),
                     (bottom,) + tuple(outputs), weights, dirs)


def expand(graph, layer: str, steps: int | None = None) -> Expansion:
    """The unrolled net of ``layer`` in ``graph``, with the real shapes of its input.

    ``steps`` defaults to the layer's sequence length T. Raises ``ValueError`` with a sentence
    for a layer that is not recurrent or whose input shape is not known yet.
    """
    lay = graph.layer(layer)
    kinds = unrolling_kinds()
    if lay.type not in kinds:
        named = " and ".join(filter(None, (", ".join(kinds[:-1]), kinds[-1]))) if kinds else ""
        raise ValueError(f"{layer} is {article(lay.type)} layer; only {named or 'recurrent'} "
                         "layers unroll")
    x = graph.info(layer).inputs[0] if graph.info(layer).inputs else None
    if x is None or x.rank != 3:
        raise ValueError(f"{layer} has no input sequence yet, so it cannot be unrolled; connect "
                         "its 'x' input first")
    params = lay.effective_params()
    first = params.get("batch_first", False)
    t_, n_ = (x.shape[1], x.shape[0]) if first else (x.shape[0], x.shape[1])
    if steps is None:
        if not D.known(t_):
            raise ValueError(f"{layer}: the sequence length is not known; give the steps")
        steps = t_
    lengths = any(port.name == "lengths" for port in lay.spec.inputs) and \
        graph.link_into(layer, "lengths") is not None
    return expand_params(lay.type, params, int(steps), n_, x.shape[2], layer, lengths)


def read_levels(exp: Expansion, read_chain, make_level) -> list | None:
    """Walk ``exp``'s nodes level by level, as the fast executors compile them.

    Each level is one chain per direction (``read_chain(take, bottom, prefix, suffix,
    reverse)``, which takes its nodes with ``take(*types)`` and returns ``None`` when they
    are not the expected ones), the two directions' CONCAT when bidirectional and an optional
    DROPOUT. Returns ``[make_level(chains, out, dropout, dropped)]`` per level, or ``None``
    when the nodes are not exactly that pattern.
    """
    nodes, i, levels = exp.nodes, 0, []

    def take(*kinds):
        nonlocal i
        if i >= len(nodes) or nodes[i].type not in kinds:
            raise LookupError
        i += 1
        return nodes[i - 1]

    try:
        bottom = "x"
        for lv in range(exp.levels):
            p = f"L{lv}/" if exp.levels > 1 else ""
            chains = []
            for d in range(exp.directions):
                chain_read = read_chain(take, bottom, p, SUFFIXES[d], d == 1)
                if chain_read is None:
                    return None
                chains.append(chain_read)
            out = chains[0].out
            if exp.directions == 2:
                cat = take("CONCAT")
                if cat.bottoms != (chains[0].out, chains[1].out) or cat.params["axis"] != 2:
                    return None
                out = cat.tops[0]
            drop, dropped = 0.0, out
            if i < len(nodes) and nodes[i].type == "DROPOUT":
                d = take("DROPOUT")
                if d.bottoms != (out,):
                    return None
                drop, dropped = d.params["dropout_ratio"], d.tops[0]
            levels.append(make_level(chains, out, drop, dropped))
            bottom = dropped
    except (LookupError, KeyError, ValueError, IndexError):
        return None
    return levels if i == len(nodes) else None
