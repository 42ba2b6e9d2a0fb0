"""The classic recurrent cells: LSTM, GRU and RNN (torch.nn's, on the cuDNN engine or the
unrolled Caffe net; the LSTM also on PERSIST) and LSTMSimple (the junhyukoh caffe-lstm layer
MyCaffe ships as LSTM_SIMPLE, always unrolled); and LSTMUnit, the unrolled LSTM's unit (Caffe's
LSTM_UNIT) as a building block users can draw.

Their facts, said once: the gates of each (the unrolled net's order), the state each carries,
the engines each runs on and whose tensors each engine holds.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.cell import CellSpec
from designer.graph.layers.common import bias_filler, num_output, weight_filler
from designer.graph.layers.recurrent import (BATCH_FIRST, BIDIRECTIONAL, INPUTS, OUTPUTS,
                                             SIMPLE_INPUTS, STACK_DROPOUT, directions, infer,
                                             levels)
from designer.graph.spec import FLOAT, LayerSpec, ParamSpec, PortSpec, TensorInfo

ENGINES = ("AUTO", "CUDNN", "CAFFE")  # AUTO, the default: the fastest, timed on a GPU
CUDNN_HELD = {"AUTO": "CUDNN", "PERSIST": "CUDNN"}  # AUTO and PERSIST hold torch.nn's tensors
CELLS = {
    "LSTM": CellSpec(gates=("i", "f", "o", "g"), states=("h", "c"),
                     engines=ENGINES + ("PERSIST",), holds=CUDNN_HELD, unit="LSTM_UNIT",
                     unit_flops=9),
    "GRU": CellSpec(gates=("r", "z", "n"), engines=ENGINES, holds=CUDNN_HELD, unit="GRU_UNIT",
                    unit_flops=10),
    "RNN": CellSpec(gates=("h",), engines=ENGINES, holds=CUDNN_HELD, unit="TANH", unit_flops=1),
    "LSTMSimple": CellSpec(gates=("i", "f", "o", "g"), states=("h", "c"), unit="LSTM_UNIT",
                           unit_flops=9),
}


def _biases(kind: str, engine: str) -> int:
    """Bias vectors (of G*H values) per layer: torch keeps two, the Caffe net one (GRU: two,
    because the reset gate multiplies the recurrent bias of the new-gate)."""
    if kind == "GRU":
        return 2
    if kind == "LSTMSimple":
        return 1
    return 2 if CELLS[kind].layout(engine) == "CUDNN" else 1


def _count(kind):
    def count(ctx, outs):
        e = ctx.input("x").shape[2]
        if not D.known(e):
            return None
        h, g, d = ctx.params["num_output"], len(CELLS[kind].gates), directions(ctx)
        nb = _biases(kind, ctx.params.get("engine", "CAFFE"))
        total = 0
        for layer in range(levels(ctx)):
            inp = e if layer == 0 else d * h
            total += d * (g * h * (inp + h) + nb * g * h)
        return total
    return count


def _flops(kind):
    def flops(ctx, outs):
        x = ctx.input("x").shape
        e, h, g, d = x[2], ctx.params["num_output"], len(CELLS[kind].gates), directions(ctx)
        if not D.known(e):
            return None
        per_step = 0
        for layer in range(levels(ctx)):
            inp = e if layer == 0 else d * h
            per_step += d * (2 * g * h * (inp + h) + (g + CELLS[kind].unit_flops) * h)
        return D.mul(x[0], x[1], per_step)
    return flops


def _common(kind: str) -> tuple:
    return (
        num_output(512, "hidden units per layer (H)"),
        ParamSpec("num_layers", "int", 1, "stacked layers, run in one fused call on cuDNN",
                  minimum=1, maximum=16),
        STACK_DROPOUT,
        BATCH_FIRST,
        BIDIRECTIONAL,
        ParamSpec("engine", "choice", "AUTO",
                  "AUTO: on a GPU, the first step times the engines that can run the layer "
                  "on its shapes and keeps the fastest (remembered per GPU and shape); on the "
                  "CPU, CUDNN; CUDNN: the fused kernel (torch.nn." + kind + "); CAFFE: the "
                  "unrolled net, one small layer per time step" + (
                      "; PERSIST (experimental): cuDNN's weights, the recurrence in one "
                      "persistent kernel per level, the recurrent weights held on the chip, one "
                      "barrier a step (CUDA GPUs, bf16 on tensor cores; faster than cuDNN up "
                      "to batch 64; elsewhere it runs on cuDNN and says so)"
                      if kind == "LSTM" else ""),
                  choices=CELLS[kind].engines),
        weight_filler("uniform"),
        bias_filler(),
    )


def _spec(kind: str, summary: str, help: str, extra: tuple = ()) -> LayerSpec:
    return LayerSpec(
        id=kind, category="Recurrent", caffe_type=kind, summary=summary, help=help,
        inputs=INPUTS, outputs=OUTPUTS, params=_common(kind) + extra,
        infer=infer, count_params=_count(kind), flops=_flops(kind), cell=CELLS[kind],
    )


VARIABLE = (
    " Sequences of different lengths come padded at the end with their 'lengths': padded steps "
    "change neither the outputs nor the gradients (packed sequences on CUDNN, masking on "
    "CAFFE). Bidirectional, a second chain reads each sequence backwards and both outputs are "
    "joined."
)

LSTM = _spec(
    "LSTM", "Long short-term memory: gated recurrence over a sequence",
    "An LSTM reads the sequence one step at a time, keeping a cell state c and a hidden state "
    "h; input, forget and output gates decide what enters, stays and leaves the cell. On the "
    "CUDNN engine all layers run in one fused kernel; on the CAFFE engine each step is "
    "expanded into SCALE, INNER_PRODUCT, ELTWISE and LSTM_UNIT layers." + VARIABLE,
)
GRU = _spec(
    "GRU", "Gated recurrent unit: an LSTM with two gates and no cell",
    "A GRU keeps one hidden state; a reset gate r and an update gate z decide how much of the "
    "old state feeds the candidate and how much of it is kept (torch's gate order r, z, n)."
    + VARIABLE,
)
RNN = _spec(
    "RNN", "Plain recurrence: h = act(W x + U h + b)",
    "The Elman RNN: each step's hidden state is tanh (or relu) of the input and the previous "
    "hidden state, each through a learned matrix." + VARIABLE,
    (ParamSpec("nonlinearity", "choice", "tanh", "the activation of the hidden state",
               choices=("tanh", "relu")),),
)


def _simple_count(ctx, outs):
    e = ctx.input("x").shape[2]
    if not D.known(e):
        return None
    h = ctx.params["num_output"]
    return 4 * h * (e + h) + 4 * h


LSTM_SIMPLE = LayerSpec(
    id="LSTMSimple",
    category="Recurrent",
    caffe_type="LSTM_SIMPLE",
    summary="The caffe-lstm LSTM layer, with gradient clipping in the cell",
    help=(
        "The simple LSTM of Junhyuk Oh's caffe-lstm (MyCaffe's LSTM_SIMPLE), always unrolled: "
        "gates in the order i, f, o, g, one bias, the gradient of the gate inputs clipped to "
        "+/- clipping_threshold, and optionally the clockwork forget-gate bias (initialised to "
        "5 so the cell remembers from the start)."
    ),
    inputs=SIMPLE_INPUTS,
    outputs=(PortSpec("y", "the hidden state at every step, (T, N, H)"),),
    params=(
        num_output(512, "hidden units (H)"),
        ParamSpec("clipping_threshold", "float", 0.0,
                  "clip the gate gradients to +/- this value during backward (0: off)",
                  minimum=0.0, maximum=1e6),
        ParamSpec("enable_clockwork_forgetgate_bias", "bool", False,
                  "start the forget-gate bias at 5.0 (as the Clockwork RNN paper advises)"),
        BATCH_FIRST,
        weight_filler("uniform"),
        bias_filler(),
    ),
    infer=infer,
    count_params=_simple_count,
    flops=_flops("LSTMSimple"),
    cell=CELLS["LSTMSimple"],
)



def _unit_infer(ctx):
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
    caffe_type=CELLS["LSTM"].unit,
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
    infer=_unit_infer,
    flops=lambda ctx, outs: D.mul(CELLS["LSTM"].unit_flops, D.numel(outs[0].shape)),
)

SPECS = (LSTM, GRU, RNN, LSTM_SIMPLE, LSTM_UNIT)
