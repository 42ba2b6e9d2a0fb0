"""Embed: token ids to learned vectors."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import RangeError
from designer.graph.spec import FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec
from designer.graph.layers.common import MAX_UNITS, bias_filler, num_output, weight_filler


def _infer(ctx):
    x = ctx.input("x")
    if x.dtype != INDEX:
        ctx.fail("x", "token ids", "an Embed layer looks up ids; feed it a data layer's 'data'")
    rows = ctx.params["input_dim"]
    if D.known(rows) and x.values is not None and D.known(x.values) and rows < x.values:
        raise RangeError(ctx.layer, (
            f"{ctx.layer} has input_dim {rows}, but the ids it reads take {x.values} values "
            f"(0 to {x.values - 1}): set input_dim to V"), "x", rows, x.values, "input_dim")
    return [x.derive(tuple(x.shape) + (ctx.params["num_output"],), FLOAT, values=None)]


def _count(ctx, outs):
    k, m = ctx.params["input_dim"], ctx.params["num_output"]
    if not D.known(k):
        return None
    return k * m + (m if ctx.params["bias_term"] else 0)


def _flops(ctx, outs):
    return D.numel(outs[0].shape) if ctx.params["bias_term"] else 0


EMBED = LayerSpec(
    id="Embed",
    category="Embedding",
    caffe_type="EMBED",
    summary="Looks up a learned vector for each token id",
    help=(
        "Maps each id in [0, input_dim) to a learned vector of num_output values (a one-hot "
        "input times a weight matrix, without building the one-hot). input_dim is usually V, "
        "the vocabulary size the data layer reports."
    ),
    inputs=(PortSpec("x", "token ids", INDEX),),
    outputs=(PortSpec("y", "one vector per id: the input's shape plus (num_output,)"),),
    params=(
        num_output(15, "the size of each embedding vector"),
        ParamSpec("input_dim", "dim", "V", "how many distinct ids (V: the vocabulary size)",
                  minimum=1, maximum=MAX_UNITS, shaping=True),
        ParamSpec("bias_term", "bool", True, "add a learned bias to every vector (as Caffe)"),
        weight_filler("torch_default"),
        bias_filler(),
    ),
    infer=_infer,
    count_params=_count,
    flops=_flops,
)

SPECS = (EMBED,)
