"""sLSTM (Beck et al., 2024, "xLSTM: Extended Long Short-Term Memory"): the scalar long short-term
memory with exponential gating, a normaliser state and a stabiliser state, its recurrent weights
block-diagonal in heads.

Per level and direction the layer holds ``W_xc`` (4H x E, gate blocks [i, f, z, o] of H rows),
``b_c`` (4H) and ``W_hc`` (heads x 4d x d with d = H / heads: per head its own recurrent matrix,
gate blocks [i, f, z, o] of d rows). Both engines hold these same tensors: FUSED (the input
transform of all steps as one GEMM, then the recurrence, the heads' matrices batched) and CAFFE
(the unrolled net: per step SCALE, HEAD_INNER_PRODUCT, ELTWISE and SLSTM_UNIT). The ports,
batch layout, ``cont``, ``lengths`` and ``bidirectional`` are every recurrent layer's
(:mod:`designer.graph.layers.recurrent`).
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.cell import CellSpec
from designer.graph.spec import LayerSpec, ParamSpec
from designer.graph.layers.common import bias_filler, num_output, weight_filler
from designer.graph.layers.recurrent import (BATCH_FIRST, BIDIRECTIONAL, INPUTS, OUTPUTS,
                                             STACK_DROPOUT, directions, infer, levels)

# the same tensors on both engines: FUSED holds the unrolled net's
CELL = CellSpec(gates=("i", "f", "z", "o"), states=("h", "c", "n", "m"),
                engines=("FUSED", "CAFFE"), holds={"FUSED": "CAFFE"}, fused="FUSED",
                fused_words="its fused engine", unit="SLSTM_UNIT", unit_flops=16)
GATES, UNIT_FLOPS = len(CELL.gates), CELL.unit_flops
FORGET_GATES = ("sigmoid", "exp")


def nearest_divisor(hidden: int, heads: int) -> int:
    """The divisor of ``hidden`` nearest to ``heads`` (the larger one on a tie)."""
    divisors = [d for d in range(1, hidden + 1) if hidden % d == 0]
    return min(divisors, key=lambda d: (abs(d - heads), -d))


def _infer_slstm(ctx):
    outs = infer(ctx)
    h, heads = ctx.params["num_output"], ctx.params.get("num_heads", 1)
    if h % heads:
        best = nearest_divisor(h, heads)
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} splits its {h} hidden units into {heads} heads, but {heads} does "
            f"not divide {h}: every head needs the same number of units")).mended(
                "num_heads", best)  # designer.graph.hints tells it as the fix
    return outs


def _count(ctx, outs):
    e = ctx.input("x").shape[2]
    if not D.known(e):
        return None
    h, d = ctx.params["num_output"], directions(ctx)
    per_head = h // ctx.params.get("num_heads", 1)
    total = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else d * h
        total += d * (GATES * h * inp + GATES * h + GATES * h * per_head)
    return total


def _flops(ctx, outs):
    x = ctx.input("x").shape
    e, h, d = x[2], ctx.params["num_output"], directions(ctx)
    if not D.known(e):
        return None
    per_head = h // ctx.params.get("num_heads", 1)
    per_step = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else d * h
        per_step += d * (2 * GATES * h * (inp + per_head) + (GATES + UNIT_FLOPS) * h)
    return D.mul(x[0], x[1], per_step)


PARAMS = (
    num_output(512, "hidden units per layer (H), split evenly into the heads"),
    ParamSpec("num_heads", "int", 4,
              "heads: the hidden units fall into this many groups of H / heads, and each "
              "group's gates read only its own group's previous h (the recurrent weights are "
              "block-diagonal, one (4 H/heads) x (H/heads) matrix per head); must divide H",
              minimum=1, maximum=1024),
    ParamSpec("num_layers", "int", 1, "stacked layers, each reading the outputs of the one "
              "below", minimum=1, maximum=16),
    STACK_DROPOUT,
    BATCH_FIRST,
    BIDIRECTIONAL,
    ParamSpec("forget_gate", "choice", "sigmoid",
              "the forget gate's activation: sigmoid (f in (0, 1), as the xLSTM code's "
              "default) or exp (f = exp of its input, unbounded like the input gate)",
              choices=FORGET_GATES),
    ParamSpec("engine", "choice", "FUSED",
              "FUSED: the input transform of all steps as one matrix product, then the "
              "recurrence with the heads' matrices batched into one product a step (on any "
              "device); CAFFE: the unrolled net, one SCALE, HEAD_INNER_PRODUCT, ELTWISE and "
              "SLSTM_UNIT per time step. Both hold the same tensors, so a checkpoint of one "
              "loads into the other", choices=CELL.engines),
    weight_filler("uniform"),
    bias_filler(),
    ParamSpec("forget_bias", "choice", "constant",
              "where the forget gate's biases start: constant (at bias_filler, like the other "
              "gates) or powerlaw (as the xLSTM code starts them: each head's units from +5, a "
              "memory of many steps, down to -7, almost none)", choices=("constant", "powerlaw")),
)

SLSTM = LayerSpec(
    id="sLSTM", category="Recurrent", caffe_type="SLSTM",
    summary="sLSTM (xLSTM): exponential input gate, normaliser and stabiliser, heads",
    help=(
        "sLSTM (Beck et al., 2024, \"xLSTM\"): a long short-term memory whose input gate is "
        "exponential, so a new input can outweigh all that is stored, kept finite by a normaliser "
        "and a stabiliser. Each step, from the pre-activations W x + R h_prev + b (R "
        "block-diagonal in heads): the input gate i = exp(i~), the forget gate f = sigmoid(f~) or "
        "exp(f~), the cell input z = tanh(z~) and the output gate o = sigmoid(o~). The stabiliser "
        "m = max(log f + m_prev, log i) keeps the exponentials in range: the gates are used as i' "
        "= exp(log i - m) and f' = exp(log f + m_prev - m). The cell c = f' c_prev + i' z, the "
        "normaliser n = f' n_prev + i' (the sum of the input gates' weights, so c / n is a "
        "weighted average of the z), and h = o * c / n. The state (h, c, n, m) starts at zero "
        "(where n is zero, m starts at log i, as the xLSTM code does); 'cont' = 0 sets it to "
        "zero. Sequences of different lengths come padded at the end with their 'lengths': a "
        "padded step keeps the state, outputs zero and passes no gradient, on both engines. "
        "Bidirectional, a second chain reads each sequence backwards from its last valid step and "
        "both outputs are joined, the forward half first."
    ),
    inputs=INPUTS, outputs=OUTPUTS, params=PARAMS,
    infer=_infer_slstm, count_params=_count, flops=_flops, cell=CELL,
)

SPECS = (SLSTM,)
