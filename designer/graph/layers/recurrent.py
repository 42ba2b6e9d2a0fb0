"""What every recurrent layer's spec shares: the ports (``x``, ``cont``, ``lengths`` -> ``y``),
the batch layout, the shape check and the parameters of stacking, batch-first and both
directions. The recurrent layers themselves are the cells (``designer/cells``), each declaring
its gates, states and engines (:class:`designer.graph.cell.CellSpec`).

A recurrent layer takes each sequence's valid length (``lengths``: the steps from a sequence's
length on are padding) and may be bidirectional (a second chain reads every sequence from its
last valid step back to its first; the output holds the forward half, then the backward half,
as torch's does).
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.spec import FLOAT, INDEX, ParamSpec, PortSpec, TensorInfo

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


def infer(ctx):
    """The output of a recurrent layer: (T, N, H), or (N, T, H) batch-first; H doubled when
    bidirectional."""
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
    if cont is not None and directions(ctx) == 2:
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
    h = ctx.params["num_output"] * directions(ctx)
    return [TensorInfo((x.shape[0], x.shape[1], h), FLOAT, None, batch)]


def _has_port(ctx, port: str) -> bool:
    return any(p.name == port for p in ctx.spec.inputs)


def directions(ctx) -> int:
    return 2 if ctx.params.get("bidirectional", False) else 1


def levels(ctx) -> int:
    return ctx.params.get("num_layers", 1)


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
