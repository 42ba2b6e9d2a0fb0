"""LSTMUnit: one step of an LSTM cell (the building block of the unrolled net)."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.spec import FLOAT, LayerSpec, PortSpec, TensorInfo


def _infer(ctx):
    c, x, cont = ctx.need_float("c_prev"), ctx.need_float("gates"), ctx.input("cont")
    if c.rank < 1:
        ctx.fail("c_prev", "a cell state (..., H)")
    h = c.shape[-1]
    want = tuple(c.shape[:-1]) + (D.mul(4, h),)
    if x.rank != len(want) or not all(D.same(p, q) for p, q in zip(x.shape, want)):
        ctx.fail("gates", f"gate inputs of shape {D.shape_str(want)} (4 x H for i, f, o, g)")
    if not all(D.same(p, q) for p, q in zip(cont.shape, c.shape[:-1])) or cont.rank != c.rank - 1:
        ctx.fail("cont", f"continuation flags of shape {D.shape_str(c.shape[:-1])}")
    return [TensorInfo(c.shape, FLOAT), TensorInfo(c.shape, FLOAT)]


LSTM_UNIT = LayerSpec(
    id="LSTMUnit",
    category="Building blocks",
    caffe_type="LSTM_UNIT",
    summary="One LSTM step: gates in, new cell and hidden state out",
    help=(
        "Caffe's LSTM unit. From the gate inputs in the order [i, f, o, g]: i, f, o = "
        "sigmoid, g = tanh; c = cont * f * c_prev + i * g; h = o * tanh(c). The unrolled LSTM "
        "runs one per time step."
    ),
    inputs=(
        PortSpec("c_prev", "the previous cell state (..., H)"),
        PortSpec("gates", "the gate pre-activations (..., 4H)"),
        PortSpec("cont", "continuation flags (...): 0 forgets c_prev"),
    ),
    outputs=(PortSpec("c", "the new cell state"), PortSpec("h", "the new hidden state")),
    params=(),
    infer=_infer,
    flops=lambda ctx, outs: D.mul(9, D.numel(outs[0].shape)),
)

SPECS = (LSTM_UNIT,)
