"""The fixed pieces of an exported ``model.py``: helper functions, the data constant, the
``__main__`` block.

Each helper is written out only when a layer of the net needs it, and computes what the designer's
engine computes (``designer.engines.net.layers`` and the cells' engines). A cell adds its own to
:data:`CELL_HELPERS` from its ``exports/pytorch.py``: helper name -> what makes its text (for a
cell torch.nn lacks, its class and functions: :func:`pytorch_copies.cell_source`), called when
first written. The cells' helpers follow the others, in the order of their names.
"""
from __future__ import annotations

import ast
import json
from functools import lru_cache

from designer.graph import parts

from designer.exchange.pytorch_export.copies import free_names
from designer.exchange.pytorch_export.hydra import hydra_source
from designer.exchange.pytorch_export.rocket import FITTED_SERIES, rocket_source

CAFFE_RESHAPE = '''
def caffe_reshape(x, shape, axis, num_axes):
    """Caffe's Reshape: dims [axis, axis + num_axes) become shape (0 copies a dim, -1 infers)."""
    a = axis if axis >= 0 else axis + x.dim() + 1
    end = x.dim() if num_axes < 0 else a + num_axes
    new = [x.shape[a + i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(*x.shape[:a], *new, *x.shape[end:])
'''

SEQUENCE_LAST = '''
def sequence_last(x, lengths, batch_first, bidirectional):
    """Each sequence's output at its last valid step (the last step without lengths); after a
    bidirectional layer the backward half is read at the first step, where it has read all."""
    if batch_first:
        x = x.transpose(0, 1)
    if lengths is None:
        last = x[-1]
    else:
        at = (lengths.to(x.device).long() - 1).clamp(0, x.shape[0] - 1)
        last = x[at, torch.arange(x.shape[1], device=x.device)]
    if not bidirectional:
        return last
    half = x.shape[2] // 2
    return torch.cat([last[:, :half], x[0, :, half:]], 1)
'''

CONV_OVER_TIME = '''
def conv_over_time(conv, x, lengths, pads, batch_first):
    """``conv`` (an nn.Conv1d) slid along the steps of x, (T, N, C) or (N, T, C) when
    batch-first, with ``pads`` zero steps before and after; with lengths, the steps from each
    sequence's length on are zeroed before the convolution and in its output."""
    x = x.permute(0, 2, 1) if batch_first else x.permute(1, 2, 0)  # (N, C, T)
    valid = None
    if lengths is not None:
        steps = torch.arange(x.shape[2], device=x.device)
        valid = (steps < lengths.to(x.device).long().unsqueeze(1)).unsqueeze(1)
        x = torch.where(valid, x, 0.0)
    y = conv(torch.nn.functional.pad(x, pads))
    if valid is not None:
        y = torch.where(valid, y, 0.0)
    return y.permute(0, 2, 1) if batch_first else y.permute(2, 0, 1)
'''

BATCH_NORM = '''
def batch_norm(bn, x, lengths, batch_first):
    """``bn`` (an nn.BatchNorm1d) over the last axis of x, the channels; while training with
    lengths, the statistics of the valid steps only (padded steps change nothing)."""
    c = x.shape[-1]
    if not bn.training or lengths is None or x.dim() != 3:
        return bn(x.reshape(-1, c)).reshape(x.shape)
    at = torch.arange(x.shape[1] if batch_first else x.shape[0], device=x.device)
    ends = lengths.to(x.device).long()
    valid = (at[None, :] < ends[:, None] if batch_first else at[:, None] < ends[None, :])
    valid = valid.unsqueeze(-1)
    count = valid.sum((0, 1), dtype=torch.float32).clamp(min=1)
    xf = x.float()
    mean = torch.where(valid, xf, 0).sum((0, 1)) / count
    var = torch.where(valid, xf - mean, 0).square().sum((0, 1)) / count
    with torch.no_grad():
        bn.num_batches_tracked.add_(1)
        bn.running_mean.lerp_(mean, bn.momentum)
        bn.running_var.lerp_(var * count / (count - 1).clamp(min=1), bn.momentum)
    y = (xf - mean) * torch.rsqrt(var + bn.eps)
    if bn.weight is not None:
        y = y * bn.weight + bn.bias
    return y.to(x.dtype)
'''

HELPERS = {"batch_norm": BATCH_NORM, "caffe_reshape": CAFFE_RESHAPE,
           "sequence_last": SEQUENCE_LAST, "conv_over_time": CONV_OVER_TIME}

SEQUENCE_POOL = '''
def sequence_pool(x, lengths, method, batch_first, score=None):
    """One vector per sequence from its valid steps (every step without lengths): their mean,
    their max, or (attention) their average weighted by the softmax of score(step); padded
    steps never count, and a sequence with no valid step gives zeros."""
    if batch_first:
        x = x.transpose(0, 1)
    pad = None
    if lengths is not None:
        steps = torch.arange(x.shape[0], device=x.device).unsqueeze(1)
        pad = (steps >= lengths.to(x.device).long().unsqueeze(0)).unsqueeze(2)
    if method == "max":
        if pad is None:
            return x.max(0).values
        top = x.masked_fill(pad, float("-inf")).max(0).values
        return torch.where(pad.all(0), 0.0, top)
    if pad is not None:
        x = x.masked_fill(pad, 0.0)
    if method == "mean":
        if pad is None:
            return x.mean(0)
        return x.sum(0) / lengths.to(x.device).clamp(min=1).unsqueeze(1).to(x.dtype)
    s = score(x)
    if pad is not None:
        s = s.masked_fill(pad, torch.finfo(s.dtype).min)
    return (torch.softmax(s, 0) * x).sum(0)
'''
HELPERS["sequence_pool"] = SEQUENCE_POOL

