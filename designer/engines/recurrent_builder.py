"""The builder of the recurrent layers: each engine's module for an LSTM, GRU or RNN as drawn.

``CUDNN``: ``CudnnRecurrent`` (torch.nn); ``PERSIST``: ``PersistRecurrent`` (the same parameters,
its recurrence in one persistent kernel per level); ``AUTO``: ``AutoRecurrent`` (the same
parameters, run by whichever of the two timed fastest); ``CAFFE`` and every ``LSTMSimple``:
``UnrolledRecurrent``. The three cuDNN-layout engines are filled alike. MinGRU and MinLSTM:
``SCAN``, ``ScanRecurrent`` (the parallel scan); ``CAFFE``, ``UnrolledRecurrent``; both filled
alike and holding the same tensors. mLSTM: ``CHUNK``, ``ChunkMLSTM`` (the chunkwise-parallel
form); ``CAFFE``, ``UnrolledMLSTM``; the same tensors too. sLSTM: ``FUSED``, ``FusedSLSTM``;
``CAFFE``, ``UnrolledRecurrent``; the same tensors on both.
"""
from __future__ import annotations

from torch import nn

from designer.graph.registry import weight_layout

from designer.cells.classic.engines.auto import AutoRecurrent
from designer.engines.builders import BuildContext, builder
from designer.cells.minimal.engines.scan import ScanRecurrent
from designer.cells.mlstm.engines.chunk import ChunkMLSTM, UnrolledMLSTM
from designer.engines.fillers import fill_bias, fill_weight
from designer.cells.classic.engines.persist import PersistRecurrent
from designer.cells.slstm.engines.fused import FusedSLSTM
from designer.cells.classic.engines.cudnn import DIRECTION_SUFFIXES, GATES, CudnnRecurrent
from designer.engines.unrolled import UnrolledRecurrent


def _fill_cudnn(m: CudnnRecurrent, params: dict) -> None:
    filler = params["weight_filler"]
    if filler == "torch_default":
        return
    g = GATES[m.kind]
    for k in range(m.levels):
        for sfx in DIRECTION_SUFFIXES[:m.directions]:
            fill_weight(getattr(m.rnn, f"weight_ih_l{k}{sfx}"), filler, m.hidden, g)
            fill_weight(getattr(m.rnn, f"weight_hh_l{k}{sfx}"), filler, m.hidden, g)
            # one effective bias, as the Caffe net has: all of it in bias_ih
            fill_bias(getattr(m.rnn, f"bias_ih_l{k}{sfx}"), params["bias_filler"])
            fill_bias(getattr(m.rnn, f"bias_hh_l{k}{sfx}"), 0.0)


@builder("MinGRU", "MinLSTM")
def _min_recurrent(ctx: BuildContext) -> nn.Module:
    e = ctx.int_dim(ctx.input_shape()[2], "the input size")
    cls = UnrolledRecurrent if ctx.params.get("engine", "SCAN") == "CAFFE" else ScanRecurrent
    return cls.from_params(ctx.layer.type, e, ctx.params, name=ctx.name)


@builder("mLSTM")
def _mlstm(ctx: BuildContext) -> nn.Module:
    e = ctx.int_dim(ctx.input_shape()[2], "the input size")
    cls = UnrolledMLSTM if ctx.params.get("engine", "CHUNK") == "CAFFE" else ChunkMLSTM
    return cls.from_params(e, ctx.params, name=ctx.name)


@builder("sLSTM")
def _slstm(ctx: BuildContext) -> nn.Module:
    e = ctx.int_dim(ctx.input_shape()[2], "the input size")
    if ctx.params.get("engine", "FUSED") == "CAFFE":
        return UnrolledRecurrent.from_params("sLSTM", e, ctx.params, name=ctx.name)
    return FusedSLSTM.from_params(e, ctx.params, name=ctx.name)


@builder("LSTM", "GRU", "RNN", "LSTMSimple")
def _recurrent(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    kind = ctx.layer.type
    e = ctx.int_dim(ctx.input_shape()[2], "the input size")
    engine = p.get("engine", "AUTO")
    if kind != "LSTMSimple" and weight_layout(engine) == "CUDNN":
        cls = {"PERSIST": PersistRecurrent, "AUTO": AutoRecurrent}.get(engine, CudnnRecurrent)
        m = cls(kind, e, p["num_output"], p["num_layers"], p["dropout_ratio"],
                p["batch_first"], p.get("nonlinearity", "tanh"),
                p.get("bidirectional", False), ctx.name)
        _fill_cudnn(m, p)
        return m
    return UnrolledRecurrent.from_params(kind, e, p, name=ctx.name)
