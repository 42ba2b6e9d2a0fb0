"""torch.onnx.export's dynamo path writes the steps and sequences it traced as numbers in its
Reshapes (T even when asked to keep it dynamic): they are matched to the input's fixed sizes,
so the character model (Embedding + 2-level LSTM + Linear) imports, matches ONNX Runtime and
trains."""
import warnings

import numpy as np
import pytest
import torch

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")

from designer.cli import main  # noqa: E402
from designer.engines.net.build import Net  # noqa: E402
from designer.exchange.onnx_import import import_onnx  # noqa: E402
from tests.exchange.onnx_import.test_foreign import CharModel  # noqa: E402

CORPUS = "abcdefghij klmnopqr\n" * 40  # 20 distinct characters, as the model's vocabulary


def export(path, dynamic: bool):
    torch.manual_seed(0)
    x = torch.randint(0, 20, (7, 3))
    shapes = {"x": {0: torch.export.Dim("T"), 1: torch.export.Dim("N")}} if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(CharModel().eval(), (x,), str(path), dynamo=True, verbose=False,
                          input_names=["tokens"], output_names=["out"],
                          dynamic_shapes=shapes)
    return path


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_dynamo_char_model_matches_onnx_runtime_and_trains(tmp_path, dynamic):
    path = export(tmp_path / "char.onnx", dynamic)
    result = import_onnx(path, project_dir=tmp_path)
    g = result.project.graph
    assert [la.type for la in g.layers()] == ["CharText", "Embed", "LSTM", "LSTM",
                                              "InnerProduct", "SoftmaxWithLoss"]
    assert g.layer("data").get("seq_len") == 7  # the steps it was traced with
    net = Net(g)
    net.load_state_dict(result.weights)
    layer, _, _ = result.outputs["out"]
    x = torch.randint(0, 20, (7, 3))
    with torch.no_grad():
        got = net.eval()({"data.data": x}, None, want=(layer,)).blobs[(layer, 0)].numpy()
    ref = ort.InferenceSession(str(path)).run(None, {"tokens": x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
    if dynamic:
        return
    (tmp_path / "corpus.txt").write_text(CORPUS)  # then it trains
    out, run = tmp_path / "char.json", tmp_path / "run"
    assert main(["import", str(path), "--data", str(tmp_path / "corpus.txt"), "--out",
                 str(out), "--run", str(run)]) == 0
    assert main(["train", str(out), "--resume", str(run), "--steps", "2", "--quiet",
                 "--device", "cpu"]) == 0


def test_a_dynamo_conv1d_lstm_classifier_reads_its_fixed_batch_first_input(tmp_path):
    from tests.exchange.onnx_import.test_foreign_more import ConvLstm, sequences
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(ConvLstm().eval(), (torch.randn(4, 5, 3),), str(tmp_path / "c.onnx"),
                          dynamo=True, verbose=False)
    result = import_onnx(tmp_path / "c.onnx", str(sequences(tmp_path)), project_dir=tmp_path)
    g = result.project.graph
    assert [la.type for la in g.layers()][:4] == ["SequenceClasses", "Conv1D", "ReLU", "LSTM"]
    net = Net(g)
    net.load_state_dict(result.weights)
    (name, (layer, _, _)), = result.outputs.items()
    x = torch.randn(4, 5, 3)
    with torch.no_grad():
        got = net.eval()({"data.data": x.transpose(0, 1)}, None, want=(layer,)).blobs[
            (layer, 0)].numpy()
    session = ort.InferenceSession(str(tmp_path / "c.onnx"))
    ref = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
