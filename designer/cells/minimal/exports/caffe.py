"""MinGRU and MinLSTM in a prototxt: no Caffe has them, so the file names each by its own type
(the ``#@`` line holds its parameters, which rnn-designer reads back), and says so."""
from __future__ import annotations

from designer.cells.minimal.spec import CELLS
from designer.exchange.caffe.exporter import PARAMS, own_layer

PARAMS.register(*CELLS)(own_layer)
