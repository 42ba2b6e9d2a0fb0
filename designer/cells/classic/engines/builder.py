"""The classic cells' builder: each engine's module for a layer as drawn.

An engine that holds torch.nn's tensors (the cell's facts say which) gets its module:
``CUDNN``, ``CudnnRecurrent`` (torch.nn); ``PERSIST``, ``PersistRecurrent`` (the same
parameters, its recurrence in one persistent kernel per level); ``AUTO``, ``AutoRecurrent``
(the same parameters, run by whichever of those timed fastest); all three filled alike.
``CAFFE``, and LSTMSimple, which has no other engine: the unrolled net. The LSTMUnit building
block is the LSTM's unit (:func:`.unrolled.lstm_unit`) as a layer of its own.
"""
from __future__ import annotations

from torch import nn

from designer.cells.classic.engines.auto import AutoRecurrent
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.cells.classic.engines.persist import PersistRecurrent
from designer.cells.classic.engines.unrolled import lstm_unit
from designer.cells.classic.spec import CELLS, LSTM_UNIT
from designer.engines.net.builders import BuildContext, build_unrolled, builder
from designer.engines.net.layers import Lambda

MODULES = {m.engine_name: m for m in (CudnnRecurrent, PersistRecurrent, AutoRecurrent)}


@builder(*CELLS)
def build(ctx: BuildContext) -> nn.Module:
    kind, p = ctx.layer.type, ctx.params
    cell = CELLS[kind]
    engine = p.get("engine", cell.engines[0])
    if cell.layout(engine) in MODULES:
        return MODULES[engine].from_params(kind, ctx.input_size(), p, name=ctx.name)
    return build_unrolled(ctx)


@builder(LSTM_UNIT.id)
def build_unit(ctx: BuildContext) -> nn.Module:
    return Lambda(lstm_unit, LSTM_UNIT.caffe_type)
