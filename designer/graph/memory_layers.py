"""What each layer type keeps for the backward pass, per engine and device: the rules behind
``designer.graph.memory``.

A rule gets the layer's bound shapes and parameters and returns a :class:`Kept`: which of its
inputs and outputs autograd holds on to (tensors, counted once however many layers keep them),
the bytes of its own buffers that only it holds (a recurrent layer's gates and cell states, a
dropout mask), and the bytes its backward pass needs at once on top (the gradients of its
output and input, the library's workspace).

The rules are a registry, :data:`RULES` (layer type -> rule): the built-in layers' are here,
and each recurrent cell registers its own with :func:`memory_rule` from its folder's
``memory`` module (``designer/cells/<cell>/memory.py``), which says how it was measured. The
helpers below (:func:`chains`, :func:`stacked`, :func:`held`) are what those rules share: the
sizes of a stacked recurrent layer, its levels' inputs and dropout masks, and what its
forward pass holds at its peak.

The figures follow what torch 2.x does, checked with ``torch.autograd.graph.saved_tensors_hooks``
on the CPU (``tests/engines/net/test_memory.py``) and against the allocator's peak on an H200
(``tests/benchmarks/RESULTS.md``):

- MiniRocket and Hydra keep nothing (no gradient flows through them): see
  :mod:`designer.graph.memory_rocket` for their buffers and what their forward holds;
- dropout keeps its mask: 4 bytes a value on the CPU, 1 on a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Callable

from designer.graph import registry
from designer.graph.memory_rocket import hydra_bytes, rocket_bytes
from designer.graph.once import put


@dataclass
class Context:
    """What a rule sees: the layer's type and parameters, its bound input and output shapes,
    and the set-up (device ``cpu`` or ``cuda``, engine, bytes of a float activation)."""

    type: str
    params: dict
    inputs: list        # (shape, dtype) per input port, None when not connected
    outputs: list       # (shape, dtype) per output port
    device: str
    engine: str         # the engine a recurrent layer runs on (CAFFE: the unrolled net)
    act_bytes: int      # 4 in fp32, 2 for what autocast runs in bf16

    def numel(self, t) -> int:
        return prod(t[0]) if t is not None else 0

    def mask_bytes(self) -> int:
        return 1 if self.device == "cuda" else 4


@dataclass
class Kept:
    """What one layer holds for the backward pass, and needs during it."""

    inputs: list = field(default_factory=list)   # indices of inputs it keeps
    outputs: list = field(default_factory=list)  # indices of outputs it keeps
    extra: int = 0                               # bytes only it holds
    backward: int = 0                            # bytes its backward pass needs at once
    forward: int = 0                             # bytes its forward pass holds at once,
    #                                              on top of what it keeps (its temporaries)
    weight_copies: int = 0                       # bf16 copies of its weights (autocast)


Rule = Callable[[Context, int], Kept]
RULES: dict[str, Rule] = {}  # layer type -> its rule; filled below and by the cells


def memory_rule(*types: str):
    """Register ``rule(ctx, params) -> Kept`` as what a layer of each of ``types`` keeps (a
    cell's ``memory`` module registers its own)."""
    def register(fn: Rule) -> Rule:
        for t in types:
            put(RULES, t, fn, "the memory rule")
        return fn
    return register


def rule(ctx: Context, params: int) -> Kept:
    """The :class:`Kept` of one layer; ``params`` is its count of learned parameters."""
    fn = RULES.get(ctx.type)
    if fn is None:
        if registry.cell(ctx.type) is not None:
            return _cell(ctx, params)
        return _elementwise(ctx, params)
    return fn(ctx, params)


def grads(ctx: Context) -> int:
    """The gradients of the layer's output and float inputs, alive together in its backward."""
    out = sum(ctx.numel(t) for t in ctx.outputs if t is not None and t[1] != "index")
    inp = sum(ctx.numel(t) for t in ctx.inputs if t is not None and t[1] != "index")
    return 4 * (out + inp)


def _source(ctx, params):
    return Kept()


def _embed(ctx, params):
    return Kept(inputs=[0], backward=grads(ctx))


def _inner_product(ctx, params):
    k = Kept(inputs=[0], backward=grads(ctx))
    if ctx.act_bytes < 4:  # autocast runs the GEMM in bf16: it keeps a bf16 copy of the input
        k.inputs = []
        k.extra = ctx.act_bytes * ctx.numel(ctx.inputs[0])
        k.weight_copies = 2 * params
    return k


def _dropout(ctx, params):
    if ctx.params.get("dropout_ratio", 0.0) <= 0:
        return Kept()
    return Kept(extra=ctx.mask_bytes() * ctx.numel(ctx.outputs[0]), backward=grads(ctx))


def _keeps_output(ctx, params):
    return Kept(outputs=[0], backward=grads(ctx))


def _keeps_inputs(ctx, params):
    return Kept(inputs=[i for i, t in enumerate(ctx.inputs) if t is not None],
                backward=grads(ctx))


def _views(ctx, params):
    return Kept()


def _linear(ctx, params):
    """A linear map with no weights (Difference): its backward needs none of its values."""
    return Kept(backward=grads(ctx))


def _eltwise(ctx, params):
    if ctx.params.get("operation", "SUM") == "SUM":
        return Kept(backward=grads(ctx))
    return _keeps_inputs(ctx, params)


def _relu(ctx, params):
    return _keeps_inputs(ctx, params) if ctx.params.get("negative_slope") else \
        _keeps_output(ctx, params)


def _loss(ctx, params):
    """cross_entropy: log_softmax keeps its float32 result (the size of the logits)."""
    logits = ctx.numel(ctx.inputs[0])
    return Kept(inputs=[1], extra=4 * logits, backward=4 * 3 * logits)


def _accuracy(ctx, params):
    return Kept()


def _conv1d(ctx, params):
    """Conv1D keeps what its convolution reads: the input itself, or the copy that padding
    (or zeroing the steps past each sequence's length) makes, of T + the padded steps."""
    x, p = ctx.inputs[0][0], ctx.params
    pad = 0 if p["padding"] == "valid" else (p["kernel_size"] - 1) * p["dilation"]
    t = x[1] if p["batch_first"] else x[0]
    k = Kept(backward=grads(ctx))
    if pad or ctx.inputs[1] is not None:
        k.extra = 4 * ctx.numel(ctx.inputs[0]) // max(t, 1) * (t + pad)
    else:
        k.inputs = [0]
    if ctx.act_bytes < 4:  # autocast runs the convolution in bf16 on a bf16 copy
        k.inputs, k.extra = [], ctx.act_bytes * (k.extra // 4 or ctx.numel(ctx.inputs[0]))
        k.weight_copies = 2 * params
    return k


def _batch_norm(ctx, params):
    """Keeps its input and the batch's mean and 1/std (C each); its running mean and variance
    are buffers, not learned (no gradient, no optimizer state): their 2C floats count here,
    as bytes only it holds. With 'lengths' (a masked batch norm while training) it keeps the
    centred and the normalised values instead of torch's fused kernel's statistics."""
    c = ctx.inputs[0][0][-1]
    k = Kept(inputs=[0], extra=4 * 4 * c, backward=grads(ctx))
    if len(ctx.inputs) > 1 and ctx.inputs[1] is not None:
        k.extra += 2 * 4 * ctx.numel(ctx.inputs[0])
    return k


def _layer_norm(ctx, params):
    """Keeps its input and each step's mean and 1/std (two floats a step)."""
    steps = ctx.numel(ctx.inputs[0]) // max(ctx.inputs[0][0][-1], 1)
    return Kept(inputs=[0], extra=2 * 4 * steps, backward=grads(ctx))


def _sequence_pool(ctx, params):
    """SequencePool: with lengths, the padding mask (a byte a step); the max keeps where it
    took each value (N x H int64), the mean the lengths; attention keeps its softmax weights,
    its tanh layer's outputs (U a step) and what it weighs: the input, or its copy (the
    padded steps zeroed, or batch-first steps made time-major)."""
    x, p = ctx.inputs[0][0], ctx.params
    t, n, h = (x[1], x[0], x[2]) if p["batch_first"] else x
    padded = len(ctx.inputs) > 1 and ctx.inputs[1] is not None
    k = Kept(extra=t * n if padded else 0, backward=grads(ctx))
    if p["method"] == "mean":
        k.extra += 4 * n if padded else 0
    elif p["method"] == "max":
        k.extra += 8 * n * h
    else:
        k.extra += 4 * t * n * (1 + p["attention_units"])
        if padded or p["batch_first"]:
            k.extra += 4 * t * n * h
        else:
            k.inputs = [0]
        if ctx.act_bytes < 4:  # autocast scores the steps on a bf16 copy
            k.extra += ctx.act_bytes * t * n * h
            k.weight_copies = 2 * params
    return k


def _hydra(ctx, params):
    """Hydra (:mod:`designer.graph.memory_rocket`): its buffers, nothing for backward."""
    extra, forward = hydra_bytes(ctx)
    return Kept(extra=extra, forward=forward)


def _mini_rocket(ctx, params):
    """MiniRocket (:mod:`designer.graph.memory_rocket`): its buffers, nothing for backward."""
    extra, forward = rocket_bytes(ctx)
    return Kept(extra=extra, forward=forward)


RULES.update({
    "BatchNorm": _batch_norm, "LayerNorm": _layer_norm,
    "CharText": _source, "WavAudio": _source, "MnistRows": _source,
    "Embed": _embed, "InnerProduct": _inner_product, "Dropout": _dropout,
    "TanH": _keeps_output, "Sigmoid": _keeps_output, "Softmax": _keeps_output,
    "ReLU": _relu, "GELU": _keeps_inputs, "Clip": _keeps_inputs, "Scale": _keeps_inputs,
    "Reshape": _views, "Slice": _views, "Concat": _views, "Difference": _linear,
    "Eltwise": _eltwise, "SoftmaxWithLoss": _loss, "Accuracy": _accuracy,
    "Conv1D": _conv1d,
    "SequencePool": _sequence_pool, "MiniRocket": _mini_rocket, "Hydra": _hydra,
})


def _elementwise(ctx, params):
    """A layer type without a rule of its own: assume it keeps its output."""
    return _keeps_output(ctx, params)


# -- what the recurrent cells' rules share ---------------------------------------------------
@dataclass(frozen=True)
class Chains:
    """A recurrent layer's sizes as its rule counts them: ``steps`` (T), ``batch`` (N),
    ``inputs`` (E), ``hidden`` (H), ``levels`` and ``directions`` (2 when bidirectional)."""

    steps: int
    batch: int
    inputs: int
    hidden: int
    levels: int
    directions: int

    @property
    def seq(self) -> int:
        """Values of one direction's (T, N, H)."""
        return self.steps * self.batch * self.hidden


def chains(ctx: Context) -> Chains:
    """The sizes of the recurrent layer ``ctx`` describes (batch-first or not)."""
    p, x = ctx.params, ctx.inputs[0][0]
    t_, n = (x[1], x[0]) if p.get("batch_first", False) else (x[0], x[1])
    return Chains(t_, n, x[2], p["num_output"], p.get("num_layers", 1),
                  2 if p.get("bidirectional") else 1)


def dropout_masks(ctx: Context, c: Chains) -> int:
    """Bytes of the dropout masks between the levels (none without dropout)."""
    if not ctx.params.get("dropout_ratio", 0.0):
        return 0
    return (c.levels - 1) * c.directions * c.seq * ctx.mask_bytes()


def stacked(ctx: Context, c: Chains, per_level: float, gates: int, forward: float) -> Kept:
    """A stacked recurrent layer that keeps ``per_level`` values (float32) per level and
    direction: it keeps its input, those values, the inputs of the levels above the first
    and the dropout masks between them; its backward needs the gradients of its ``gates``
    blocks and two more per unit, and of its input; its forward holds ``forward`` bytes at
    its peak (:func:`held`)."""
    d = c.directions
    extra = 4 * (c.levels * d * per_level + (c.levels - 1) * d * c.seq) + dropout_masks(ctx, c)
    return Kept(inputs=[0], extra=int(extra),
                backward=4 * (d * (gates + 2) * c.seq + c.steps * c.batch * c.inputs),
                forward=forward)


def held(ctx: Context, c: Chains, gates: float, unrolled: float, fused: float) -> float:
    """Bytes of the temporaries a recurrent layer's forward holds at its peak, beyond what it
    keeps: the unrolled net keeps every blob of the layer until its last node has run (per
    level and direction its input transform, ``gates`` values per unit, and ``unrolled``
    values per unit of the step blobs no backward reads), one output more where directions
    or levels are joined; a fused engine one level and direction at a time: its input
    transform and ``fused`` values per unit that it copies it into. Measured on the CPU from
    the profiler's allocations (``tests/cells/test_memory_rules.py``)."""
    if ctx.engine == "CAFFE":
        return 4 * (c.levels * c.directions * (gates + unrolled) + 1) * c.seq
    return int(4 * (gates + fused) * c.seq)


def _cell(ctx: Context, params: int) -> Kept:
    """A recurrent layer whose cell registered no rule: what its unrolled net keeps at the
    least, per level, direction and step its gates and its states (H values each)."""
    cell, c = registry.cell(ctx.type), chains(ctx)
    g = len(cell.gates)
    return stacked(ctx, c, (g + len(cell.states)) * c.seq, g, held(ctx, c, g, 1.0, 1.0))
