"""The mLSTM out of the designer: ONNX (a Scan per level, or the unrolled MLSTM_UNIT nodes) run
in ONNX Runtime against the CHUNK engine, read back by our ONNX import, and the standalone
model.py with its MLSTM."""
import numpy as np
import pytest
import torch

from designer.engines.net.build import Net
from designer.exchange.source import ModelSource
from tests.cells.exported import LENGTHS, export_model_py, logits_and_state, same_as_ours
from tests.exchange.conftest import classes_project
from tests.exchange.pytorch_export.test_code import load_module

DATA = torch.randn(7, 4, 2, generator=torch.Generator().manual_seed(3))
HEADS = {"num_output": 6, "num_heads": 2}
STATES = ("C", "n", "m")


def chunked(source, chunk: int = 3) -> Net:
    """The source's net and weights on the CHUNK engine, in chunks of ``chunk`` steps (so that
    the state is carried from chunk to chunk within the test's 7 steps)."""
    weights = source.build_net().state_dict()
    source.project.graph.set_param("rnn1", "engine", "CHUNK")
    net = Net(source.project.graph)
    net.load_state_dict(weights)
    net.eval()
    assert net.engines["rnn1"] == "CHUNK"
    net.layers["rnn1"].chunk = chunk
    return net


def run(net, data=DATA, lengths=LENGTHS):
    return logits_and_state(net, data, lengths)


@pytest.mark.parametrize("engine, levels, forget, unrolled, norm", [
    ("CHUNK", 1, "sigmoid", False, "head"), ("CHUNK", 2, "exp", False, "none"),
    ("CAFFE", 2, "sigmoid", False, "head"), ("CHUNK", 2, "sigmoid", True, "head"),
    ("CAFFE", 1, "exp", True, "none")])
def test_onnx_runtime_matches_the_chunk_engine_on_padded_sequences(tmp_path, engine, levels,
                                                                   forget, unrolled, norm):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    project = classes_project(tmp_path, "mLSTM", engine, False, levels,
                              extra={**HEADS, "forget_gate": forget, "cell_norm": norm})
    source = ModelSource(project, tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = {n.op_type for n in model.graph.node}
    assert ("Scan" in ops) != unrolled
    norms = [n for n in model.graph.node if n.op_type == "LayerNormalization"] + [
        n for scan in model.graph.node if scan.op_type == "Scan"
        for n in scan.attribute[0].g.node if n.op_type == "LayerNormalization"]
    assert bool(norms) == (norm == "head")
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert [ins[f"rnn1.{s}0"] for s in STATES] == [[levels, "N", w] for w in (18, 6, 2)]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, state = run(chunked(source))
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    for s, value in zip(STATES, state):
        assert np.abs(got[f"rnn1.{s}T"] - value.numpy()).max() < TOL, s


@pytest.mark.parametrize("engine, unrolled", [("CHUNK", False), ("CAFFE", True)])
def test_our_onnx_import_reads_it_back_with_the_same_outputs(tmp_path, engine, unrolled):
    from designer.exchange.onnx_export.export import build_model
    from designer.exchange.onnx_import import import_onnx
    project = classes_project(tmp_path, "mLSTM", engine, False, 2, extra=HEADS)
    source = ModelSource(project, tmp_path / "classes.json")
    model, _ = build_model(source, unrolled, steps=7)
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    result = import_onnx(tmp_path / "m.onnx", project_dir=tmp_path)
    back = result.project.graph.layer("rnn1")
    assert back.type == "mLSTM" and back.params == project.graph.layer("rnn1").params
    theirs = Net(result.project.graph)
    theirs.load_state_dict(result.weights)
    theirs.eval()
    ours = source.build_net()
    (a, sa), (b, sb) = run(ours), run(theirs)
    assert (a - b).abs().max() < 1e-6
    assert all((x - y).abs().max() < 1e-6 for x, y in zip(sa, sb))


@pytest.mark.parametrize("engine, levels", [("CHUNK", 2), ("CAFFE", 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, engine, levels):
    project = classes_project(tmp_path, "mLSTM", engine, False, levels,
                              extra={**HEADS, "forget_gate": "exp" if levels == 1 else "sigmoid",
                                     "cell_norm": "none" if levels == 1 else "head"})
    source = ModelSource(project, tmp_path)
    out = tmp_path / "export"
    code = export_model_py(source, out, {"math", "pathlib", "torch", "safetensors"}, "MLSTM")
    assert ("cell_norm='none'" in code) == (levels == 1)
    model = load_module(out, f"mlstm_{engine}").load(out)
    same_as_ours(model, source.build_net(), DATA, 1e-5)
