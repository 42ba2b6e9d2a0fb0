"""``rnn-designer gui PROJECT --screenshot FILE.png [--unrolled LAYER]`` renders the window to a
PNG offscreen and exits; bad input gets one sentence and exit code 2."""
import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from tests.conftest import PROJECTS, ROOT, need_data
from tests.ui.conftest import not_blank, tiny_project


def designer(*args, timeout=120):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "designer", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


@need_data("tinyshakespeare.txt")
@pytest.mark.parametrize("extra", [[], ["--unrolled", "lstm1"]], ids=["window", "unrolled"])
def test_a_screenshot_of_the_window_is_written(tmp_path, extra):
    out = tmp_path / "shot.png"
    done = designer("gui", str(PROJECTS / "char-rnn-shakespeare-unrolled.json"),
                    "--screenshot", str(out), *extra)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out} (1440x900)"
    image = QImage(str(out))
    assert image.width() >= 1024 and image.height() >= 640 and not_blank(image)


def test_a_broken_project_gets_one_sentence_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    done = designer("gui", str(bad), "--screenshot", str(tmp_path / "x.png"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"rnn-designer: {bad}: is not valid JSON (line 1, column 6: Expecting ',' delimiter)"]
    assert not (tmp_path / "x.png").exists()


def test_unrolling_a_layer_that_is_not_recurrent_is_refused(tmp_path):
    done = designer("gui", str(PROJECTS / "char-rnn-shakespeare.json"), "--screenshot",
                    str(tmp_path / "x.png"), "--unrolled", "ip1")
    assert done.returncode == 2
    from designer.graph import registry
    kinds = registry.recurrent_kinds()
    assert f"ip1 is an InnerProduct layer; only {', '.join(kinds[:-1])} and {kinds[-1]} " \
        "layers unroll" in done.stderr
    assert "Traceback" not in done.stderr


def test_train_steps_trains_through_the_window_then_pictures_charts_and_text(tmp_path):
    project = tiny_project(tmp_path, steps=6)
    out = tmp_path / "trained.png"
    done = designer("gui", str(project), "--train-steps", "6", "--device", "cpu",
                    "--screenshot", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out} (1440x900)"
    assert not_blank(QImage(str(out)))
    (run,) = (tmp_path / "runs").iterdir()  # the test's RNN_DESIGNER_RUNS
    assert (run / "last.json").exists() and len((run / "metrics.jsonl").read_text().split()) > 3


def test_train_steps_must_be_positive(tmp_path):
    done = designer("gui", str(PROJECTS / "char-rnn-shakespeare.json"), "--train-steps", "0",
                    "--screenshot", str(tmp_path / "x.png"))
    assert done.returncode == 2
    assert done.stderr.strip() == "rnn-designer: --train-steps must be at least 1"


def test_a_run_that_cannot_start_is_one_sentence_and_exit_1(tmp_path):
    project = tiny_project(tmp_path)
    (tmp_path / "corpus.txt").unlink()
    done = designer("gui", str(project), "--train-steps", "3", "--screenshot",
                    str(tmp_path / "x.png"))
    assert done.returncode == 1
    assert done.stderr.strip().startswith("rnn-designer: ") and "corpus.txt" in done.stderr
    assert "Traceback" not in done.stderr


@need_data("tinyshakespeare.txt")
def test_without_a_project_the_window_opens_on_the_char_rnn_example():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", RNN_DESIGNER_STARTUP_PROBE="1")
    done = subprocess.run([sys.executable, "-m", "designer"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    visible, when, heavy, title = done.stdout.strip().split(" ", 3)
    assert visible == "visible" and heavy == "-"  # neither torch nor pyqtgraph was imported
    assert title.startswith("Char-RNN Shakespeare (cuDNN)") and "char-rnn-shakespeare.json" in title


def test_inspect_renders_a_run_in_the_window(tmp_path):
    project = tiny_project(tmp_path, steps=6)
    run = tmp_path / "run"
    from designer.graph.project import load
    from designer.training.run.loop import RunOptions, train
    list(train(load(project), RunOptions(out=run, steps=6)))
    out = tmp_path / "inspect.png"
    done = designer("gui", str(project), "--inspect", str(run), "--screenshot", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out} (1440x900)" and "Traceback" not in done.stderr
    assert not_blank(QImage(str(out)))


def test_inspect_needs_a_run_folder(tmp_path):
    project = tiny_project(tmp_path)
    for folder, words in ((tmp_path / "nowhere", "is not a run folder (no such folder)"),
                          (tmp_path, "holds no training run (there is no metrics.jsonl)")):
        done = designer("gui", str(project), "--inspect", str(folder), "--screenshot",
                        str(tmp_path / "x.png"))
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip() == f"rnn-designer: {folder} {words}"
        assert not (tmp_path / "x.png").exists()
