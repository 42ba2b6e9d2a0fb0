"""Shape layers: Reshape, Slice and Concat (Caffe semantics), and SequenceLast."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.spec import ANY, FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.common import axis_param, check_lengths, sequence_input

XA = PortSpec("x", "the input tensor", ANY)


def _reshape_infer(ctx):
    x = ctx.input("x")
    shape, axis, num_axes = ctx.params["shape"], ctx.params["axis"], ctx.params["num_axes"]
    a = ctx.axis(axis, x.rank + 1) if axis < 0 else axis
    if a > x.rank:
        ctx.fail(None, f"cannot reshape from axis {axis} of a {x.rank}-dimensional input")
    end = x.rank if num_axes < 0 else a + num_axes
    if end > x.rank:
        ctx.fail(None, f"cannot replace {num_axes} axes from axis {axis} of a "
                 f"{x.rank}-dimensional input")
    region = x.shape[a:end]
    if shape.count(-1) > 1:
        ctx.fail(None, "can infer at most one dimension (-1) in 'shape'")
    out = []
    for i, s in enumerate(shape):
        if s == 0:
            if i >= len(region):
                ctx.fail(None, f"'shape' copies dim {i} (0) but only {len(region)} dims are "
                         "replaced")
            out.append(region[i])
        elif s < -1:
            ctx.fail(None, f"'shape' holds {s}; use a size, 0 (copy) or -1 (infer)")
        else:
            out.append(s)
    total = D.numel(region)
    if -1 in shape:
        known = D.numel([d for d in out if d != -1])
        rest = D.div(total, known)
        if rest is None:
            ctx.fail(None, f"cannot split {D.shape_str(region)} into {shape}")
        out = [rest if d == -1 else d for d in out]
    elif not D.same(D.numel(out), total):
        ctx.fail("x", f"{D.numel(out)} values to fill shape {shape}",
                 f"the replaced dims hold {total}")
    batch = x.batch if x.batch is not None and (x.batch < a or x.batch >= end) else None
    if batch is not None and batch >= end:
        batch += len(out) - (end - a)
    return [x.derive(tuple(x.shape[:a]) + tuple(out) + tuple(x.shape[end:]), batch=batch)]


RESHAPE = LayerSpec(
    id="Reshape",
    category="Shape",
    caffe_type="RESHAPE",
    summary="Changes the shape without moving data",
    help=(
        "Replaces the dims [axis, axis + num_axes) of the input (num_axes -1: to the end) "
        "with 'shape', where 0 copies the matching input dim and -1 is inferred from the rest."
    ),
    inputs=(XA,),
    outputs=(PortSpec("y", "the reshaped tensor", ANY),),
    params=(
        ParamSpec("shape", "ints", [0, -1], "the new dims: sizes, 0 to copy, -1 to infer"),
        ParamSpec("axis", "int", 0, "the first axis replaced", minimum=-8, maximum=8,
                  shaping=True),
        ParamSpec("num_axes", "int", -1, "how many axes are replaced (-1: all from axis on)",
                  minimum=-1, maximum=8),
    ),
    infer=_reshape_infer,
)


def _slice_infer(ctx):
    x = ctx.input("x")
    a = ctx.axis(ctx.params["axis"], x.rank)
    p, size = ctx.params["slice_point"], x.shape[a]
    if D.known(size) and not 0 < p < size:
        ctx.fail("x", f"axis {ctx.params['axis']} longer than slice_point {p}",
                 f"it has {size}")
    rest = size - p if D.known(size) else f"{size}-{p}"
    s = list(x.shape)
    first, second = s.copy(), s.copy()
    first[a], second[a] = p, rest
    batch = None if x.batch == a else x.batch
    return [x.derive(tuple(first), batch=batch), x.derive(tuple(second), batch=batch)]


SLICE = LayerSpec(
    id="Slice",
    category="Building blocks",
    caffe_type="SLICE",
    summary="Splits a tensor in two along an axis",
    help=(
        "Cuts the input along 'axis' at slice_point: 'a' holds the part before it, 'b' the "
        "rest. The unrolled recurrent net slices its inputs into one piece per time step."
    ),
    inputs=(XA,),
    outputs=(PortSpec("a", "the part before slice_point", ANY),
             PortSpec("b", "the part from slice_point on", ANY)),
    params=(axis_param(0), ParamSpec("slice_point", "int", 1, "where to cut", minimum=1,
                                     maximum=1 << 30)),
    infer=_slice_infer,
)


def _concat_infer(ctx):
    a, b = ctx.input("a"), ctx.input("b")
    ax = ctx.axis(ctx.params["axis"], a.rank)
    if a.rank != b.rank or a.dtype != b.dtype or not all(
            D.same(p, q) for i, (p, q) in enumerate(zip(a.shape, b.shape)) if i != ax):
        ctx.fail("b", f"the shape of 'a' {D.shape_str(a.shape)} except along axis {ax}")
    s = list(a.shape)
    s[ax] = a.shape[ax] + b.shape[ax] if D.known(a.shape[ax]) and D.known(b.shape[ax]) \
        else f"{a.shape[ax]}+{b.shape[ax]}"
    values = a.values if a.values == b.values else None
    batch = a.batch if a.batch == b.batch and a.batch != ax else None
    return [a.derive(tuple(s), values=values, batch=batch)]


CONCAT = LayerSpec(
    id="Concat",
    category="Building blocks",
    caffe_type="CONCAT",
    summary="Joins two tensors along an axis",
    help=(
        "Joins 'a' and 'b' along 'axis'; every other dim must agree. The unrolled recurrent "
        "net concatenates the hidden states of all steps this way."
    ),
    inputs=(PortSpec("a", "the first part", ANY), PortSpec("b", "the second part", ANY)),
    outputs=(PortSpec("y", "the joined tensor", ANY),),
    params=(axis_param(0),),
    infer=_concat_infer,
)



def _last_infer(ctx):
    x, batch, _ = sequence_input(ctx, "it would pick a sequence instead of a step",
                                 channels="H")
    n = x.shape[batch]
    if ctx.params["bidirectional"] and D.known(x.shape[2]) and x.shape[2] % 2:
        ctx.fail("x", "the two halves of a bidirectional layer's output",
                 f"{x.shape[2]} values a step do not split in two")
    check_lengths(ctx, n)
    return [TensorInfo((n, x.shape[2]), FLOAT, None, 0)]


SEQUENCE_LAST = LayerSpec(
    id="SequenceLast",
    category="Shape",
    caffe_type="SEQUENCE_LAST",
    summary="Each sequence's last valid step: (T, N, H) to (N, H)",
    help=(
        "Picks, for every sequence of the batch, the output at its last valid step: step "
        "lengths - 1 when 'lengths' is connected (sequences padded after their end), else "
        "the last step. A classifier or a forecaster reads the whole sequence through a "
        "recurrent layer and decides from this one vector. After a bidirectional layer, set "
        "bidirectional: the backward half (the second) is then taken at the first step, the "
        "one where it has read the whole sequence."
    ),
    inputs=(PortSpec("x", "the outputs at every step, (T, N, H) or (N, T, H) when "
                     "batch-first"),
            PortSpec("lengths", "each sequence's number of valid steps, (N,) (optional)",
                     INDEX, optional=True)),
    outputs=(PortSpec("y", "the last valid step of each sequence, (N, H)"),),
    params=(ParamSpec("batch_first", "bool", False, "the input is (N, T, H)", shaping=True),
            ParamSpec("bidirectional", "bool", False, "the input is a bidirectional layer's "
                      "output: its second half is read at the first step")),
    infer=_last_infer,
)

SPECS = (RESHAPE, SLICE, CONCAT, SEQUENCE_LAST)
