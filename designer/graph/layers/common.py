"""Pieces several layer specs share: filler parameters and simple shape rules."""
from __future__ import annotations

from designer.graph import dims as D
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


def same_shape(ctx: InferContext) -> list[TensorInfo]:
    """The output has the input's shape (element-wise layers)."""
    t = ctx.need_float("x")
    return [t.derive(t.shape, FLOAT, values=None)]


def numel_out(ctx: InferContext, outs) -> object:
    """One FLOP per output element (activations, clipping)."""
    return D.numel(outs[0].shape)


def index_port(name: str, help: str, optional: bool = False) -> PortSpec:
    return PortSpec(name, help, INDEX, optional)
