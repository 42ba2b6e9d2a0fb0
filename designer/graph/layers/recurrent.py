"""Recurrent layers: LSTM, GRU, RNN (each on the cuDNN engine or the unrolled Caffe net) and
LSTMSimple (the junhyukoh caffe-lstm layer MyCaffe ships as LSTM_SIMPLE).

LSTM, GRU and RNN also take each sequence's valid length (``lengths``: the steps from a
sequence's length on are padding) and may be bidirectional (a second chain reads every sequence
from its last valid step back to its first; the output holds the forward half, then the
backward half, as torch's does).
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.spec import FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.common import bias_filler, num_output, weight_filler

ENGINES = ("AUTO", "CUDNN", "CAFFE")  # AUTO, the default: the fastest, timed on a GPU
LSTM_ENGINES = ENGINES + ("PERSIST",)  # PERSIST: the persistent kernel, LSTM only
MIN_KINDS = ("MinGRU", "MinLSTM")  # gates that read only the input: SCAN or CAFFE
CHUNK_KINDS = ("mLSTM",)  # the chunkwise-parallel form: CHUNK or CAFFE
SLSTM_KINDS = ("sLSTM",)  # xLSTM's scalar LSTM: FUSED or CAFFE, the same tensors on both
# the kinds whose engine is a parameter
ENGINE_KINDS = ("LSTM", "GRU", "RNN") + MIN_KINDS + CHUNK_KINDS + SLSTM_KINDS


def weight_layout(engine: str) -> str:
    """The engine whose parameters ``engine`` holds: PERSIST and AUTO (which runs CUDNN or
    PERSIST) keep the cuDNN engine's (torch.nn.LSTM's, with two biases), so converting,
    exporting and loading treat them as CUDNN; SCAN (the parallel scan of MinGRU and MinLSTM),
    CHUNK (the mLSTM's chunkwise form) and FUSED (the sLSTM's fused recurrence) keep the
    unrolled net's."""
    return {"PERSIST": "CUDNN", "AUTO": "CUDNN", "SCAN": "CAFFE", "CHUNK": "CAFFE",
            "FUSED": "CAFFE"}.get(engine, engine)


def engine_for(kind: str, engine: str) -> str:
    """The engine a ``kind`` layer runs on when every recurrent layer is asked to run on
    ``engine`` (auto, cudnn, caffe or persist, any case): MinGRU and MinLSTM, which no cuDNN
    or persistent kernel runs, take their fused engine, the parallel scan, for any but
    caffe; the mLSTM its chunkwise-parallel form; the sLSTM its FUSED engine."""
    engine = engine.upper()
    if kind in SLSTM_KINDS:
        return "CAFFE" if engine == "CAFFE" else "FUSED"
    if kind in MIN_KINDS:
        return "CAFFE" if engine == "CAFFE" else "SCAN"
    if kind in CHUNK_KINDS:
        return "CAFFE" if engine == "CAFFE" else "CHUNK"
    return engine


# gates per unit, and the element-wise FLOPs of one unit step per hidden value (approximate:
# activations and the products and sums that combine them)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1, "LSTMSimple": 4}
UNIT_FLOPS = {"LSTM": 9, "GRU": 10, "RNN": 1, "LSTMSimple": 9}

SIMPLE_INPUTS = (
    PortSpec("x", "the input sequence, (T, N, E) or (N, T, E) when batch-first"),
    PortSpec("cont", "optional sequence continuation (T, N): 0 resets the state at that step",
             FLOAT, optional=True),
)
INPUTS = SIMPLE_INPUTS + (
    PortSpec("lengths", "optional valid steps of each sequence, (N) whole numbers: the steps "
             "from a sequence's length on are padding (their output is 0, the state is kept, "
             "no gradient flows through them)", INDEX, optional=True),
)
OUTPUTS = (PortSpec("y", "the hidden state at every step, (T, N, H); (T, N, 2H) when "
                    "bidirectional, the forward half first"),)


