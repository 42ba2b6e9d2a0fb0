"""MinGRU and MinLSTM (Feng et al., 2024, "Were RNNs All We Needed?"): recurrent layers whose
gates read only the input, never the previous state.

Each step is then ``h_t = a_t * h_{t-1} + b_t`` with ``a_t`` and ``b_t`` made from ``x_t`` alone,
so the whole sequence is one linear recurrence: the SCAN engine computes every step at once by a
parallel scan in log space, the CAFFE engine step by step as its unrolled net (one SCALE and one
unit per step). Both hold the same tensors per level and direction, ``W_xc`` (G*H x E) and
``b_c`` (G*H), G = 2 blocks [z, h] for MinGRU and 3 blocks [f, i, h] for MinLSTM; there is no
recurrent matrix. The ports, batch layout, ``cont``, ``lengths`` and ``bidirectional`` are every
recurrent layer's (:mod:`designer.graph.layers.recurrent`).
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.cell import CellSpec
from designer.graph.spec import LayerSpec, ParamSpec
from designer.graph.layers.common import bias_filler, num_output, weight_filler
from designer.graph.layers.recurrent import (BATCH_FIRST, BIDIRECTIONAL, INPUTS, OUTPUTS,
                                             STACK_DROPOUT, directions, infer, levels)

# the same tensors on both engines (SCAN holds the unrolled net's); the element-wise FLOPs of
# one unit step per hidden value (activations, normalising, mixing)
CELLS = {kind: CellSpec(gates=gates, engines=("SCAN", "CAFFE"), holds={"SCAN": "CAFFE"},
                        fused="SCAN", fused_words="the parallel scan", unit=unit,
                        unit_flops=flops)
         for kind, gates, unit, flops in (("MinGRU", ("z", "h"), "MIN_GRU_UNIT", 8),
                                          ("MinLSTM", ("f", "i", "h"), "MIN_LSTM_UNIT", 12))}
CAFFE_TYPES = {"MinGRU": "MIN_GRU", "MinLSTM": "MIN_LSTM"}  # no Caffe has them: our names
G_WORDS = ("g(v) = v + 0.5 for v >= 0 and sigmoid(v) below, so the candidate is always "
           "positive, which the log-space scan needs")


VARIABLE = (
    " Sequences of different lengths come padded at the end with their 'lengths': a padded "
    "step keeps the state (as z = 0, or f' = 1 and i' = 0, would), outputs zero and passes "
    "no gradient, on both engines. Bidirectional, a second chain reads each sequence "
    "backwards from its last valid step and both outputs are joined, the forward half first."
)


def _count(kind: str):
    def count(ctx, outs):
        e = ctx.input("x").shape[2]
        if not D.known(e):
            return None
        h, g, d = ctx.params["num_output"], len(CELLS[kind].gates), directions(ctx)
        total = 0
        for level in range(levels(ctx)):
            inp = e if level == 0 else d * h
            total += d * (g * h * inp + g * h)
        return total
    return count


def _flops(kind: str):
    def flops(ctx, outs):
        x = ctx.input("x").shape
        e, h, g, d = x[2], ctx.params["num_output"], len(CELLS[kind].gates), directions(ctx)
        if not D.known(e):
            return None
        per_step = 0
        for level in range(levels(ctx)):
            inp = e if level == 0 else d * h
            per_step += d * (2 * g * h * inp + (g + CELLS[kind].unit_flops) * h)
        return D.mul(x[0], x[1], per_step)
    return flops


def _params(kind: str) -> tuple:
    unit = "MIN_GRU_UNIT" if kind == "MinGRU" else "MIN_LSTM_UNIT"
    return (
        num_output(512, "hidden units per layer (H)"),
        ParamSpec("num_layers", "int", 1, "stacked layers, each reading the outputs of the one "
                  "below; the paper stacks several, since one level alone is a running "
                  "average of its input, weighted by gates that see only the current step",
                  minimum=1, maximum=16),
        STACK_DROPOUT,
        BATCH_FIRST,
        BIDIRECTIONAL,
        ParamSpec("engine", "choice", "SCAN",
                  "SCAN: every step at once, by a parallel scan in log space (Heinsen's "
                  "log-cumsum-exp, in chunks of 16 steps chained one after another), on any "
                  f"device; CAFFE: the unrolled net, one SCALE and one {unit} per time step, "
                  "run one step after another. Both hold the same tensors, so a checkpoint of "
                  "one loads into the other", choices=CELLS[kind].engines),
        weight_filler("uniform"),
        bias_filler(),
    )


def _spec(kind: str, summary: str, help: str) -> LayerSpec:
    return LayerSpec(
        id=kind, category="Recurrent", caffe_type=CAFFE_TYPES[kind], summary=summary, help=help,
        inputs=INPUTS, outputs=OUTPUTS, params=_params(kind),
        infer=infer, count_params=_count(kind), flops=_flops(kind), cell=CELLS[kind],
    )


STATE = (
    " The state starts at zero, as every recurrent layer's here, and 'cont' = 0 sets it to "
    "zero. The paper's log-space code takes a logarithm of its start, which must then be "
    "positive; the scan here adds the start's share outside the logarithm, so a zero start is "
    "exactly zero and the state carried from batch to batch is h itself, whatever its sign."
)

MIN_GRU = _spec(
    "MinGRU", "minGRU: update gate and candidate from the input alone; a parallel scan trains it",
    "minGRU (Feng et al., 2024, \"Were RNNs All We Needed?\"): a gated recurrent unit whose "
    "gate and candidate read only the current input. Each step: the update gate z = "
    "sigmoid(W_z x + b_z), the candidate h~ = g(W_h x + b_h) with " + G_WORDS + ", and h = "
    "(1 - z) * h_prev + z * h~. No reset gate and no recurrent matrix: 2H x E weights per "
    "level (blocks z, h), against a gated recurrent unit's 3H x (E + H). In log space, log z = "
    "-softplus(-k), log(1 - z) = -softplus(k) and log h~ = log g(v), so the scan never leaves "
    "positive numbers." + STATE + VARIABLE,
)
MIN_LSTM = _spec(
    "MinLSTM", "minLSTM: normalised forget and input gates from the input alone; a parallel "
    "scan trains it",
    "minLSTM (Feng et al., 2024, \"Were RNNs All We Needed?\"): a long short-term memory "
    "without output gate or cell, whose gates read only the current input. Each step: the "
    "forget gate f = sigmoid(W_f x + b_f) and the input gate i = sigmoid(W_i x + b_i), "
    "normalised to sum to one (f' = f / (f + i), i' = i / (f + i)), the candidate h~ = "
    "g(W_h x + b_h) with " + G_WORDS + ", and h = f' * h_prev + i' * h~. 3H x E weights per "
    "level (blocks f, i, h), against a long short-term memory's 4H x (E + H); normalising "
    "keeps the state on the candidates' scale however long the sequence." + STATE + VARIABLE,
)

SPECS = (MIN_GRU, MIN_LSTM)
