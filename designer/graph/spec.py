"""Declarative layer specs: one ``LayerSpec`` per layer type.

The palette, the property form, the tool-tips, shape inference, parameter and FLOP counts and the
torch builders all derive from these specs; adding a layer is one spec (in ``layers/``) plus one
builder (in ``designer/engines``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from designer.graph import dims as D
from designer.graph.cell import CellSpec
from designer.graph.errors import ParamError, ShapeError

FLOAT, INDEX, ANY = "float", "index", "any"


@dataclass(frozen=True)
class TensorInfo:
    """What flows along a link: a shape over symbolic dims, a dtype (``float`` or ``index``),
    and two facts the checks build on.

    ``values``
        For ids: they lie in ``[0, values)`` (``"V"`` or a number), as the data layer that
        made them declares; ``None`` when unknown.
    ``batch``
        Which axis holds the batch (N), when it is known; ``None`` once a layer has merged it
        with another axis (a Reshape to (T*N, H), say).
    """

    shape: tuple
    dtype: str = FLOAT
    values: Any = None
    batch: int | None = None

    def __str__(self) -> str:
        text = D.shape_str(self.shape)
        return f"{text} ids" if self.dtype == INDEX else text

    @property
    def rank(self) -> int:
        return len(self.shape)

    def derive(self, shape: tuple, dtype: str | None = None, batch: int | None | str = "same",
               values: Any = "same") -> "TensorInfo":
        """A tensor made from this one: a new shape, the rest kept unless given."""
        return TensorInfo(tuple(shape), self.dtype if dtype is None else dtype,
                          self.values if values == "same" else values,
                          self.batch if batch == "same" else batch)

    def batch_after(self, axis: int) -> int | None:
        """The batch axis once the dims from ``axis`` on are replaced (kept only if before)."""
        return self.batch if self.batch is not None and self.batch < axis else None

    def to_json(self) -> list:
        return list(self.shape)


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a layer: its type, default, allowed values and a one-line help.

    ``kind`` is one of ``int``, ``float``, ``bool``, ``choice``, ``str``, ``ints`` (a list of
    integers) and ``dim`` (an integer or a dimension symbol such as ``V``).
    """

    name: str
    kind: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple = ()
    below_maximum: bool = False  # maximum itself excluded, as for a dropout ratio
    shaping: bool = False  # it changes shapes: the designer may offer it as a fix

    def allowed(self) -> str:
        """The allowed values in words, for messages and tool-tips."""
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "a text"
        if self.kind == "ints":
            return "a list of whole numbers"
        noun = "a whole number" if self.kind in ("int", "dim") else "a number"
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            rng = f"from {_num(lo)} to {'below ' if self.below_maximum else ''}{_num(hi)}"
        elif lo is not None:
            rng = f"of at least {_num(lo)}"
        elif hi is not None:
            rng = f"of at most {_num(hi)}"
        else:
            rng = ""
        text = f"{noun} {rng}".strip()
        if self.kind == "dim":
            text += " or a dimension name such as V"
        return text

    def check(self, value: Any) -> Any:
        """Return ``value`` normalised, or raise ``ParamError`` saying what is allowed."""
        k = self.kind
        bad = ParamError(self.name, value, self.allowed())
        if k == "bool":
            if not isinstance(value, bool):
                raise bad
            return value
        if k == "choice":
            if value not in self.choices:
                raise bad
            return value
        if k == "str":
            if not isinstance(value, str):
                raise bad
            return value
        if k == "ints":
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise bad
            return list(value)
        if k == "dim" and isinstance(value, str):
            if not value.isidentifier():
                raise bad
            return value
        if k in ("int", "dim"):
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    raise bad  # 512.0 is a typo for 512: say so rather than guess
                raise bad
        elif k == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise bad
            if not math.isfinite(value):
                raise bad
            value = float(value)
        else:  # pragma: no cover - a spec author's mistake
            raise ValueError(f"unknown parameter kind {k!r}")
        if self.minimum is not None and value < self.minimum:
            raise bad
        if self.maximum is not None:
            if value > self.maximum or (self.below_maximum and value >= self.maximum):
                raise bad
        return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class PortSpec:
    """An input or output of a layer."""

    name: str
    help: str
    dtype: str = FLOAT  # what the port carries or accepts: float, index or any
    optional: bool = False


