"""The unrolled (Caffe engine) net of a recurrent layer, as data.

``expand`` builds, for one LSTM/GRU/RNN/LSTMSimple layer, the same per-time-step net MyCaffe's
RecurrentLayer builds: once an INNER_PRODUCT ``x_transform`` over all T steps and SLICEs of it and
of the continuation flags; then for every step SCALE (h_conted = cont_t x h_{t-1}),
INNER_PRODUCT (W_hc x h_conted, no bias), ELTWISE sum with the step's input transform and the
unit (LSTM_UNIT, GRU_UNIT, or TANH/RELU for a plain RNN); finally a CONCAT of the h_t over time.

This module is pure Python (no torch): the unrolled engine (``designer.engines.unrolled``) runs
exactly these nodes, and the ``unroll`` command and the designer's unrolled view show them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from designer.graph import dims as D

GATES = {"LSTM": 4, "LSTMSimple": 4, "GRU": 3, "RNN": 1}
RECURRENT = tuple(GATES)


@dataclass(frozen=True)
class Node:
    """One layer of the unrolled net.

    ``bottoms`` and ``tops`` name blobs (see ``Expansion.shapes``); ``step`` is the 1-based time
    step (``None`` for the once-per-layer nodes); ``level`` the stacked layer (0-based).
    """

    name: str
    type: str
    bottoms: tuple
    tops: tuple
    step: int | None = None
    level: int = 0
    params: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Expansion:
    """The unrolled net of one recurrent layer: its nodes in execution order and blob shapes."""

    layer: str
    kind: str
    steps: int
    batch: object
    hidden: int
    levels: int
    nodes: list
    shapes: dict          # blob -> shape tuple (ints or dim names)
    inputs: tuple         # blobs fed from outside: x, cont, and the initial states per level
    outputs: tuple        # the blob holding the output sequence, and the final states
    weights: dict         # weight name -> shape

    def counts(self) -> dict:
        """How many nodes of each type."""
        return dict(Counter(n.type for n in self.nodes))

    def edges(self) -> list[tuple[str, str, str]]:
        """(producer node, consumer node, blob) for every blob passed between nodes."""
        producer = {}
        for n in self.nodes:
            for t in n.tops:
                producer[t] = n.name
        out = []
        for n in self.nodes:
            for b in n.bottoms:
                if b in producer:
                    out.append((producer[b], n.name, b))
        return out

    def step_nodes(self, step: int, level: int = 0) -> list[Node]:
        return [n for n in self.nodes if n.step == step and n.level == level]

    def to_json(self) -> dict:
        edges = self.edges()
        return {
            "layer": self.layer,
            "type": self.kind,
            "steps": self.steps,
            "levels": self.levels,
            "node_count": len(self.nodes),
            "edge_count": len(edges),
            "counts": self.counts(),
            "weights": {k: list(v) for k, v in self.weights.items()},
            "nodes": [
                {"name": n.name, "type": n.type, "step": n.step, "level": n.level,
                 "bottoms": list(n.bottoms), "tops": list(n.tops),
                 "bottom_shapes": [list(self.shapes[b]) for b in n.bottoms],
                 "top_shapes": [list(self.shapes[t]) for t in n.tops]}
                for n in self.nodes
            ],
        }


def _unit_type(kind: str, params: dict) -> str:
    if kind in ("LSTM", "LSTMSimple"):
        return "LSTM_UNIT"
    if kind == "GRU":
        return "GRU_UNIT"
    return "RELU" if params.get("nonlinearity") == "relu" else "TANH"


def expand_params(kind: str, params: dict, steps: int, batch, features, name: str = "rnn",
                  ) -> Expansion:
    """Expand a recurrent layer of ``kind`` with effective ``params`` over ``steps`` steps.

    ``batch`` (N) and ``features`` (E) may be ints or dim names; only shapes depend on them.
    """
    if kind not in GATES:
        raise ValueError(f"{name} ({kind}) is not a recurrent layer")
    if steps < 1:
        raise ValueError(f"{name}: the number of steps must be at least 1, not {steps}")
    h = params["num_output"]
    g = GATES[kind] * h
    levels = params.get("num_layers", 1)
    dropout = params.get("dropout_ratio", 0.0)
    t_, n_ = steps, batch
    shapes: dict = {"x": (t_, n_, features), "cont": (t_, n_)}
    nodes: list[Node] = []
    weights: dict = {}
    inputs = ["x", "cont"]
    outputs = []
    bottom = "x"
    unit = _unit_type(kind, params)
    for lv in range(levels):
        p = f"L{lv}/" if levels > 1 else ""
        e = features if lv == 0 else h
        h0, c0 = f"{p}h_0", f"{p}c_0"
        shapes[h0] = (1, n_, h)
        inputs.append(h0)
        if unit == "LSTM_UNIT":
            shapes[c0] = (1, n_, h)
            inputs.append(c0)
        wx, bx, wh = f"{p}W_xc", f"{p}b_c", f"{p}W_hc"
        weights[wx], weights[bx], weights[wh] = (g, e), (g,), (g, h)
        if kind == "GRU":
            weights[f"{p}b_hc"] = (g,)
        xt = f"{p}W_xc_x"
        shapes[xt] = (t_, n_, g)
        nodes.append(Node(f"{p}x_transform", "INNER_PRODUCT", (bottom,), (xt,), None, lv,
                          {"num_output": g, "axis": 2, "bias_term": True,
                           "weights": (wx, bx)}))
        x_steps = tuple(f"{p}W_xc_x_{t}" for t in range(1, t_ + 1))
        nodes.append(Node(f"{p}W_xc_x_slice", "SLICE", (xt,), x_steps, None, lv, {"axis": 0}))
        cont_steps = tuple(f"{p}cont_{t}" for t in range(1, t_ + 1))
        nodes.append(Node(f"{p}cont_slice", "SLICE", ("cont",), cont_steps, None, lv,
                          {"axis": 0}))
        for b in x_steps:
            shapes[b] = (1, n_, g)
        for b in cont_steps:
            shapes[b] = (1, n_)
        h_prev, c_prev = h0, c0
        hs = []
        for t in range(1, t_ + 1):
            hc = f"{p}h_conted_{t - 1}"
            shapes[hc] = (1, n_, h)
            nodes.append(Node(f"{p}h_conted_{t - 1}", "SCALE", (h_prev, cont_steps[t - 1]),
                              (hc,), t, lv, {"axis": 0}))
            wh_h = f"{p}W_hc_h_{t - 1}"
            shapes[wh_h] = (1, n_, g)
            bias = (f"{p}b_hc",) if kind == "GRU" else ()
            nodes.append(Node(f"{p}transform_{t}", "INNER_PRODUCT", (hc,), (wh_h,), t, lv,
                              {"num_output": g, "axis": 2, "bias_term": kind == "GRU",
                               "weights": (wh,) + bias}))
            h_t = f"{p}h_{t}"
            shapes[h_t] = (1, n_, h)
            if unit == "GRU_UNIT":
                nodes.append(Node(f"{p}unit_{t}", "GRU_UNIT", (hc, wh_h, x_steps[t - 1]),
                                  (h_t,), t, lv))
            else:
                gi = f"{p}gate_input_{t}"
                shapes[gi] = (1, n_, g)
                nodes.append(Node(f"{p}gate_input_{t}", "ELTWISE", (wh_h, x_steps[t - 1]),
                                  (gi,), t, lv, {"operation": "SUM"}))
                if unit == "LSTM_UNIT":
                    c_t = f"{p}c_{t}"
                    shapes[c_t] = (1, n_, h)
                    nodes.append(Node(f"{p}unit_{t}", "LSTM_UNIT", (c_prev, gi,
                                                                    cont_steps[t - 1]),
                                      (c_t, h_t), t, lv))
                    c_prev = c_t
                else:
                    nodes.append(Node(f"{p}unit_{t}", unit, (gi,), (h_t,), t, lv))
            hs.append(h_t)
            h_prev = h_t
        out = f"{p}h"
        shapes[out] = (t_, n_, h)
        nodes.append(Node(f"{p}h_concat", "CONCAT", tuple(hs), (out,), None, lv, {"axis": 0}))
        outputs.extend([h_prev] + ([c_prev] if unit == "LSTM_UNIT" else []))
        bottom = out
        if dropout and lv < levels - 1:
            dropped = f"{p}h_dropped"
            shapes[dropped] = (t_, n_, h)
            nodes.append(Node(f"{p}dropout", "DROPOUT", (out,), (dropped,), None, lv,
                              {"dropout_ratio": dropout}))
            bottom = dropped
    return Expansion(name, kind, t_, n_, h, levels, nodes, shapes, tuple(inputs),
                     (bottom,) + tuple(outputs), weights)


def expand(graph, layer: str, steps: int | None = None) -> Expansion:
    """The unrolled net of ``layer`` in ``graph``, with the real shapes of its input.

    ``steps`` defaults to the layer's sequence length T. Raises ``ValueError`` with a sentence
    for a layer that is not recurrent or whose input shape is not known yet.
    """
    lay = graph.layer(layer)
    if lay.type not in GATES:
        article = "an" if lay.type[:1] in "AEIOU" else "a"
        raise ValueError(f"{layer} is {article} {lay.type} layer; only LSTM, GRU, RNN and "
                         "LSTMSimple layers unroll")
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
    return expand_params(lay.type, params, int(steps), n_, x.shape[2], layer)
