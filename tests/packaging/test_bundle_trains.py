"""The built app does what its users do with it: trains every example project headless and
through the window, and on two processes, generates from a Char-RNN run, makes, trains, scores
and uses a forecaster for a CSV file, and exports a trained run.

Rendering a window is not enough: a module the bundle leaves out shows only on the path that
imports it (the spec once excluded ``sympy.plotting``, which every torch optimizer reaches, and
the app trained nothing). Each command is the built app in a subprocess with a timeout; the data
come through ``RNN_DESIGNER_DATA``. The examples are the app's own copies with validation cut
to 2 batches, so that a run of a few steps takes seconds, not minutes, on a laptop's CPU.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import DATA, PROJECTS, need_data
from tests.packaging.conftest import assert_clean, png_size, run_app

pytest.importorskip("PyInstaller", reason="PyInstaller is not installed")
pytestmark = pytest.mark.slow

STEPS = 2
EXAMPLES = {  # the data files each example reads
    "char-rnn-shakespeare": ("tinyshakespeare.txt",),
    "char-rnn-shakespeare-unrolled": ("tinyshakespeare.txt",),
    "char-rnn-audio": ("speech_8k.wav",),
    "co2-forecast": ("co2_weekly.csv",),
    "japanese-vowels": ("japanese_vowels/JapaneseVowels_TRAIN.ts",
                        "japanese_vowels/JapaneseVowels_TEST.ts"),
    "mnist-lstm": ("mnist",),
}
EVERY_EXAMPLE = [pytest.param(p.stem, marks=need_data(*EXAMPLES.get(p.stem, ())))
                 for p in sorted(PROJECTS.glob("*.json"))]


def quick_copy(app: Path, stem: str, folder: Path) -> Path:
    """The app's own copy of an example, written to ``folder`` with 2 validation batches."""
    bundled = app / "_internal" / "projects" / f"{stem}.json"
    assert bundled.is_file(), f"the app does not bring the example {stem}"
    project = json.loads(bundled.read_text())
    project.setdefault("training", {})["eval_batches"] = 2
    out = folder / f"{stem}.json"
    out.write_text(json.dumps(project, indent=1))
    return out


def assert_checkpoint(run: Path, steps: int = STEPS) -> None:
    """The run folder's last checkpoint is at ``steps``, with its weights."""
    last = json.loads((run / "last.json").read_text())
    assert last["step"] == steps
    assert (run / last["checkpoint"] / "weights.safetensors").stat().st_size > 0


@pytest.fixture(scope="module")
def headless(app, tmp_path_factory):
    """``train(stem)``: train an example headless (once a module); the finished process and
    its run folder."""
    done = {}

    def train(stem: str):
        if stem not in done:
            folder = tmp_path_factory.mktemp(stem)
            run = folder / "run"
            finished = run_app([app / "rnn-designer", "train", quick_copy(app, stem, folder),
                                "--steps", STEPS, "--seed", "1", "--quiet", "--out", run],
                               folder)
            done[stem] = finished, run
        return done[stem]
    return train


@pytest.mark.parametrize("stem", EVERY_EXAMPLE)
def test_the_app_trains_every_example_headless(headless, stem):
    finished, run = headless(stem)
    assert_clean(finished)
    assert f"finished at step {STEPS}" in finished.stdout
    assert_checkpoint(run)


@need_data("co2_weekly.csv")
def test_the_app_trains_data_parallel_on_two_processes(app, tmp_path):
    # the launcher starts its workers as `sys.executable -m designer train ...`: in the app,
    # sys.executable is the app itself (packaging/launcher.py takes the -m designer)
    finished = run_app([app / "rnn-designer", "train", quick_copy(app, "co2-forecast", tmp_path),
                        "--steps", STEPS, "--nproc", 2, "--quiet", "--out", "run"], tmp_path)
    assert_clean(finished)
    assert_checkpoint(tmp_path / "run")
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    assert {r["world_size"] for r in records if r["kind"] == "train"} == {2}


