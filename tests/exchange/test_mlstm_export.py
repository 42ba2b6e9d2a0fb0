"""The exports an mLSTM has not got yet say so in one sentence, and write nothing."""
import pytest

from designer.exchange.onnx_export import export_onnx
from designer.exchange.pytorch_code import export_pytorch
from designer.exchange.source import ExchangeError, ModelSource
from tests.training.run.test_mlstm_runs import mlstm_project


@pytest.mark.parametrize("what", ["ONNX", "PyTorch code"])
def test_an_mlstm_is_refused_by_name(tmp_path, what):
    p = mlstm_project(tmp_path)
    source = ModelSource(p, tmp_path / "tiny.json")
    out = tmp_path / ("m.onnx" if what == "ONNX" else "pt")
    with pytest.raises(ExchangeError) as e:
        (export_onnx if what == "ONNX" else export_pytorch)(source, out)
    assert str(e.value).endswith(f"lstm1 is an mLSTM, which the {what} export cannot write "
                                 "yet")
    assert not out.exists()
