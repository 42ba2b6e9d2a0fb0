"""The unrolled (Caffe engine) net of a recurrent layer, as data.

``expand`` builds, for one LSTM/GRU/RNN/LSTMSimple layer, the same per-time-step net MyCaffe's
RecurrentLayer builds: once an INNER_PRODUCT ``x_transform`` over all T steps and SLICEs of it and
of the continuation flags; then for every step SCALE (h_conted = cont_t x h_{t-1}),
INNER_PRODUCT (W_hc x h_conted, no bias), ELTWISE sum with the step's input transform and the
unit (LSTM_UNIT, GRU_UNIT, or TANH/RELU for a plain RNN); finally a CONCAT of the h_t over time.
A MinGRU or MinLSTM step, whose gates read only the input, is SCALE and the unit alone
(MIN_GRU_UNIT or MIN_LSTM_UNIT of h_conted and the step's input transform): no W_hc. An sLSTM
step is SCALE, HEAD_INNER_PRODUCT (W_hc, one block per head, times h_conted), ELTWISE and
SLSTM_UNIT, which reads the cell c, normaliser n and stabiliser m and the step's cont (zeroing
them as LSTM_UNIT zeroes c) and gives the new c, n, m and h.

Two additions go beyond MyCaffe, which has neither:

- **bidirectional**: each level gets a second chain with weights of its own (``W_xc_reverse``...,
  nodes and blobs suffixed ``_reverse``) whose steps run from T down to 1: step t reads h_{t+1}
  (``h_0_reverse`` at step T). A CONCAT along the features joins the two outputs, forward first.
- **lengths** (padding at the end of each sequence): a SEQUENCE_MASK turns the lengths into
  ``valid`` (T, N) flags, sliced per step like ``cont``; after every unit a HOLD keeps the state
  the step found where the step is padding, so the forward chain ends at each sequence's last
  valid step and the backward chain starts at it; a SCALE by ``valid`` zeroes the output at
  padded steps (and with it every gradient through them).

This module is pure Python (no torch): the unrolled engine (``designer.engines.unrolled``) runs
exactly these nodes, and the ``unroll`` command and the designer's unrolled view show them.
"""
from __future__ import annotations

from designer.graph import dims as D

from designer.engines.expansion_data import Expansion, Node, step_rails  # noqa: F401  (public here)
from designer.cells.mlstm.engines.unrolled import expand_mlstm

GATES = {"LSTM": 4, "LSTMSimple": 4, "GRU": 3, "RNN": 1, "MinGRU": 2, "MinLSTM": 3,
         "sLSTM": 4}
MIN_UNITS = {"MinGRU": "MIN_GRU_UNIT", "MinLSTM": "MIN_LSTM_UNIT"}
RECURRENT = tuple(GATES)
UNROLLS = RECURRENT + ("mLSTM",)  # the layers with an unrolled net (the mLSTM's: its own)
# the states besides h each chain carries, named as its blobs are (c_t, n_t, m_t)
STATES = {"LSTM_UNIT": ("c",), "SLSTM_UNIT": ("c", "n", "m")}
SUFFIXES = ("", "_reverse")  # of the blobs, nodes and weights of each direction


def _unit_type(kind: str, params: dict) -> str:
    if kind in ("LSTM", "LSTMSimple"):
        return "LSTM_UNIT"
    if kind == "GRU":
        return "GRU_UNIT"
    if kind in MIN_UNITS:
        return MIN_UNITS[kind]
    if kind == "sLSTM":
        return "SLSTM_UNIT"
    return "RELU" if params.get("nonlinearity") == "relu" else "TANH"


def _chain(add, shapes, kind: str, unit: str, p: str, s: str, reverse: bool, steps: int, n_,
           h: int, g: int, bottom: str, lengths: bool, unit_params: dict) -> tuple:
    """One direction of one level: the input transform, the rails and the per-step nodes.

    Returns the blob of the outputs over time, the final h blob and the final blobs of the
    other states (``STATES``: c for an LSTM; c, n and m for an sLSTM).
    """
    wx, bx = f"{p}W_xc{s}", f"{p}b_c{s}"
    per_step = step_rails(add, shapes, p, s, bottom, g, steps, n_, lengths, (wx, bx))
    extra = STATES.get(unit, ())
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
        if unit in MIN_UNITS.values():  # the gates read x_t alone: no recurrent transform
            add(f"{p}unit_{t}{s}", unit, (hc, x_t), (h_t,), t)
        else:
            _recurrent_step(add, shapes, kind, unit, p, s, t, prev, n_, g, hc, x_t, cont_t,
                            prevs, h_t, news, unit_params)
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