@pytest.mark.parametrize("stem", EVERY_EXAMPLE)
def test_the_window_trains_every_example_and_uses_the_run(app, tmp_path, stem):
    # --train-steps trains as the Train button does (the worker thread, the live charts), then
    # generates text or audio, forecasts or classifies in the Output panel
    shot, runs = tmp_path / "trained.png", tmp_path / "runs"
    finished = run_app([app / "rnn-designer", "gui", quick_copy(app, stem, tmp_path),
                        "--train-steps", STEPS, "--screenshot", shot], tmp_path,
                       timeout=600, env={"RNN_DESIGNER_RUNS": str(runs)})
    assert_clean(finished)
    assert png_size(shot) == (1440, 900)
    (run,) = runs.iterdir()
    assert_checkpoint(run)


@need_data("tinyshakespeare.txt")
def test_the_app_generates_from_a_char_rnn_run(app, headless, tmp_path):
    _, run = headless("char-rnn-shakespeare")
    finished = run_app([app / "rnn-designer", "generate", run, "--prime", "ROMEO:", "-n", 100,
                        "--seed", "1"], tmp_path)
    assert_clean(finished)
    assert finished.stdout.startswith("ROMEO:")
    assert len(finished.stdout) >= len("ROMEO:") + 100


@need_data("tinyshakespeare.txt")
@pytest.mark.parametrize("fmt, files", [("onnx", ["char-rnn.onnx"]),
                                        ("pytorch", ["char-rnn/model.py",
                                                     "char-rnn/weights.safetensors"]),
                                        ("prototxt", ["char-rnn/train_val.prototxt",
                                                      "char-rnn/solver.prototxt"])])
def test_the_app_exports_a_trained_run(app, headless, tmp_path, fmt, files):
    _, run = headless("char-rnn-shakespeare")
    out = tmp_path / files[0].split("/")[0]
    finished = run_app([app / "rnn-designer", "export", run, "--format", fmt, "--out", out],
                       tmp_path)
    assert_clean(finished)
    for name in files:
        assert (tmp_path / name).stat().st_size > 0, name
    if fmt == "onnx":
        assert (tmp_path / files[0]).stat().st_size > 12e6  # with its 3.2 M float weights
        check_in_onnx_runtime(tmp_path / files[0])


def check_in_onnx_runtime(model: Path) -> None:
    """Where ONNX Runtime is installed (build.sh installs it next to the tests), the model
    reads 5 steps of 2 streams and gives the 65 characters' logits."""
    try:
        import numpy as np
        import onnxruntime
    except ImportError:
        return
    session = onnxruntime.InferenceSession(str(model))
    (logits,) = session.run(["logits"], {"tokens": np.zeros((5, 2), np.int64)})
    assert logits.shape == (5, 2, 65) and np.isfinite(logits).all()


@need_data("co2_weekly.csv")
def test_the_app_makes_a_forecaster_for_a_csv_trains_scores_and_uses_it(app, tmp_path):
    exe, csv = app / "rnn-designer", DATA / "co2_weekly.csv"
    made = run_app([exe, "init", "--data", csv, "--out", "co2.json"], tmp_path)
    assert_clean(made)
    assert (tmp_path / "co2.json").is_file()
    trained = run_app([exe, "train", "co2.json", "--steps", STEPS, "--quiet", "--out", "run"],
                      tmp_path)
    assert_clean(trained)
    assert_checkpoint(tmp_path / "run")

    scored = run_app([exe, "evaluate", "run", "--json"], tmp_path)
    assert_clean(scored)
    report = json.loads(scored.stdout)
    assert report["task"] == "forecast" and report["n"] > 100 and math.isfinite(report["rmse"])
    assert {b["name"] for b in report["baselines"]} >= {"persistence"}

    predicted = run_app([exe, "predict", "run", "--input", csv, "--out", "next.csv"], tmp_path)
    assert_clean(predicted)
    rows = (tmp_path / "next.csv").read_text().splitlines()
    assert rows[0] == "date,kind,co2" and ",forecast," in rows[-1]