def _infer(ctx):
    first = ctx.params.get("batch_first", False)
    x = ctx.need_float("x")
    if x is None or x.rank != 3:
        ctx.fail("x", "a sequence of vectors, " + ("(N, T, E)" if first else "(T, N, E)"))
    batch = 0 if first else 1
    if x.batch is not None and x.batch != batch:
        layout = "(N, T, E) since batch_first is true" if first else \
            "(T, N, E) since batch_first is false"
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} reads {x} as {layout}, but axis {x.batch} is the batch (N): it "
            f"would run through the batch instead of through time; set batch_first to "
            f"{'false' if first else 'true'}"), port="x")
    cont = ctx.input("cont")
    if cont is not None:
        want = tuple(x.shape[:2])
        if cont.rank != 2 or not all(D.same(a, b) for a, b in zip(cont.shape, want)):
            ctx.fail("cont", f"continuation flags of shape {D.shape_str(want)}", want=want)
    if cont is not None and _directions(ctx) == 2:
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} is bidirectional: its backward half reads each sequence from the "
            f"end, so it cannot carry a state from the last batch or restart mid-sequence as "
            f"'cont' asks; disconnect 'cont' (padded sequences take 'lengths') or set "
            f"bidirectional to false"), port="cont")
    lengths = ctx.input("lengths") if _has_port(ctx, "lengths") else None
    if lengths is not None:
        want = (x.shape[batch],)
        if lengths.rank != 1 or not D.same(lengths.shape[0], want[0]):
            ctx.fail("lengths", f"one length per sequence, {D.shape_str(want)}", want=want)
    h = ctx.params["num_output"] * _directions(ctx)
    return [TensorInfo((x.shape[0], x.shape[1], h), FLOAT, None, batch)]


def _has_port(ctx, port: str) -> bool:
    return any(p.name == port for p in ctx.spec.inputs)


def _directions(ctx) -> int:
    return 2 if ctx.params.get("bidirectional", False) else 1


def _biases(kind: str, engine: str) -> int:
    """Bias vectors (of G*H values) per layer: torch keeps two, the Caffe net one (GRU: two,
    because the reset gate multiplies the recurrent bias of the new-gate)."""
    if kind == "GRU":
        return 2
    if kind == "LSTMSimple":
        return 1
    return 2 if weight_layout(engine) == "CUDNN" else 1


def _layers(ctx):
    return ctx.params.get("num_layers", 1)


def _count(kind):
    def count(ctx, outs):
        e = ctx.input("x").shape[2]
        if not D.known(e):
            return None
        h, g, d = ctx.params["num_output"], GATES[kind], _directions(ctx)
        nb = _biases(kind, ctx.params.get("engine", "CAFFE"))
        total = 0
        for layer in range(_layers(ctx)):
            inp = e if layer == 0 else d * h
            total += d * (g * h * (inp + h) + nb * g * h)
        return total
    return count


def _flops(kind):
    def flops(ctx, outs):
        x = ctx.input("x").shape
        e, h, g, d = x[2], ctx.params["num_output"], GATES[kind], _directions(ctx)
        if not D.known(e):
            return None
        per_step = 0
        for layer in range(_layers(ctx)):
            inp = e if layer == 0 else d * h
            per_step += d * (2 * g * h * (inp + h) + (g + UNIT_FLOPS[kind]) * h)
        return D.mul(x[0], x[1], per_step)
    return flops


# the parameters every recurrent layer shares
STACK_DROPOUT = ParamSpec("dropout_ratio", "float", 0.0,
                          "dropout between stacked layers (not after the last one)",
                          minimum=0.0, maximum=1.0, below_maximum=True)
BATCH_FIRST = ParamSpec("batch_first", "bool", False, "the input and output are (N, T, ...)",
                        shaping=True)
BIDIRECTIONAL = ParamSpec(
    "bidirectional", "bool", False,
    "also read every sequence backwards, from its last valid step to its first, with weights "
    "of its own; the output holds both directions (2H features, the forward half first) and "
    "the parameters double", shaping=True)


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
                  choices=LSTM_ENGINES if kind == "LSTM" else ENGINES),
        weight_filler("uniform"),
        bias_filler(),
    )


def _spec(kind: str, summary: str, help: str, extra: tuple = ()) -> LayerSpec:
    return LayerSpec(
        id=kind, category="Recurrent", caffe_type=kind, summary=summary, help=help,
        inputs=INPUTS, outputs=OUTPUTS, params=_common(kind) + extra,
        infer=_infer, count_params=_count(kind), flops=_flops(kind),
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
    infer=_infer,
    count_params=_simple_count,
    flops=_flops("LSTMSimple"),
)

SPECS = (LSTM, GRU, RNN, LSTM_SIMPLE)
