"""What an LSTM, GRU, RNN or LSTMSimple layer keeps for the backward pass, per engine and
device: the rule :mod:`designer.graph.memory_layers` applies to them; and the LSTMUnit building
block's.

Counted with ``torch.autograd.graph.saved_tensors_hooks`` on the CPU
(``tests/engines/net/test_memory.py``) and against the allocator's peak on an H200
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
- the **PERSIST engine** on a GPU: per level the activated gates and c_t in fp32.
"""
from __future__ import annotations

from designer.cells.classic.spec import CELLS
from designer.graph import registry
from designer.graph.memory_layers import Context, Kept, grads, memory_rule

# values per hidden unit, level and time step that a recurrent level keeps (see the module doc)
UNROLLED_PER_LEVEL = {"LSTM": 6, "LSTMSimple": 6, "GRU": 5, "RNN": 2}
CUDNN_GPU_PER_LEVEL = {"LSTM": 5, "GRU": 4, "RNN": 1}
PERSIST_FP32_PER_LEVEL = 5  # the PERSIST engine's activated gates (4) and c_t, in fp32
CPU_FUSED_PER_LEVEL = {"GRU": 7, "RNN": 1}
ONEDNN_H, ONEDNN_MAX_EH = 6.5, 4.0  # the oneDNN LSTM workspace per level and step, as
# much of it as is written to (it reserves about half as much again, never touched)


@memory_rule(*CELLS)
def classic_kept(ctx: Context, params: int) -> Kept:
    """A classic recurrent layer on its engine (see the module doc)."""
    kind, p = ctx.type, ctx.params
    gates = len(CELLS[kind].gates)
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
    cudnn = kind != "LSTMSimple" and registry.weight_layout(ctx.engine) == "CUDNN"
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
        k.backward += (b if h % 16 == 0 else 4) * gates * seq
    elif cudnn and gpu:
        reserve = levels * CUDNN_GPU_PER_LEVEL[kind] * seq + (levels - 1) * seq
        k.outputs = [0]
        k.extra = b * reserve + masks
        k.backward += 4 * levels * (gates + 1) * seq  # cuDNN's workspace
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
        k.backward += 4 * gates * seq
    else:  # the unrolled net: per level the steps' buffers, and the next level's input
        k.extra = 4 * (levels * UNROLLED_PER_LEVEL[kind] * seq + (levels - 1) * seq) + masks
        k.backward += 4 * (gates + 1) * seq  # dgates and d_hs of one level
        if gpu and ctx.act_bytes < 4:  # the input transform's GEMM runs in bf16
            k.inputs, k.extra = [], k.extra + 2 * tokens * e
            k.weight_copies = 2 * params
    return k


@memory_rule("LSTMUnit")
def unit_kept(ctx: Context, params: int) -> Kept:
    """LSTMUnit: sigmoid and tanh keep their results (the 4H gates), tanh(c) and the products'
    operands."""
    gates = ctx.numel(ctx.inputs[1])
    return Kept(inputs=[0, 2], extra=4 * (gates + 2 * ctx.numel(ctx.outputs[0])),
                backward=grads(ctx))
