"""File > Import of an ONNX model in the window: the project and its run folder are written
beside each other and opened; a bad file is said in one sentence and nothing is written."""
import warnings

import pytest
import torch
from torch import nn

pytest.importorskip("onnx")

from designer.ui.exchange import menu, onnx_in  # noqa: E402
from tests.ui.conftest import snapshot  # noqa: E402

TEXT = "abcdefghij klmnopqr\n" * 40  # 20 distinct characters, as the model's vocabulary


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.lstm, self.out = nn.Embedding(20, 8), nn.LSTM(8, 12, 2), \
            nn.Linear(12, 20)

    def forward(self, x):
        return self.out(self.lstm(self.embed(x))[0])


@pytest.fixture
def dialogs(tiny, monkeypatch):
    """The file dialogs answer from ``tiny.answers`` (open) and ``tiny.save_to`` (save)."""
    tiny.answers, tiny.exchange.notes = [], []
    tiny.exchange.inform = lambda title, text: tiny.exchange.notes.append((title, text))
    opened = lambda *a, **k: (str(tiny.answers.pop(0)), "")  # noqa: E731
    monkeypatch.setattr(menu.QFileDialog, "getOpenFileName", staticmethod(opened))
    monkeypatch.setattr(onnx_in.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tiny.save_to), "")))
    return tiny


def export_char_model(path):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(CharModel().eval(), (torch.randint(0, 20, (7, 3)),), str(path),
                          dynamo=False, opset_version=17, input_names=["tokens"],
                          output_names=["out"], dynamic_axes={"tokens": {0: "T", 1: "N"}})
    return path


def test_an_onnx_model_opens_on_the_canvas_with_its_run(dialogs, tmp_path):
    w = dialogs
    model = export_char_model(tmp_path / "char.onnx")
    (tmp_path / "shakespeare.txt").write_text(TEXT)
    w.answers = [model, tmp_path / "shakespeare.txt"]  # the model, then its data
    w.save_to = tmp_path / "imported" / "char.json"
    w.exchange.import_dialog()
    assert not w.alerts
    g = w.doc.graph
    assert [la.type for la in g.layers()] == ["CharText", "Embed", "LSTM", "LSTM",
                                              "InnerProduct", "SoftmaxWithLoss"]
    assert len(w.scene.nodes()) == len(g) and not w.alerts
    assert w.doc.path == w.save_to and g.layer("data").get("corpus") == "../shakespeare.txt"
    run = tmp_path / "imported" / "char-run"
    assert (run / "last.json").is_file() and w.exchange.latest_run() == str(run.resolve())
    assert not w.answers and w.exchange.notes == []  # its data was given: nothing to say


def test_a_bad_file_is_said_in_one_sentence_and_nothing_is_written(dialogs, tmp_path):
    w = dialogs
    before = snapshot(w.doc.graph)
    bad = tmp_path / "cut.onnx"
    bad.write_bytes(export_char_model(tmp_path / "whole.onnx").read_bytes()[:500])
    w.answers, w.save_to = [bad, tmp_path / "corpus.txt"], tmp_path / "out" / "cut.json"
    w.exchange.import_dialog()
    assert len(w.alerts) == 1 and "is not an ONNX model" in w.alerts[0]
    assert "\n" not in w.alerts[0] and not (tmp_path / "out").exists()
    assert snapshot(w.doc.graph) == before


def test_the_fix_of_a_data_layer_without_its_file_opens_the_data_picker(tiny, tmp_path,
                                                                        monkeypatch, qtbot):
    from designer.graph.hints import Fix
    from designer.ui.problems import pick
    w = tiny
    (tmp_path / "other.txt").write_text(TEXT)
    monkeypatch.setattr(pick.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(tmp_path / "other.txt"), "")))
    count = w.doc.stack.count()
    w.apply_fix(Fix("pick_data", "data", "pick the data file of data", param="corpus"))
    assert w.doc.graph.layer("data").get("corpus") == "other.txt"
    assert w.doc.stack.count() == count + 1
