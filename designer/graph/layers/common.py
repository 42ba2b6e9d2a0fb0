"""Pieces several layer specs share: filler parameters and simple shape rules."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.spec import FLOAT, INDEX, InferContext, ParamSpec, PortSpec, TensorInfo

FILLERS = ("xavier", "uniform", "gaussian", "orthogonal", "zero", "torch_default")

MAX_UNITS = 1 << 20


def weight_filler(default: str = "xavier") -> ParamSpec:
    return ParamSpec(
        "weight_filler", "choice", default,
        "how the weights are initialised (xavier: Glorot uniform; uniform: U(-1/sqrt(H), "
        "1/sqrt(H)) with H the layer's outputs; gaussian: N(0, 0.01^2); orthogonal; zero: "
        "all 0, a classifier over many fixed features starting neutral; torch_default: what "
        "torch does for this layer)",
        choices=FILLERS,
    )


def bias_filler(default: float = 0.0) -> ParamSpec:
    return ParamSpec("bias_filler", "float", default, "the constant the biases start at",
                     minimum=-100.0, maximum=100.0)


def num_output(default: int | str, help: str, kind: str = "int") -> ParamSpec:
    return ParamSpec("num_output", kind, default, help, minimum=1, maximum=MAX_UNITS,
                     shaping=True)


def axis_param(default: int, help: str = "the axis the layer works along (negative counts "
               "from the end)") -> ParamSpec:
    return ParamSpec("axis", "int", default, help, minimum=-8, maximum=8, shaping=True)


X = PortSpec("x", "the input tensor")
Y = PortSpec("y", "the output tensor")
# a layer over sequences, in either layout, and the lengths that mark their padding
SEQUENCE = PortSpec("x", "the input sequence, (T, N, C) or (N, T, C) when batch-first")
LENGTHS = PortSpec("lengths", "each sequence's number of valid steps, (N,) (optional: connect "
                   "it for padded sequences)", INDEX, optional=True)


def same_shape(ctx: InferContext) -> list[TensorInfo]:
    """The output has the input's shape (element-wise layers)."""
    t = ctx.need_float("x")
    return [t.derive(t.shape, FLOAT, values=None)]


def numel_out(ctx: InferContext, outs) -> object:
    """One FLOP per output element (activations, clipping)."""
    return D.numel(outs[0].shape)


def index_port(name: str, help: str, optional: bool = False) -> PortSpec:
    return PortSpec(name, help, INDEX, optional)


def sequence_input(ctx: InferContext, crossing: str, channels: str = "C",
                   advise: bool = True) -> tuple[TensorInfo, int, int]:
    """``(x, batch axis, time axis)``: the input ``x`` of a layer that reads a sequence of
    vectors, (T, N, ``channels``) or (N, T, ``channels``) with ``batch_first``, checked to be
    one and to hold its batch where the layout says. Where the batch is on the other axis the
    sentence says what the layer would do then (``crossing``) and, with ``advise``, how to set
    batch_first."""
    first = ctx.params["batch_first"]
    layout = f"(N, T, {channels})" if first else f"(T, N, {channels})"
    x = ctx.need_float("x")
    if x is None or x.rank != 3:
        ctx.fail("x", "a sequence of vectors, " + layout)
    batch, time = (0, 1) if first else (1, 0)
    if x.batch is not None and x.batch != batch:
        advice = f"; set batch_first to {'false' if first else 'true'}" if advise else ""
        raise ShapeError(ctx.layer, f"{ctx.layer} reads {x} as {layout}, but axis {x.batch} is "
                         f"the batch (N): {crossing}{advice}", port="x")
    return x, batch, time


def check_lengths(ctx: InferContext, n) -> None:
    """The optional ``lengths`` input holds one length per sequence, ``(n,)``."""
    lengths = ctx.input("lengths")
    if lengths is not None and (lengths.rank != 1 or not D.same(lengths.shape[0], n)):
        ctx.fail("lengths", f"one length per sequence, ({n},)", want=(n,))
