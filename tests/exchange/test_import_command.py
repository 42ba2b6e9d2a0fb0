"""``rnn-designer import`` as a command: what it writes, where, and what it never touches."""
import pytest

onnx = pytest.importorskip("onnx")

from designer.cli import main  # noqa: E402

from .conftest import DATA, labelled_sequences, lstm_classifier_onnx  # noqa: E402


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "tiny.onnx"
    onnx.save(lstm_classifier_onnx(), str(path))
    return path


@pytest.mark.parametrize("kind", ["onnx", "prototxt"])
def test_an_existing_project_file_is_never_replaced(tmp_path, capsys, model, kind):
    source = model if kind == "onnx" else DATA / "char_rnn_train_val.prototxt"
    out, run = tmp_path / "mine.json", tmp_path / "run"
    out.write_text("the user's own project\n")
    args = ["--data", str(labelled_sequences(tmp_path)), "--run", str(run)] \
        if kind == "onnx" else []
    assert main(["import", str(source), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"rnn-designer: {out} already exists; give another --out (nothing was " \
        "written)"
    assert out.read_text() == "the user's own project\n" and not run.exists()
