"""Builders for the non-recurrent layers (Caffe semantics, computed at run-time shapes)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from designer.engines.net.builders import BuildContext, builder
from designer.engines.tensors.fillers import fill_bias, fill_weight


class Feed(nn.Module):
    """A data layer: its outputs come from the feeds ``Net.forward`` is given."""

    def forward(self, *args):  # pragma: no cover - the Net reads feeds directly
        raise RuntimeError("data layers are fed, not called")


@builder("CharText", "WavAudio", "MnistRows", "TimeSeries", "SequenceClasses")
def _feed(ctx: BuildContext) -> nn.Module:
    return Feed()


class Embed(nn.Module):
    def __init__(self, num: int, dim: int, bias: bool):
        super().__init__()
        self.embedding = nn.Embedding(num, dim)
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):
        y = self.embedding(x)
        return y + self.bias if self.bias is not None else y


@builder("Embed")
def _embed(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    m = Embed(ctx.int_dim(p["input_dim"], "input_dim"), p["num_output"], p["bias_term"])
    fill_weight(m.embedding.weight, p["weight_filler"], p["num_output"])
    fill_bias(m.bias, p["bias_filler"])
    return m


class InnerProduct(nn.Module):
    """y = W x + b over the dims from ``axis`` on (flattened), keeping the dims before it."""

    def __init__(self, k: int, m: int, axis: int, bias: bool):
        super().__init__()
        self.axis = axis
        self.linear = nn.Linear(k, m, bias=bias)

    def forward(self, x):
        a = self.axis if self.axis >= 0 else self.axis + x.dim()
        lead = x.shape[:a]
        return self.linear(x.reshape(*lead, -1))


@builder("InnerProduct")
def _inner_product(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    shape = ctx.input_shape()
    a = p["axis"] if p["axis"] >= 0 else p["axis"] + len(shape)
    k = 1
    for d in shape[a:]:
        k *= ctx.int_dim(d, "the input size")
    m = InnerProduct(k, ctx.int_dim(p["num_output"], "num_output"), p["axis"], p["bias_term"])
    if p["weight_filler"] != "torch_default":
        fill_weight(m.linear.weight, p["weight_filler"], m.linear.out_features)
        fill_bias(m.linear.bias, p["bias_filler"])
    return m


class Lambda(nn.Module):
    """A parameter-free layer given by a function (activations, clipping, shape layers)."""

    def __init__(self, fn, label: str):
        super().__init__()
        self.fn, self.label = fn, label

    def forward(self, *xs):
        return self.fn(*xs)

    def extra_repr(self) -> str:
        return self.label


@builder("Dropout")
def _dropout(ctx: BuildContext) -> nn.Module:
    return nn.Dropout(ctx.params["dropout_ratio"])


@builder("Clip")
def _clip(ctx: BuildContext) -> nn.Module:
    lo, hi = ctx.params["min"], ctx.params["max"]
    return Lambda(lambda x: x.clamp(lo, hi), f"min={lo}, max={hi}")


@builder("ReLU")
def _relu(ctx: BuildContext) -> nn.Module:
    s = ctx.params["negative_slope"]
    return Lambda((lambda x: F.leaky_relu(x, s)) if s else F.relu, f"negative_slope={s}")


@builder("TanH")
def _tanh(ctx: BuildContext) -> nn.Module:
    return Lambda(torch.tanh, "tanh")


@builder("Sigmoid")
def _sigmoid(ctx: BuildContext) -> nn.Module:
    return Lambda(torch.sigmoid, "sigmoid")


@builder("GELU")
def _gelu(ctx: BuildContext) -> nn.Module:
    return Lambda(F.gelu, "gelu")


@builder("Softmax")
def _softmax(ctx: BuildContext) -> nn.Module:
    a = ctx.params["axis"]
    return Lambda(lambda x: torch.softmax(x, a), f"axis={a}")


class SoftmaxWithLoss(nn.Module):
    def __init__(self, axis: int, ignore: int, weight: float):
        super().__init__()
        self.axis, self.ignore, self.weight = axis, ignore, weight

    def forward(self, logits, label):
        a = self.axis if self.axis >= 0 else self.axis + logits.dim()
        x = logits.movedim(a, -1).reshape(-1, logits.shape[a])
        loss = F.cross_entropy(x.float(), label.reshape(-1), ignore_index=self.ignore)
        return loss * self.weight if self.weight != 1.0 else loss


@builder("SoftmaxWithLoss")
def _loss(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    return SoftmaxWithLoss(p["axis"], p["ignore_label"], p["loss_weight"])


class Accuracy(nn.Module):
    def __init__(self, axis: int, k: int):
        super().__init__()
        self.axis, self.k = axis, k

    def forward(self, logits, label):
        a = self.axis if self.axis >= 0 else self.axis + logits.dim()
        x = logits.detach().movedim(a, -1).reshape(-1, logits.shape[a])
        top = x.topk(self.k, dim=1).indices
        return (top == label.reshape(-1, 1)).any(1).float().mean()


@builder("Accuracy")
def _accuracy(ctx: BuildContext) -> nn.Module:
    return Accuracy(ctx.params["axis"], ctx.params["top_k"])


class RegressionLoss(nn.Module):
    """Caffe's EuclideanLoss (sum of squared differences / 2N) or the L1 counterpart (sum of
    absolute differences / N); ``pred`` is compared with ``label`` value by value in each
    sample's order, so the two may differ in shape as long as each sample holds as many."""

    def __init__(self, kind: str, weight: float, batch_axes: tuple):
        super().__init__()
        self.kind, self.weight, self.batch_axes = kind, weight, batch_axes

    def forward(self, pred, label):
        diff = per_sample(pred, self.batch_axes[0]) - per_sample(label, self.batch_axes[1])
        n = diff.shape[0]
        loss = diff.square().sum() / (2 * n) if self.kind == "EuclideanLoss" else \
            diff.abs().sum() / n
        return loss * self.weight if self.weight != 1.0 else loss


