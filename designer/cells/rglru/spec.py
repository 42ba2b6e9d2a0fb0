"""The RG-LRU (De et al., 2024, "Griffin: Mixing Gated Linear Recurrences with Local Attention
for Efficient Language Models"): the Real-Gated Linear Recurrent Unit of Hawk and Griffin, a
diagonal linear recurrence whose gates read only the input.

Per step, with x_t the layer's input (E values) and one value per channel of H:

- the recurrence gate r_t = sigmoid(W_a x_t + b_a) and the input gate i_t = sigmoid(W_x x_t +
  b_x);
- the input projected to the layer's width, u_t = W_u x_t + b_u;
- the decay a_t = a^(c r_t), with a = sigmoid(Λ) learned per channel and c = 8, computed in
  log space: log a_t = -c r_t softplus(-Λ);
- h_t = a_t * h_{t-1} + sqrt(1 - a_t^2) * (i_t * u_t).

The paper's unit maps a D_rnn-wide input to the same width and its input gate multiplies that
input. Here the layer reads E values and makes H, as every recurrent layer here does, so the
value the input gate lets in is the input projected to H (u_t), while the gates read the input
itself, as the paper's do; with E = H, W_u = I and b_u = 0 it is the paper's unit. The whole
input transform is then one matrix, ``W_xc`` (3H x E, blocks [r, i, u]) with ``b_c`` (3H), and
each chain holds its ``Lambda`` (H), initialised so that a^c is uniform in [0.9, 0.999] (the
paper's initialisation).

Each step is ``h_t = a_t h_{t-1} + b_t`` with a_t and b_t made from x_t alone, so the whole
sequence is one linear recurrence: the SCAN engine computes it in chunks of steps side by side
(:mod:`designer.engines.tensors.linear_scan`; b_t takes either sign, so the scan stays in plain
arithmetic), the CAFFE engine step by step as its unrolled net (a SCALE and an RG_LRU_UNIT per
step). Both hold the same tensors. The ports, batch layout, ``cont``, ``lengths`` and
``bidirectional`` are every recurrent layer's (:mod:`designer.graph.layers.recurrent`).
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.cell import CellSpec
from designer.graph.spec import LayerSpec, ParamSpec
from designer.graph.layers.common import bias_filler, num_output, weight_filler
from designer.graph.layers.recurrent import (BATCH_FIRST, BIDIRECTIONAL, INPUTS, OUTPUTS,
                                             STACK_DROPOUT, directions, infer, levels)

KIND = "RGLRU"
# the same tensors on both engines (SCAN holds the unrolled net's); the element-wise FLOPs of
# one unit step per channel: two sigmoids, the decay's softplus, product and exp, the square
# root of 1 - a^2, the input gate's product and the step itself
CELL = CellSpec(gates=("r", "i", "u"), engines=("SCAN", "CAFFE"), holds={"SCAN": "CAFFE"},
                fused="SCAN", fused_words="the linear scan", unit="RG_LRU_UNIT", unit_flops=18)


def _count(ctx, outs):
    e = ctx.input("x").shape[2]
    if not D.known(e):
        return None
    h, g, d = ctx.params["num_output"], len(CELL.gates), directions(ctx)
    total = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else d * h
        total += d * (g * h * inp + g * h + h)  # W_xc, b_c and Lambda
    return total


def _flops(ctx, outs):
    x = ctx.input("x").shape
    e, h, g, d = x[2], ctx.params["num_output"], len(CELL.gates), directions(ctx)
    if not D.known(e):
        return None
    per_step = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else d * h
        per_step += d * (2 * g * h * inp + (g + CELL.unit_flops) * h)
    return D.mul(x[0], x[1], per_step)


PARAMS = (
    num_output(256, "channels of the recurrence, each with its own decay (H)"),
    ParamSpec("num_layers", "int", 1, "stacked layers, each reading the outputs of the one "
              "below; Hawk puts a temporal convolution before each and an MLP after it "
              "(draw them around the layer)", minimum=1, maximum=16),
    STACK_DROPOUT,
    BATCH_FIRST,
    BIDIRECTIONAL,
    ParamSpec("engine", "choice", "SCAN",
              "SCAN: every step at once, by a linear scan (chunks of 16 steps side by side, "
              "then the chunks chained one after another), on any device; CAFFE: the "
              "unrolled net, one SCALE and one RG_LRU_UNIT per time step, run one step after "
              "another. Both hold the same tensors, so a checkpoint of one loads into the "
              "other", choices=CELL.engines),
    weight_filler("uniform"),
    bias_filler(),
)

RG_LRU = LayerSpec(
    id=KIND, category="Recurrent", caffe_type="RG_LRU",  # no Caffe has it: our name
    summary="RG-LRU (Hawk, Griffin): a gated diagonal linear recurrence; a scan trains it",
    help=(
        "RG-LRU, the Real-Gated Linear Recurrent Unit of Hawk and Griffin (De et al., 2024, "
        "\"Griffin: Mixing Gated Linear Recurrences with Local Attention for Efficient "
        "Language Models\"). Each step, per channel: the recurrence gate r = sigmoid(W_a x + "
        "b_a), the input gate i = sigmoid(W_x x + b_x), the decay a_t = a^(c * r) with a = "
        "sigmoid(Λ) learned per channel and c = 8 (log a_t = -c * r * softplus(-Λ)), and "
        "h = a_t * h_prev + sqrt(1 - a_t^2) * (i * u), where u = W_u x + b_u is the input "
        "projected to the layer's H channels (with E = H and W_u the identity, the paper's "
        "unit). The gates read only the input, so the whole sequence is one linear "
        "recurrence and a scan computes every step at once. Λ starts so that a^c is uniform "
        "in [0.9, 0.999]: slow decays, a long memory from the start. 3H x E weights, 3H "
        "biases and H decays per level, against an LSTM's 4H x (E + H). Hawk draws it "
        "between a short causal Conv1D and an output gate (a GELU branch multiplied in). "
        "The state starts at zero, as every recurrent layer's here, and 'cont' = 0 sets it "
        "to zero. Sequences of different lengths come padded at the end with their "
        "'lengths': a padded step keeps the state, outputs zero and passes no gradient, on "
        "both engines. Bidirectional, a second chain reads each sequence backwards from its "
        "last valid step and both outputs are joined, the forward half first."),
    inputs=INPUTS, outputs=OUTPUTS, params=PARAMS,
    infer=infer, count_params=_count, flops=_flops, cell=CELL,
)

SPECS = (RG_LRU,)
