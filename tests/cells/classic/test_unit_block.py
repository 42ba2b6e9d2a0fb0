"""LSTMUnit, Caffe's LSTM_UNIT as a building block users draw, is the classic cells' unit: its
spec, its builder, its memory rule and its writers for ONNX, PyTorch and prototxt all come from
designer/cells/classic, registered into the same registries as the cells' own pieces, and the
palette offers it where it always stood."""
import torch

from designer.engines.net.builders import builder_for
from designer.exchange.caffe.layers import CONVERTERS as CAFFE_READERS
from designer.exchange.onnx_export.ops import CONVERTERS as ONNX_WRITERS
from designer.exchange.pytorch_export.layers import LAYERS as PYTORCH_WRITERS
from designer.exchange.pytorch_export.snippets import helpers
from designer.graph import registry
from designer.graph.memory_layers import RULES

CLASSIC = "designer.cells.classic."


def test_every_piece_of_the_lstm_unit_block_is_the_classic_cells():
    spec = registry.get("LSTMUnit")
    pieces = {
        "spec": spec.infer,
        "builder": builder_for("LSTMUnit"),
        "memory rule": RULES["LSTMUnit"],
        "ONNX writer": ONNX_WRITERS.known()["LSTMUnit"],
        "PyTorch writer": PYTORCH_WRITERS.known()["LSTMUnit"],
        "prototxt reader": CAFFE_READERS.known()["lstmunit"],
    }
    elsewhere = {what: f.__module__ for what, f in pieces.items()
                 if not f.__module__.startswith(CLASSIC)}
    assert elsewhere == {}
    assert spec.caffe_type == registry.cell("LSTM").unit == "LSTM_UNIT"


def test_the_palette_offers_it_last_among_the_building_blocks():
    blocks = [s.id for s in registry.by_category()["Building blocks"]]
    assert blocks[-1] == "LSTMUnit" and {"Scale", "Eltwise", "Slice", "Concat"} <= set(blocks)


def test_the_built_block_and_its_pytorch_helper_compute_caffes_lstm_unit():
    """c = cont * f * c_prev + i * g, h = o * tanh(c), gates [i, f, o, g]: the layer the net
    builds and the ``lstm_unit`` model.py holds give the same numbers."""
    torch.manual_seed(0)
    c_prev, gates, cont = torch.randn(2, 3, 4), torch.randn(2, 3, 16), torch.tensor(
        [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    i, f, o, g = gates.split(4, -1)
    c = torch.sigmoid(f) * cont.unsqueeze(-1) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    want = (c, torch.sigmoid(o) * torch.tanh(c))
    built = builder_for("LSTMUnit")(None)(c_prev, gates, cont)
    space = {"torch": torch}
    exec("\n".join(helpers({"lstm_unit"})), space)
    written = space["lstm_unit"](c_prev, gates, cont)
    for got in (built, written):
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, want))
