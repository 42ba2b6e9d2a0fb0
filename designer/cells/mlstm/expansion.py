"""The unrolled (CAFFE engine) net of an mLSTM layer, as data.

Per level: an INNER_PRODUCT ``x_transform`` over all T steps (q, k, v, o, i~ and f~ at once:
every gate reads the input alone), SLICEs of it and of the continuation flags (and, with
lengths, of the valid-step flags), then per step one MLSTM_UNIT of the state the step finds
(``C``, ``n``, ``m``), the step's input transform and its continuation flag, giving the new
state and ``h_t``; with lengths a HOLD keeps the state the step found where it is padding.
A CONCAT gathers the h_t over time, a SCALE by ``valid`` zeroes the padded steps' outputs (and
with them every gradient through them), and a DROPOUT sits between stacked levels.

The same :class:`designer.engines.expansion.expand.Expansion` as the other recurrent layers', given
as the mLSTM's own (:func:`designer.engines.expansion.expand.own_expansion`), so the ``unroll``
command, the unrolled view and the exports show it (pure Python); the MLSTM_UNIT op
(:mod:`designer.cells.mlstm.engines.unrolled`) runs a step of it on the reference executor.
"""
from __future__ import annotations

from designer.cells.mlstm.spec import CELL, rows, state_sizes

from designer.engines.expansion.expand import Expansion, Node, draw_as, own_expansion, step_rails

STATES = CELL.states  # (C, n, m): what a step reads and makes
draw_as(CELL.unit)


@own_expansion("mLSTM")
def expand_mlstm(params: dict, steps: int, batch, features, name: str = "rnn",
                 lengths: bool = False) -> Expansion:
    """Expand an mLSTM layer with effective ``params`` over ``steps`` steps (see the module
    doc); ``batch`` and ``features`` may be ints or dim names."""
    if steps < 1:
        raise ValueError(f"{name}: the number of steps must be at least 1, not {steps}")
    h, heads = params["num_output"], params.get("num_heads", 1)
    g, sizes = rows(h, heads), state_sizes(h, heads)
    levels, dropout = params.get("num_layers", 1), params.get("dropout_ratio", 0.0)
    unit = {"heads": heads, "forget_gate": params.get("forget_gate", "sigmoid"),
            "norm": params.get("cell_norm", "head")}
    t_, n_ = steps, batch
    shapes: dict = {"x": (t_, n_, features), "cont": (t_, n_)}
    nodes: list[Node] = []
    weights: dict = {}
    inputs, outputs = ["x", "cont"], []
    level = 0

    def add(node_name, node_type, bottoms, tops, step, node_params=None):
        nodes.append(Node(node_name, node_type, tuple(bottoms), tuple(tops), step, level,
                          node_params or {}))

    if lengths:
        inputs.append("lengths")
        shapes["lengths"], shapes["valid"] = (n_,), (t_, n_)
        add("valid", "SEQUENCE_MASK", ("lengths",), ("valid",), None, {"steps": t_})
    bottom = "x"
    for lv in range(levels):
        level = lv
        p = f"L{lv}/" if levels > 1 else ""
        e = features if lv == 0 else h
        state = tuple(f"{p}{s}_0" for s in STATES)
        for blob, size in zip(state, sizes):
            shapes[blob] = (1, n_, size)
        inputs.extend(state)
        weights[f"{p}W_xc"], weights[f"{p}b_c"] = (g, e), (g,)
        per_step = step_rails(add, shapes, p, "", bottom, g, t_, n_, lengths,
                              (f"{p}W_xc", f"{p}b_c"))
        hs = []
        for t in range(1, t_ + 1):
            new = "_new" if lengths else ""
            made = tuple(f"{p}{s}{new}_{t}" for s in STATES)
            h_t = f"{p}h_{t}"
            for blob, size in zip(made, sizes):
                shapes[blob] = (1, n_, size)
            shapes[h_t] = (1, n_, h)
            add(f"{p}unit_{t}", CELL.unit,
                state + (per_step["W_xc_x"][t - 1], per_step["cont"][t - 1]), made + (h_t,), t,
                unit)
            if lengths:  # padded steps keep the state they found
                held = tuple(f"{p}{s}_{t}" for s in STATES)
                for blob, size in zip(held, sizes):
                    shapes[blob] = (1, n_, size)
                add(f"{p}hold_{t}", "HOLD", made + state + (per_step["valid"][t - 1],), held, t)
                made = held
            state = made
            hs.append(h_t)
        outputs.extend(state)
        out = f"{p}h"
        shapes[out] = (t_, n_, h)
        add(f"{p}h_concat", "CONCAT", tuple(hs), (out,), None, {"axis": 0})
        if lengths:
            masked = f"{p}h_masked"
            shapes[masked] = (t_, n_, h)
            add(f"{p}mask_padding", "SCALE", (out, "valid"), (masked,), None, {"axis": 0})
            out = masked
        bottom = out
        if dropout and lv < levels - 1:
            dropped = f"{p}h_dropped"
            shapes[dropped] = (t_, n_, h)
            add(f"{p}dropout", "DROPOUT", (out,), (dropped,), None, {"dropout_ratio": dropout})
            bottom = dropped
    return Expansion(name, "mLSTM", t_, n_, h, levels, nodes, shapes, tuple(inputs),
                     (bottom,) + tuple(outputs), weights, 1)
