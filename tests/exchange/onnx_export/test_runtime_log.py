"""Our ONNX exports load in ONNX Runtime without a warning, and the states stay optional."""
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")

from designer.exchange.onnx_export.export import build_model  # noqa: E402
from designer.exchange.source import ModelSource  # noqa: E402
from tests.exchange.conftest import text_project  # noqa: E402


@pytest.mark.parametrize("unrolled", [False, True])
def test_a_char_rnn_loads_without_warnings_and_its_state_may_be_left_out(tmp_path, capfd,
                                                                         unrolled):
    project = text_project(tmp_path, "LSTM", "CUDNN")
    model, _ = build_model(ModelSource(project, tmp_path / "tiny.json"), unrolled, steps=5)
    capfd.readouterr()
    opts = ort.SessionOptions()
    opts.log_severity_level = 1  # informational messages and up: warnings are shown
    sess = ort.InferenceSession(model.SerializeToString(), opts)
    tokens = np.arange(10, dtype=np.int64).reshape(5, 2) % project.graph.dims["V"]
    fresh = sess.run(None, {"tokens": tokens})
    zeros = np.zeros((2, 2, 16), np.float32)
    given = sess.run(None, {"tokens": tokens, "rnn1.h0": zeros, "rnn1.c0": zeros})
    out, err = capfd.readouterr()
    assert "[W:onnxruntime" not in out + err
    assert "appears in graph inputs" not in out + err
    assert np.array_equal(fresh[0], given[0])
    ones = sess.run(None, {"tokens": tokens, "rnn1.h0": zeros + 1, "rnn1.c0": zeros})
    assert not np.allclose(ones[0], given[0])
    assert not model.graph.initializer or not {i.name for i in model.graph.initializer} & {
        i.name for i in model.graph.input}