@dataclass
class InferContext:
    """What a shape function sees: the layer, its parameters, its inputs and the bound dims."""

    layer: str
    spec: "LayerSpec"
    params: dict
    inputs: list  # TensorInfo | None per input port
    sources: list  # name of the layer feeding each input port, or None
    dims: dict = field(default_factory=dict)

    def input(self, port: str) -> TensorInfo | None:
        return self.inputs[self.spec.input_index(port)]

    def fail(self, port: str | None, expected: str, detail: str = "",
             want: tuple | None = None) -> None:
        """Raise a ``ShapeError`` naming this layer, the port, the layer feeding it and why.

        ``want`` is the exact shape the port needs, when there is one (a hint may then offer
        to insert a Reshape).
        """
        if port is None:
            raise ShapeError(self.layer, f"{self.layer} {expected}")
        i = self.spec.input_index(port)
        got, src = self.inputs[i], self.sources[i]
        msg = f"{self.layer} expects {expected} on '{port}', but {src} gives {got}"
        if detail:
            msg += f" ({detail})"
        raise ShapeError(self.layer, msg, port=port, want=want)

    def need_rank(self, port: str, rank: int, what: str) -> TensorInfo:
        t = self.input(port)
        if t is None or t.rank != rank:
            self.fail(port, what)
        return t

    def need_float(self, port: str) -> TensorInfo:
        t = self.input(port)
        if t is not None and t.dtype == INDEX:
            self.fail(port, "real-valued features", "token ids must go through an Embed layer first")
        return t

    def axis(self, axis: int, rank: int, param: str = "axis") -> int:
        """Resolve a possibly negative axis, or fail naming the parameter."""
        a = axis + rank if axis < 0 else axis
        if not 0 <= a < rank:
            raise ShapeError(
                self.layer,
                f"{self.layer}: {param} {axis} is out of range for a {rank}-dimensional input",
            )
        return a


@dataclass(frozen=True)
class GenerationDefaults:
    """How a model trained on a data layer's kind of data writes by default.

    A data layer that can be generated from holds one (``LayerSpec.generation``): the Generate
    panel and ``rnn-designer generate`` start from these values when none is given.

    Attributes
    ----------
    temperature
        The sampling temperature (0: always the most likely symbol).
    top_k
        Sample only among the k most likely symbols (0: all).
    why
        One sentence on why this temperature suits this kind of data (for tool-tips).
    """

    temperature: float
    top_k: int = 0
    why: str = ""


Infer = Callable[[InferContext], Sequence[TensorInfo]]
Count = Callable[[InferContext, Sequence[TensorInfo]], Any]


def _zero(ctx: InferContext, outs: Sequence[TensorInfo]) -> int:
    return 0


@dataclass(frozen=True)
class LayerSpec:
    """Everything the designer knows about one layer type."""

    id: str
    category: str
    summary: str
    help: str
    inputs: tuple
    outputs: tuple
    params: tuple
    infer: Infer
    count_params: Count = _zero
    flops: Count = _zero  # forward FLOPs of the whole batch; the graph divides by N
    caffe_type: str = ""
    source_dims: Callable[[dict, Any], dict] | None = None  # data layers: dims they bind
    check_params: Callable[[dict], None] | None = None  # relations between parameters
    generation: GenerationDefaults | None = None  # data layers a model can write like
    cell: CellSpec | None = None  # recurrent layers: their gates, states and engines
    # a few words the canvas shows beside the output shape: a choice that changes what the
    # layer is (an InnerProduct solved in closed form), from its parameters; "" for none
    caption: Callable[[dict], str] | None = None

    # -- derived helpers ---------------------------------------------------------------------
    @property
    def is_source(self) -> bool:
        return self.source_dims is not None

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def has_param(self, name: str) -> bool:
        return any(p.name == name for p in self.params)

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def input_index(self, port: str) -> int:
        for i, p in enumerate(self.inputs):
            if p.name == port:
                return i
        raise KeyError(port)

    def output_index(self, port: str) -> int:
        for i, p in enumerate(self.outputs):
            if p.name == port:
                return i
        raise KeyError(port)

    def tooltip(self) -> str:
        """Plain-text help: what the layer does and its parameters."""
        lines = [f"{self.id} ({self.category})", self.help, ""]
        if self.inputs:
            lines.append("Inputs: " + ", ".join(
                p.name + (" (optional)" if p.optional else "") for p in self.inputs))
        if self.outputs:
            lines.append("Outputs: " + ", ".join(p.name for p in self.outputs))
        if self.params:
            lines.append("Parameters:")
            lines.extend(f"  {p.name} = {p.default!r}: {p.help}" for p in self.params)
        if self.generation is not None:
            lines.append(f"Generation: temperature {self.generation.temperature:g} by default "
                         f"({self.generation.why})")
        lines += ["", self.read_more()]
        return "\n".join(lines).strip()

    def read_more(self) -> str:
        """Where the documentation tells more of this layer type (the last line of its
        tool-tips): its section of the layer reference, one page per category."""
        return (f"Read more: the layer reference, {self.category} layers, {self.id} (select the "
                f"layer and press F1: Help > Documentation)")
