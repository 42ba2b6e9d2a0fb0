"""MinGRU and MinLSTM out of the designer: ONNX (Scan ops, or the unrolled units) run in ONNX
Runtime and the standalone model.py with its MinRNN, on padded sequences; what every cell's
exports share is checked in tests/cells/test_every_cell.py."""
import numpy as np
import pytest
import torch

from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from tests.cells.exported import LENGTHS, logits_and_state
from tests.exchange.conftest import classes_project
from tests.exchange.pytorch_export.test_code import imported_packages, load_module

KINDS = ["MinGRU", "MinLSTM"]
DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))


def ours(source, data=DATA, lengths=LENGTHS):
    logits, state = logits_and_state(source.build_net(), data, lengths)
    return logits, state[0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine, both, levels", [("SCAN", False, 1), ("SCAN", True, 2),
                                                  ("CAFFE", True, 1), ("CAFFE", False, 2)])
@pytest.mark.parametrize("unrolled", [False, True])
def test_onnx_runtime_matches_torch_on_padded_sequences(tmp_path, kind, engine, both, levels,
                                                        unrolled):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = {n.op_type for n in model.graph.node}
    assert ("Scan" in ops) != unrolled
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert ins["rnn1.h0"] == [levels * (2 if both else 1), "N", 5]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, h = ours(source)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    assert np.abs(got["rnn1.hT"] - h.numpy()).max() < TOL


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine, both, levels", [("SCAN", True, 2), ("CAFFE", False, 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, kind, engine, both, levels):
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    out = tmp_path / "export"
    export_pytorch(source, out)
    assert imported_packages(out) <= {"pathlib", "torch", "safetensors"}
    assert "self.rnn1 = MinRNN(" in (out / "model.py").read_text()
    model = load_module(out, f"min_{kind}_{engine}_{both}").load(out)
    with torch.no_grad():
        theirs, state = model(DATA, LENGTHS)
        whole, _ = model(DATA)  # without lengths every step counts
    ref, h = ours(source)
    assert (theirs - ref).abs().max() < 1e-6 and (state["rnn1"] - h).abs().max() < 1e-6
    ref_whole, _ = ours(source, lengths=None)
    assert (whole - ref_whole).abs().max() < 1e-6
