"""What each layer type keeps for the backward pass, per engine and device: the rules behind
``designer.graph.memory``.

A rule gets the layer's bound shapes and parameters and returns a :class:`Kept`: which of its
inputs and outputs autograd holds on to (tensors, counted once however many layers keep them),
the bytes of its own buffers that only it holds (a recurrent layer's gates and cell states, a
dropout mask), and the bytes its backward pass needs at once on top (the gradients of its
output and input, the library's workspace).

The figures follow what torch 2.x does, checked with ``torch.autograd.graph.saved_tensors_hooks``
on the CPU (``tests/engines/test_memory.py``) and against the allocator's peak on an H200
(``tests/benchmarks/RESULTS.md``):

- the **unrolled (CAFFE) engine**, per level and time step: the activated gates (4H), c_t and
  h_conted (H each) for an LSTM; 5H for a GRU (gates, candidate's product, h_conted) and 1H
  for an RNN (h_conted; its outputs are kept as the layer's output);
- the **cuDNN engine on a GPU**: cuDNN's reserve space, the activated gates and the cell
  (G + 1 values per unit for an LSTM and a GRU, 1 for an RNN) per level, the outputs of the
  levels below the top one, plus the input and output sequences;
- the **cuDNN engine on the CPU** (oneDNN for an LSTM, torch's own cells otherwise): oneDNN's
  workspace, of which about 6.5 H + 4 max(E, H) values per level and step are written (so
  resident), and its output; 7H per level for a GRU, 1H for an RNN;
- MinGRU and MinLSTM, per level, direction and time step: on the **SCAN engine** what the
  terms keep (in log space on a GPU: 5.25 H for MinGRU, its input transform among them, 6.25 H
  for MinLSTM; step by step on the CPU: 3.25 H and 7.25 H) and what the scan keeps per step of
  its chunks, the last one filled up to 16 steps (4.125 H in log space, 4 H step by step); on
  the **unrolled engine** each step's gates, candidate and products (5.25 H for MinGRU, 9.25 H
  for MinLSTM);
- the sLSTM, per level, direction and time step: what autograd keeps of its step (14.5 H on the
  FUSED engine, 16.5 H on the unrolled one: the pre-activations, the gates and their
  exponentials, c, n, m and h), counted from the saved tensors on the CPU; on a GPU the
  unrolled one keeps 15.5 H (the CPU's logsigmoid saves a buffer of its input's size, the
  CUDA kernel none), and the FUSED engine's persistent kernels keep 8 H (what
  ``slstm_kernel._Direction`` saves: the pre-activations, 4H, and h, c, n, m at T + 1 steps,
  fp32 whatever the run's type), unmeasured on a GPU;
- on top of what they keep, what the newer cells' forward holds at its peak (``_held``): the
  input transform and the engine's copies of it, or the unrolled net's blobs;
- the mLSTM on either engine: see :mod:`designer.graph.memory_mlstm`;
- MiniRocket keeps nothing (no gradient flows through it): see
  :mod:`designer.graph.memory_rocket` for its buffers and what its forward holds;
- dropout keeps its mask: 4 bytes a value on the CPU, 1 on a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from .layers.recurrent import weight_layout
from .memory_mlstm import mlstm_kept
from .memory_rocket import rocket_bytes

RECURRENT = ("LSTM", "GRU", "RNN", "LSTMSimple", "MinGRU", "MinLSTM", "mLSTM", "sLSTM")
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1, "LSTMSimple": 4, "MinGRU": 2, "MinLSTM": 3,
         "sLSTM": 4}

# values per hidden unit, level and time step that a recurrent level keeps (see the module doc)
UNROLLED_PER_LEVEL = {"LSTM": 6, "LSTMSimple": 6, "GRU": 5, "RNN": 2}
CUDNN_GPU_PER_LEVEL = {"LSTM": 5, "GRU": 4, "RNN": 1}
PERSIST_FP32_PER_LEVEL = 5  # the PERSIST engine's activated gates (4) and c_t, in fp32
CPU_FUSED_PER_LEVEL = {"GRU": 7, "RNN": 1}
# MinGRU and MinLSTM: (values per step, values per step of the chunks the scan fills up to
# SCAN_CHUNK steps) per H, level and direction, by engine and device (see the module doc)
MIN_PER_LEVEL = {("SCAN", "cuda"): {"MinGRU": (5.25, 4.125), "MinLSTM": (6.25, 4.125)},
                 ("SCAN", "cpu"): {"MinGRU": (3.25, 4.0), "MinLSTM": (7.25, 4.0)},
                 "CAFFE": {"MinGRU": (5.25, 0.0), "MinLSTM": (9.25, 0.0)}}
SCAN_CHUNK = 16  # designer.engines.min_rnn.SCAN_CHUNK (the graph imports no engine)
ONEDNN_H, ONEDNN_MAX_EH = 6.5, 4.0  # the oneDNN LSTM workspace per level and step, as
# much of it as is written to (it reserves about half as much again, never touched)


@dataclass
class Context:
    """What a rule sees: the layer's type and parameters, its bound input and output shapes,
    and the set-up (device ``cpu`` or ``cuda``, engine, bytes of a float activation)."""

    type: str
    params: dict
    inputs: list        # (shape, dtype) per input port, None when not connected
    outputs: list       # (shape, dtype) per output port
    device: str
    engine: str         # AUTO, CUDNN, PERSIST, CAFFE or SCAN, for recurrent layers
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


def rule(ctx: Context, params: int) -> Kept:
    """The :class:`Kept` of one layer; ``params`` is its count of learned parameters."""
    fn = RULES.get(ctx.type)
    if fn is None:
        if ctx.type in RECURRENT:
            return _recurrent(ctx, params)
        return _elementwise(ctx, params)
    return fn(ctx, params)


def _grads(ctx: Context) -> int:
    """The gradients of the layer's output and float inputs, alive together in its backward."""
    out = sum(ctx.numel(t) for t in ctx.outputs if t is not None and t[1] != "index")
    inp = sum(ctx.numel(t) for t in ctx.inputs if t is not None and t[1] != "index")
    return 4 * (out + inp)