DIFFERENCE = '''
def difference(x, lengths, batch_first):
    """x[t+1] - x[t] along the steps of x, (T, N, C) or (N, T, C) when batch-first; with
    lengths, the differences from each sequence's last valid step on are zeros."""
    time = 1 if batch_first else 0
    y = x.diff(dim=time)
    if lengths is not None:
        at = torch.arange(y.shape[time], device=y.device)
        ends = lengths.to(y.device).long() - 1
        valid = at[None, :] < ends[:, None] if batch_first else at[:, None] < ends[None, :]
        y = torch.where(valid.unsqueeze(2), y, 0.0)
    return y
'''
HELPERS["difference"] = DIFFERENCE
HELPERS["fitted_series"] = FITTED_SERIES
HELPERS["mini_rocket"] = rocket_source()
HELPERS["hydra"] = hydra_source()
CELL_HELPERS: dict = {}  # helper name -> what makes its text: the cells fill it
IMPORTED = ("math", "F")  # what a helper may read besides torch and nn: model.py imports it
_texts: dict = {}


def _order() -> list[str]:
    """Every helper's name, in the order model.py holds them."""
    parts.need(parts.EXPORTS)
    return list(HELPERS) + sorted(CELL_HELPERS)


def _text(name: str) -> str:
    """A helper's text; a cell's is made the first time it is asked for."""
    if name not in _texts:
        _texts[name] = HELPERS[name] if name in HELPERS else CELL_HELPERS[name]()
    return _texts[name]


def helpers(names: set) -> list[str]:
    """The source lines of the helpers ``names``, in a fixed order."""
    out = []
    for name in _order():
        if name in names:
            out += _text(name).split("\n")
    return out


def imports(names: set) -> set[str]:
    """Of :data:`IMPORTED`, what the helpers ``names`` read."""
    return {n for name in _order() if name in names for n in free_names(_text(name))
            if n in IMPORTED}


def helper_names() -> frozenset[str]:
    """Every name a helper defines in model.py (no layer's variable may take one)."""
    return _names_of(tuple(_order()))


@lru_cache(maxsize=4)
def _names_of(names: tuple) -> frozenset[str]:
    return frozenset(_defined(node) for name in names for node in ast.parse(_text(name)).body
                     if _defined(node))


def _defined(node) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def data_constant(source, net) -> list[str]:
    """``DATA = {...}``: how the net reads its data (a forecaster's columns, statistics and
    forecast mode; a classifier's classes), when the source is a trained run."""
    data = source.data_meta
    kind = data.get("kind")
    if kind == "series":
        keys = ("inputs", "targets", "time_column", "stats", "predict", "horizon", "seq_len",
                "period")
        comment = ("# how the run read its series: 'data' holds the inputs z-scored with "
                   "stats x_mean/x_std;\n# the output is (N, horizon * targets): times "
                   "y_std, plus y_mean (predict level), the\n# last value in the window "
                   "(change) or the value one period before (season)")
    elif kind == "classes":
        keys = ("classes", "features", "stats", "frame")
        comment = ("# how the run read its sequences: features z-scored with stats mean/std; "
                   "the output's\n# class scores are in the order of 'classes'")
    else:
        return []
    kept = {k: data[k] for k in keys if k in data}
    return comment.split("\n") + [f"DATA = {json.dumps(kept, ensure_ascii=False)}", ""]


def main_block(inputs: list[str], g, vocab) -> list[str]:
    """``load()``, ``test_input()`` and the ``__main__`` block."""
    t = g.output(g.sources()[0], "data")
    lines = ["", "", "def load(folder=Path(__file__).resolve().parent):",
             '    """The model with its trained weights, in eval mode."""',
             "    from safetensors.torch import load_file",
             "    model = Model()",
             '    model.load_state_dict(load_file(str(folder / "weights.safetensors")))',
             "    return model.eval()", "", "",
             "def test_input():",
             '    """Fixed inputs: 5 steps of 2 sequences (the second 3 steps long, when the net '
             'reads lengths)."""']
    if t.dtype == "index":
        v = len(vocab) if vocab else g.dims.get("V", 2)
        first = f"torch.arange(10).remainder({v}).view(5, 2)"
    else:
        shape = tuple(5 if i == 0 and not isinstance(d, int) else d for i, d in
                      enumerate(t.shape))
        shape = tuple(2 if d == g.dims.get("N") else d for d in shape)
        first = f"torch.linspace(0, 1, steps={_numel(shape)}).view{shape!r}"
    steps = t.shape[0] if isinstance(t.shape[0], int) else 5
    given = [first] + [f"torch.tensor([{steps}, {min(3, steps)}])"] * ("lengths" in inputs)
    lines.append(f"    return ({', '.join(given)},)")
    lines += ["", "", 'if __name__ == "__main__":', "    model = load()",
              "    with torch.no_grad():", "        out, state = model(*test_input())",
              '    print("output", tuple(out.shape))',
              '    print("first values", [round(v, 6) for v in out.flatten()[:5].tolist()])',
              '    print("sum", round(out.double().sum().item(), 6))']
    if vocab is not None:
        lines += ["    # greedy continuation of a newline, one character at a time",
                  '    start = VOCAB.index("\\n") if "\\n" in VOCAB else 0',
                  '    ids, text = torch.tensor([[start]]), ""',
                  "    state = None", "    with torch.no_grad():", "        for _ in range(80):",
                  "            out, state = model(ids, state)",
                  "            ids = out.reshape(1, -1)[-1:].argmax(-1).view(1, 1)",
                  "            text += VOCAB[ids.item()]",
                  '    print("greedy text:", repr(text))']
    return lines


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
