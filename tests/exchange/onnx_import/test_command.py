"""``rnn-designer import`` as a command: what it writes, where, and what it never touches."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")

from designer.cli import main  # noqa: E402
from designer.training.run import checkpoint  # noqa: E402

from tests.exchange.conftest import DATA, labelled_sequences, lstm_classifier_onnx  # noqa: E402

ROOT = Path(__file__).parents[3]


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


STUCK_WRITING = """
import sys, time
from pathlib import Path
from designer.training.run import checkpoint
def stuck(*args, **kwargs):  # the run folder is being written: say so, and wait to be killed
    Path(sys.argv[1]).write_text("writing")
    time.sleep(120)
checkpoint.save = stuck
from designer.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.timeout(120)
def test_an_import_killed_while_it_writes_the_run_leaves_nothing_in_the_way(tmp_path, model):
    out, run, writing = tmp_path / "tiny.json", tmp_path / "run", tmp_path / "writing"
    args = ["import", str(model), "--out", str(out), "--data",
            str(labelled_sequences(tmp_path)), "--run", str(run)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", STUCK_WRITING, str(writing), *args],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not writing.exists():
            assert child.poll() is None, child.stderr.read().decode()
            assert time.monotonic() < deadline, "the import never reached its checkpoint"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)  # no cleanup can run
        child.wait()
    assert not run.exists() and not out.exists()
    assert main(args) == 0  # the same import again goes through
    assert checkpoint.has_checkpoint(run) and out.is_file()


def test_an_import_into_a_folder_not_made_yet_makes_it(tmp_path, capsys, model):
    data = labelled_sequences(tmp_path)
    out, run = tmp_path / "new" / "deeper" / "tiny.json", tmp_path / "new" / "tiny-run"
    assert main(["import", str(model), "--out", str(out), "--data", str(data), "--run",
                 str(run)]) == 0, capsys.readouterr().err
    assert out.is_file() and checkpoint.has_checkpoint(run)
    assert main(["validate", str(out)]) == 0  # the project finds its data from there
    (tmp_path / "notes.onnx").write_text("not a model\n")
    refused = tmp_path / "other" / "notes.json"
    assert main(["import", str(tmp_path / "notes.onnx"), "--out", str(refused)]) == 2
    assert not (tmp_path / "other").exists()  # a refusal leaves no folder behind either


def test_a_run_that_cannot_be_written_is_named_as_asked_and_nothing_stays(
        tmp_path, capsys, model, monkeypatch):
    from designer.training.run.errors import TrainingError
    from designer.training.run.session import Session

    def full(*args, **kwargs):
        raise TrainingError("the disk is full")
    monkeypatch.setattr(Session, "save", full)
    data, out, run = labelled_sequences(tmp_path), tmp_path / "tiny.json", tmp_path / "run"
    before = set(tmp_path.iterdir())
    assert main(["import", str(model), "--out", str(out), "--data", str(data), "--run",
                 str(run)]) == 2
    assert capsys.readouterr().err == f"rnn-designer: {run}: the run cannot be written (the " \
        "disk is full)\n"
    assert set(tmp_path.iterdir()) == before
