"""The sLSTM out of the designer: ONNX (Scan ops, or the unrolled nodes) run in ONNX Runtime
and the standalone model.py with its SLSTM, on padded sequences; what every cell's exports
share is checked in tests/cells/test_every_cell.py."""
import numpy as np
import pytest
import torch

from designer.exchange.source import ModelSource
from tests.cells.exported import LENGTHS, export_model_py, logits_and_state, same_as_ours
from tests.exchange.conftest import classes_project
from tests.exchange.pytorch_export.test_code import load_module

DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
HEADS = {"num_output": 6, "num_heads": 2}


@pytest.mark.parametrize("engine, both, levels, forget", [
    ("FUSED", False, 1, "sigmoid"), ("FUSED", True, 2, "exp"), ("CAFFE", True, 1, "sigmoid"),
    ("CAFFE", False, 2, "exp")])
@pytest.mark.parametrize("unrolled", [False, True])
def test_onnx_runtime_matches_torch_on_padded_sequences(tmp_path, engine, both, levels, forget,
                                                        unrolled):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    project = classes_project(tmp_path, "sLSTM", engine, both, levels,
                              extra={**HEADS, "forget_gate": forget})
    source = ModelSource(project, tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = {n.op_type for n in model.graph.node}
    assert ("Scan" in ops) != unrolled
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    for s in ("h0", "c0", "n0", "m0"):
        assert ins[f"rnn1.{s}"] == [levels * (2 if both else 1), "N", 6]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, state = logits_and_state(source.build_net(), DATA)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    for s, value in zip(("hT", "cT", "nT", "mT"), state):
        assert np.abs(got[f"rnn1.{s}"] - value.numpy()).max() < TOL, s


@pytest.mark.parametrize("engine, both, levels", [("FUSED", True, 2), ("CAFFE", False, 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, engine, both, levels):
    project = classes_project(tmp_path, "sLSTM", engine, both, levels, extra=HEADS)
    source = ModelSource(project, tmp_path)
    out = tmp_path / "export"
    export_model_py(source, out, {"pathlib", "torch", "safetensors"}, "SLSTM")
    model = load_module(out, f"slstm_{engine}_{both}").load(out)
    same_as_ours(model, source.build_net(), DATA, 1e-6)