def _recurrent_step(add, shapes, kind, unit, p, s, t, prev, n_, g, hc, x_t, cont_t, prevs,
                    h_t, news, unit_params) -> None:
    """A step that reads the state through W_hc: its INNER_PRODUCT (an sLSTM's
    HEAD_INNER_PRODUCT, one block per head), then the unit."""
    wh_h = f"{p}W_hc_h_{prev}{s}"
    shapes[wh_h] = (1, n_, g)
    bias = (f"{p}b_hc{s}",) if kind == "GRU" else ()
    ip = "HEAD_INNER_PRODUCT" if unit == "SLSTM_UNIT" else "INNER_PRODUCT"
    add(f"{p}transform_{t}{s}", ip, (hc,), (wh_h,), t,
        {"num_output": g, "axis": 2, "bias_term": kind == "GRU", "weights": (f"{p}W_hc{s}",)
         + bias})
    if unit == "GRU_UNIT":
        add(f"{p}unit_{t}{s}", "GRU_UNIT", (hc, wh_h, x_t), (h_t,), t)
        return
    gi = f"{p}gate_input_{t}{s}"
    shapes[gi] = (1, n_, g)
    add(gi, "ELTWISE", (wh_h, x_t), (gi,), t, {"operation": "SUM"})
    if unit in STATES:  # LSTM_UNIT: (c, h); SLSTM_UNIT: (c, n, m, h)
        add(f"{p}unit_{t}{s}", unit, tuple(prevs) + (gi, cont_t), tuple(news) + (h_t,), t,
            unit_params)
    else:
        add(f"{p}unit_{t}{s}", unit, (gi,), (h_t,), t)


def expand_params(kind: str, params: dict, steps: int, batch, features, name: str = "rnn",
                  lengths: bool = False) -> Expansion:
    """Expand a recurrent layer of ``kind`` with effective ``params`` over ``steps`` steps.

    ``batch`` (N) and ``features`` (E) may be ints or dim names; only shapes depend on them.
    ``lengths``: the layer gets each sequence's valid length, and its padded steps are masked
    (a SEQUENCE_MASK once, a HOLD per step keeping the state, a SCALE zeroing the outputs).
    """
    if kind == "mLSTM":  # its own expansion (until the cells register theirs)
        return expand_mlstm(params, steps, batch, features, name, lengths)
    if kind not in GATES:
        raise ValueError(f"{name} ({kind}) is not a recurrent layer")
    if steps < 1:
        raise ValueError(f"{name}: the number of steps must be at least 1, not {steps}")
    h = params["num_output"]
    g = GATES[kind] * h
    levels = params.get("num_layers", 1)
    dirs = 2 if params.get("bidirectional", False) else 1
    dropout = params.get("dropout_ratio", 0.0)
    t_, n_ = steps, batch
    shapes: dict = {"x": (t_, n_, features), "cont": (t_, n_)}
    nodes: list[Node] = []
    weights: dict = {}
    inputs = ["x", "cont"]
    outputs = []
    unit = _unit_type(kind, params)
    unit_params = {"forget_gate": params.get("forget_gate", "sigmoid")} if kind == "sLSTM" \
        else {}
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
            for x0 in ("h",) + STATES.get(unit, ()):
                shapes[f"{p}{x0}_0{s}"] = (1, n_, h)
                inputs.append(f"{p}{x0}_0{s}")
            weights[f"{p}W_xc{s}"], weights[f"{p}b_c{s}"] = (g, e), (g,)
            if kind == "sLSTM":
                heads = params.get("num_heads", 1)
                weights[f"{p}W_hc{s}"] = (heads, g // heads, h // heads)
            elif kind not in MIN_UNITS:
                weights[f"{p}W_hc{s}"] = (g, h)
            if kind == "GRU":
                weights[f"{p}b_hc{s}"] = (g,)
            out, h_last, lasts = _chain(add, shapes, kind, unit, p, s, d == 1, t_, n_, h, g,
                                        bottom, lengths, unit_params)
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
    if lay.type not in UNROLLS:
        article = "an" if lay.type[:1] in "AEIOU" else "a"
        raise ValueError(f"{layer} is {article} {lay.type} layer; only LSTM, GRU, RNN, "
                         "LSTMSimple, MinGRU, MinLSTM, mLSTM and sLSTM layers unroll")
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
    if lay.type == "mLSTM":
        return expand_mlstm(params, int(steps), n_, x.shape[2], layer, lengths)
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
                chain = read_chain(take, bottom, p, SUFFIXES[d], d == 1)
                if chain is None:
                    return None
                chains.append(chain)
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