def per_sample(x: torch.Tensor, batch_axis: int | None) -> torch.Tensor:
    """``x`` as (N, values of each sample) in float32 (batch axis unknown: one sample)."""
    if batch_axis is None:
        return x.float().reshape(1, -1)
    return x.float().movedim(batch_axis, 0).reshape(x.shape[batch_axis], -1)


@builder("EuclideanLoss", "L1Loss")
def _regression_loss(ctx: BuildContext) -> nn.Module:
    axes = tuple(t.batch for t in ctx.info.inputs)
    return RegressionLoss(ctx.layer.type, ctx.params["loss_weight"], axes)


class SequenceLast(nn.Module):
    """Each sequence's output at its last valid step (``lengths - 1``; the last step when no
    lengths are given)."""

    def __init__(self, batch_first: bool, bidirectional: bool = False):
        super().__init__()
        self.batch_first, self.bidirectional = batch_first, bidirectional

    def forward(self, x, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        if lengths is None:
            last = x[-1]
        else:
            at = (lengths.to(x.device).long() - 1).clamp(0, x.shape[0] - 1)
            last = x[at, torch.arange(x.shape[1], device=x.device)]
        if not self.bidirectional:
            return last
        half = x.shape[2] // 2  # the backward chain has read everything by the first step
        return torch.cat([last[:, :half], x[0, :, half:]], 1)


@builder("SequenceLast")
def _sequence_last(ctx: BuildContext) -> nn.Module:
    return SequenceLast(ctx.params["batch_first"], ctx.params["bidirectional"])


def caffe_reshape(x: torch.Tensor, shape: list, axis: int, num_axes: int) -> torch.Tensor:
    """Caffe's Reshape on the real tensor: 0 copies a dim, -1 is inferred."""
    a = axis if axis >= 0 else axis + x.dim() + 1
    end = x.dim() if num_axes < 0 else a + num_axes
    region = x.shape[a:end]
    new = [region[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(*x.shape[:a], *new, *x.shape[end:])


@builder("Reshape")
def _reshape(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    return Lambda(lambda x: caffe_reshape(x, p["shape"], p["axis"], p["num_axes"]),
                  f"shape={p['shape']}, axis={p['axis']}, num_axes={p['num_axes']}")


@builder("Slice")
def _slice(ctx: BuildContext) -> nn.Module:
    a, point = ctx.params["axis"], ctx.params["slice_point"]
    return Lambda(lambda x: (x.narrow(a, 0, point), x.narrow(a, point, x.shape[a] - point)),
                  f"axis={a}, slice_point={point}")


@builder("Concat")
def _concat(ctx: BuildContext) -> nn.Module:
    a = ctx.params["axis"]
    return Lambda(lambda x, y: torch.cat([x, y], a), f"axis={a}")


@builder("Eltwise")
def _eltwise(ctx: BuildContext) -> nn.Module:
    op = ctx.params["operation"]
    fn = {"SUM": torch.add, "PROD": torch.mul, "MAX": torch.maximum}[op]
    return Lambda(fn, op)


class Scale(nn.Module):
    """Multiply by the second input (broadcast from ``axis``) or by a learned scale."""

    def __init__(self, axis: int, shape: tuple | None, bias: bool):
        super().__init__()
        self.axis = axis
        self.weight = nn.Parameter(torch.ones(shape)) if shape is not None else None
        self.bias = nn.Parameter(torch.zeros(shape)) if shape is not None and bias else None

    def forward(self, x, scale=None):
        a = self.axis if self.axis >= 0 else self.axis + x.dim()
        s = scale if scale is not None else self.weight
        view = (1,) * a + tuple(s.shape) + (1,) * (x.dim() - a - s.dim())
        y = x * s.reshape(view)
        if scale is None and self.bias is not None:
            y = y + self.bias.reshape(view)
        return y


@builder("Scale")
def _scale(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    shape = None
    if ctx.info.inputs[1] is None:
        x = ctx.input_shape()
        a = p["axis"] if p["axis"] >= 0 else p["axis"] + len(x)
        dims = x[a:] if p["num_axes"] < 0 else x[a:a + p["num_axes"]]
        shape = tuple(ctx.int_dim(d, "the scale size") for d in dims)
    return Scale(p["axis"], shape, p["bias_term"])


def difference(x: torch.Tensor, lengths: torch.Tensor | None, batch_first: bool) -> torch.Tensor:
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


class Difference(nn.Module):
    """The first difference of a sequence (spec: ``designer.graph.layers.difference``)."""

    def __init__(self, batch_first: bool):
        super().__init__()
        self.batch_first = batch_first

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        return difference(x, lengths, self.batch_first)

    def extra_repr(self) -> str:
        return f"batch_first={self.batch_first}"


@builder("Difference")
def _difference(ctx: BuildContext) -> nn.Module:
    return Difference(ctx.params["batch_first"])