def _source(ctx, params):
    return Kept()


def _embed(ctx, params):
    return Kept(inputs=[0], backward=_grads(ctx))


def _inner_product(ctx, params):
    k = Kept(inputs=[0], backward=_grads(ctx))
    if ctx.act_bytes < 4:  # autocast runs the GEMM in bf16: it keeps a bf16 copy of the input
        k.inputs = []
        k.extra = ctx.act_bytes * ctx.numel(ctx.inputs[0])
        k.weight_copies = 2 * params
    return k


def _dropout(ctx, params):
    if ctx.params.get("dropout_ratio", 0.0) <= 0:
        return Kept()
    return Kept(extra=ctx.mask_bytes() * ctx.numel(ctx.outputs[0]), backward=_grads(ctx))


def _keeps_output(ctx, params):
    return Kept(outputs=[0], backward=_grads(ctx))


def _keeps_inputs(ctx, params):
    return Kept(inputs=[i for i, t in enumerate(ctx.inputs) if t is not None],
                backward=_grads(ctx))


def _views(ctx, params):
    return Kept()


def _eltwise(ctx, params):
    if ctx.params.get("operation", "SUM") == "SUM":
        return Kept(backward=_grads(ctx))
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
    k = Kept(backward=_grads(ctx))
    if pad or ctx.inputs[1] is not None:
        k.extra = 4 * ctx.numel(ctx.inputs[0]) // max(t, 1) * (t + pad)
    else:
        k.inputs = [0]
    if ctx.act_bytes < 4:  # autocast runs the convolution in bf16 on a bf16 copy
        k.inputs, k.extra = [], ctx.act_bytes * (k.extra // 4 or ctx.numel(ctx.inputs[0]))
        k.weight_copies = 2 * params
    return k


def _lstm_unit(ctx, params):
    # sigmoid and tanh keep their results (the 4H gates), tanh(c) and the products' operands
    gates = ctx.numel(ctx.inputs[1])
    return Kept(inputs=[0, 2], extra=4 * (gates + 2 * ctx.numel(ctx.outputs[0])),
                backward=_grads(ctx))


def _batch_norm(ctx, params):
    """Keeps its input and the batch's mean and 1/std (C each); its running mean and variance
    are buffers, not learned (no gradient, no optimizer state): their 2C floats count here,
    as bytes only it holds. With 'lengths' (a masked batch norm while training) it keeps the
    centred and the normalised values instead of torch's fused kernel's statistics."""
    c = ctx.inputs[0][0][-1]
    k = Kept(inputs=[0], extra=4 * 4 * c, backward=_grads(ctx))
    if len(ctx.inputs) > 1 and ctx.inputs[1] is not None:
        k.extra += 2 * 4 * ctx.numel(ctx.inputs[0])
    return k


def _layer_norm(ctx, params):
    """Keeps its input and each step's mean and 1/std (two floats a step)."""
    steps = ctx.numel(ctx.inputs[0]) // max(ctx.inputs[0][0][-1], 1)
    return Kept(inputs=[0], extra=2 * 4 * steps, backward=_grads(ctx))


def _sequence_pool(ctx, params):
    """SequencePool: with lengths, the padding mask (a byte a step); the max keeps where it
    took each value (N x H int64), the mean the lengths; attention keeps its softmax weights,
    its tanh layer's outputs (U a step) and what it weighs: the input, or its copy (the
    padded steps zeroed, or batch-first steps made time-major)."""
    x, p = ctx.inputs[0][0], ctx.params
    t, n, h = (x[1], x[0], x[2]) if p["batch_first"] else x
    padded = len(ctx.inputs) > 1 and ctx.inputs[1] is not None
    k = Kept(extra=t * n if padded else 0, backward=_grads(ctx))
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


def _min_recurrent(ctx, params):
    """MinGRU and MinLSTM: per level and direction what its engine keeps (see the module
    doc), the inputs of the levels above the first and the dropout masks between them."""
    p = ctx.params
    x = ctx.inputs[0][0]
    t_, n = (x[1], x[0]) if p.get("batch_first", False) else (x[0], x[1])
    d = 2 if p.get("bidirectional") else 1
    h, levels = p["num_output"], p.get("num_layers", 1)
    seq = t_ * n * h  # values of one direction's (T, N, H)
    filled = -(-t_ // SCAN_CHUNK) * SCAN_CHUNK * n * h  # the same over whole chunks
    scan = ("SCAN", "cuda" if ctx.device == "cuda" else "cpu")
    per_step, per_chunk_step = MIN_PER_LEVEL["CAFFE" if ctx.engine == "CAFFE" else scan][ctx.type]
    masks = (levels - 1) * d * seq * ctx.mask_bytes() if p.get("dropout_ratio", 0.0) else 0
    extra = 4 * (levels * d * (per_step * seq + per_chunk_step * filled)
                 + (levels - 1) * d * seq) + masks
    return Kept(inputs=[0], extra=int(extra),
                backward=4 * (d * (GATES[ctx.type] + 2) * seq + t_ * n * x[2]),
                forward=_held(ctx, seq, levels, d, GATES[ctx.type]))


# What a recurrent layer's forward pass holds at once beyond what it keeps, per step, in H:
# the unrolled net keeps every blob of the layer until its last node has run (per level and
# direction its input transform, G H, and the step's blobs no backward reads, below), one
# output more where directions or levels are joined; the fused engines one level and
# direction at a time: its input transform and what the engine copies it into (below).
# Measured on the CPU from the profiler's allocations (tests/engines/test_cell_memory.py).
UNROLLED_HELD = {"sLSTM": 6.0, "MinGRU": 1.0, "MinLSTM": 1.0, "mLSTM": 1.0}
# fused, on top of the input transform: the sLSTM's step loop copies it by heads (4H) and
# stacks its outputs; its CUDA kernels write y (H); the scans' temporaries over filled chunks
FUSED_HELD = {"sLSTM": 6.0, "sLSTM cuda": 1.0, "MinGRU": 5.0, "MinLSTM": 5.0}


def _held(ctx: Context, seq: int, levels: int, d: int, gates: float) -> int:
    """Bytes of the temporaries a recurrent layer's forward holds at its peak (see above):
    ``seq`` values of one (T, N, H), ``gates`` values per unit of its input transform."""
    if ctx.engine == "CAFFE":
        return 4 * (levels * d * (gates + UNROLLED_HELD[ctx.type]) + 1) * seq
    key = ctx.type + (" cuda" if ctx.device == "cuda" and ctx.type == "sLSTM" else "")
    return int(4 * (gates + FUSED_HELD[key]) * seq)


# sLSTM: values per hidden unit, level, direction and step that autograd keeps (counted from
# the saved tensors on the CPU). The unrolled net: the step's pre-activations, gates,
# exponentials, c, n, m, h; of those, 1 H is the buffer the CPU's logsigmoid (the forget gate)
# saves for its backward, and torch's CUDA kernel saves an empty one
# (aten/src/ATen/native/cuda/LogSigmoid.cu), so it keeps 1 H less there. FUSED's step loop: its
# unit saves the pre-activations (4 H) and the state it found (c, n, m), the heads' product its
# h, and the states' continuation products about half an H more (fitted to the measured
# peaks); FUSED on CUDA: the persistent kernels' own (8 H).
SLSTM_PER_LEVEL = {"FUSED": 8.5, "CAFFE": 16.5, "FUSED cuda": 8.0, "CAFFE cuda": 15.5}


def _slstm(ctx, params):
    """sLSTM: per level and direction what its engine keeps (``SLSTM_PER_LEVEL``), the
    inputs of the levels above the first and the dropout masks between them."""
    p = ctx.params
    x = ctx.inputs[0][0]
    t_, n = (x[1], x[0]) if p.get("batch_first", False) else (x[0], x[1])
    d = 2 if p.get("bidirectional") else 1
    h, levels = p["num_output"], p.get("num_layers", 1)
    seq = t_ * n * h
    per = SLSTM_PER_LEVEL[("CAFFE" if ctx.engine == "CAFFE" else "FUSED")
                          + (" cuda" if ctx.device == "cuda" else "")]
    masks = (levels - 1) * d * seq * ctx.mask_bytes() if p.get("dropout_ratio", 0.0) else 0
    extra = 4 * (levels * d * per * seq + (levels - 1) * d * seq) + masks
    return Kept(inputs=[0], extra=int(extra), backward=4 * (d * 6 * seq + t_ * n * x[2]),
                forward=_held(ctx, seq, levels, d, GATES["sLSTM"]))


def _mlstm(ctx, params):
    """The mLSTM (:mod:`designer.graph.memory_mlstm`)."""
    extra, backward, forward = mlstm_kept(ctx)
    return Kept(inputs=[0], extra=extra, backward=backward, forward=forward)


def _mini_rocket(ctx, params):
    """MiniRocket (:mod:`designer.graph.memory_rocket`): its buffers, nothing for backward."""
    extra, forward = rocket_bytes(ctx)
    return Kept(extra=extra, forward=forward)


RULES = {
    "BatchNorm": _batch_norm, "LayerNorm": _layer_norm,
    "CharText": _source, "WavAudio": _source, "MnistRows": _source,
    "Embed": _embed, "InnerProduct": _inner_product, "Dropout": _dropout,
    "TanH": _keeps_output, "Sigmoid": _keeps_output, "Softmax": _keeps_output,
    "ReLU": _relu, "Clip": _keeps_inputs, "Scale": _keeps_inputs,
    "Reshape": _views, "Slice": _views, "Concat": _views,
    "Eltwise": _eltwise, "SoftmaxWithLoss": _loss, "Accuracy": _accuracy,
    "LSTMUnit": _lstm_unit, "Conv1D": _conv1d,
    "SequencePool": _sequence_pool, "MinGRU": _min_recurrent, "MinLSTM": _min_recurrent,
    "mLSTM": _mlstm, "sLSTM": _slstm, "MiniRocket": _mini_rocket,
}


def _elementwise(ctx, params):
    """A layer type without a rule of its own: assume it keeps its output."""
    return _keeps_output(ctx, params)


def _recurrent(ctx: Context, params: int) -> Kept:
    """An LSTM, GRU, RNN or LSTMSimple layer on its engine (see the module doc)."""
    kind, p = ctx.type, ctx.params
    x = ctx.inputs[0][0]
    first = p.get("batch_first", False)
    t_, n = (x[1], x[0]) if first else (x[0], x[1])
    # a bidirectional layer keeps both directions' buffers: as one of twice the width
    e, h = x[2], p["num_output"] * (2 if p.get("bidirectional") else 1)
    levels = p.get("num_layers", 1)
    dropout = p.get("dropout_ratio", 0.0) if levels > 1 else 0.0
    tokens = t_ * n
    seq = tokens * h  # values of one (T, N, H) sequence
    # AUTO is counted as CUDNN: where it picks PERSIST, PERSIST keeps less (its gates and c_t
    # against cuDNN's reserve space and workspace), so the cuDNN figure bounds both
    cudnn = kind != "LSTMSimple" and weight_layout(ctx.engine) == "CUDNN"
    gpu = ctx.device == "cuda"
    b = ctx.act_bytes if cudnn and gpu else 4  # the unrolled steps run in float32
    masks = (levels - 1) * seq * ctx.mask_bytes() if dropout else 0
    k = Kept(inputs=[0], backward=4 * (2 * seq + tokens * e))
    if ctx.engine == "PERSIST" and kind == "LSTM" and gpu and not p.get("bidirectional"):
        # per level: the activated gates and c_t in fp32, h_t in the run's type (the last
        # level's is the output); the dropped-out inputs of the upper levels; backward has
        # one level's pre-activation gradients (4H) at a time: in bf16 where the tensor-core
        # kernels run it (H a multiple of 16), else fp32
        k.outputs = [0]
        k.extra = levels * PERSIST_FP32_PER_LEVEL * 4 * seq + 2 * (levels - 1) * b * seq + masks
        k.backward += (b if h % 16 == 0 else 4) * GATES[kind] * seq
    elif cudnn and gpu:
        reserve = levels * CUDNN_GPU_PER_LEVEL[kind] * seq + (levels - 1) * seq
        k.outputs = [0]
        k.extra = b * reserve + masks
        k.backward += 4 * levels * (GATES[kind] + 1) * seq  # cuDNN's workspace
        if b < 4:  # autocast re-flattens the weights in bf16 and keeps a bf16 input
            k.inputs, k.extra = [], k.extra + b * tokens * e
            k.weight_copies = 2 * params
    elif cudnn and kind == "LSTM":  # oneDNN, level by level
        ws = sum(ONEDNN_H * h + ONEDNN_MAX_EH * max(e if lv == 0 else h, h)
                 for lv in range(levels))
        k.outputs = [0]
        k.extra = int(4 * (tokens * ws + (levels - 1) * seq)) + masks
        k.extra += 4 * (levels - 1) * seq if dropout else 0  # the dropped copy feeds the next
    elif cudnn:  # torch's own GRU and RNN cells
        k.extra = 4 * (levels * CPU_FUSED_PER_LEVEL[kind] * seq + (levels - 1) * seq) + masks
        k.backward += 4 * GATES[kind] * seq
    else:  # the unrolled net: per level the steps' buffers, and the next level's input
        k.extra = 4 * (levels * UNROLLED_PER_LEVEL[kind] * seq + (levels - 1) * seq) + masks
        k.backward += 4 * (GATES[kind] + 1) * seq  # dgates and d_hs of one level
        if gpu and ctx.act_bytes < 4:  # the input transform's GEMM runs in bf16
            k.inputs, k.extra = [], k.extra + 2 * tokens * e
            k.weight_copies = 2 * params
    return k
