"""MinGRU and MinLSTM out of the designer: ONNX (Scan ops, or the unrolled units) run in ONNX
Runtime and the standalone model.py with its MinRNN, on padded sequences; what every cell's
exports share is checked in tests/cells/test_every_cell.py."""
import numpy as np
import pytest
import torch

from designer.exchange.source import ModelSource
from tests.cells.exported import LENGTHS, export_model_py, logits_and_state, same_as_ours
from tests.exchange.conftest import classes_project
from tests.exchange.pytorch_export.test_code import load_module

KINDS = ["MinGRU", "MinLSTM"]
DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))


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
    ref, (h,) = logits_and_state(source.build_net(), DATA)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    assert np.abs(got["rnn1.hT"] - h.numpy()).max() < TOL


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine, both, levels", [("SCAN", True, 2), ("CAFFE", False, 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, kind, engine, both, levels):
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    out = tmp_path / "export"
    export_model_py(source, out, {"pathlib", "torch", "safetensors"}, "MinRNN")
    model = load_module(out, f"min_{kind}_{engine}_{both}").load(out)
    same_as_ours(model, source.build_net(), DATA, 1e-6)
