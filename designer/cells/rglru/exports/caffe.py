"""The RG-LRU in a prototxt: no Caffe has it, so the file names it by its own type (the ``#@``
line holds its parameters, which rnn-designer reads back), and says so."""
from __future__ import annotations

from designer.cells.rglru.spec import KIND
from designer.exchange.caffe.exporter import PARAMS, own_layer

PARAMS.register(KIND)(own_layer)
