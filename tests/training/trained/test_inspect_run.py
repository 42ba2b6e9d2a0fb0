"""``rnn-designer inspect`` and what the training loop hands out for inspection."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from designer.training.run.control import WeightsTap
from designer.training.run.loop import RunOptions, train
from tests.conftest import ROOT
from tests.training.run.test_loop import tiny_project

LINE = "Before we proceed any further, hear me speak."


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inspect")
    p = tiny_project(tmp, dropout=0.0)
    list(train(p, RunOptions(out=tmp / "run", steps=12)))
    return tmp / "run"


def designer(*args):
    """The command in a child process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "designer", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def command(capsys, *args):
    """The command in this process (quicker): ``(exit code, stdout, stderr)``."""
    from designer.cli import main
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_has_surprise_per_character_a_forget_gate_and_a_gradient_norm_per_step(run_dir):
    done = designer("inspect", run_dir, "--text", LINE, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    n = len(LINE)
    assert data["input"]["text"] == LINE and data["step"] == 12
    assert len(data["surprise"]) == n and data["surprise"][0] is None
    assert all(s > 0 for s in data["surprise"][1:])
    assert data["loss"] == pytest.approx(np.mean(data["surprise"][1:]), abs=1e-5)
    assert len(data["grad_norm_per_step"]) == n and all(g >= 0 for g in data["grad_norm_per_step"])
    assert [lv["name"] for lv in data["layers"]] == ["lstm1/L0", "lstm1/L1"]
    for lv in data["layers"]:
        f = np.array(lv["gates"]["f"])
        assert f.shape == (n, 16) and ((f >= 0) & (f <= 1)).all()
        assert set(lv["gates"]) == set("ifog") and np.array(lv["c"]).shape == (n, 16)
        assert 0 <= lv["saturation"]["all"] <= 1
    top = data["top"][1]
    assert len(top) == 5 and all(isinstance(c, str) and len(c) == 1 for c, _ in top)


def test_one_layer_and_the_text_report(run_dir, capsys):
    code, out, _ = command(capsys, "inspect", run_dir, "--text", LINE, "--layer", "lstm1/L1",
                           "--json")
    assert [lv["name"] for lv in json.loads(out)["layers"]] == ["lstm1/L1"]
    code, out, err = command(capsys, "inspect", run_dir, "--text", "hear me")
    assert code == 0, err
    lines = out.splitlines()
    assert "7 steps of typed text" in lines[0] and "mean surprise" in lines[1]
    assert any(line.startswith("lstm1/L0     LSTM") for line in lines)
    assert lines[-7].split()[:2] == ["0", "h"] and lines[-3].split()[1] == "\u2423"


def test_without_text_the_held_out_snippet_is_read(run_dir, capsys):
    code, out, err = command(capsys, "inspect", run_dir, "--steps", "30", "--json", "--parity")
    assert code == 0, err
    data = json.loads(out)
    assert data["input"]["origin"] == "held-out text of corpus.txt"
    assert 2 <= data["input"]["steps"] <= 30
    assert data["parity"]["lstm1"]["pair"] == ["cuDNN", "unrolled"]


@pytest.mark.parametrize("args,message", [
    (["--text", "Zebra~"], "the text holds 'Z', 'b', '~', which the model never saw (its "
                            "vocabulary has 30 characters)"),
    (["--layer", "ip1"], "there is no recurrent layer or level named 'ip1' (the net has lstm1, "
                         "lstm1/L0, lstm1/L1)"),
    (["--steps", "1"], "--steps must be between 2 and 2000"),
])
def test_bad_input_is_one_sentence_and_exit_2(run_dir, args, message, capsys):
    code, _, err = command(capsys, "inspect", run_dir, *args)
    assert code == 2 and err.strip() == f"rnn-designer: {message}"


def test_a_folder_without_a_run_is_one_sentence(tmp_path):
    done = designer("inspect", tmp_path, "--text", "ab")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith(f"rnn-designer: {tmp_path} holds no checkpoint")


def test_the_loop_hands_out_weights_only_when_asked_and_they_are_copies(tmp_path):
    tap = WeightsTap()
    tap.request(5)
    seen = []
    recs = []
    for rec in train(tiny_project(tmp_path), RunOptions(out=tmp_path / "run", steps=10,
                                                        tap=tap)):
        recs.append(rec)
        if rec["kind"] == "weights":
            seen.append((rec["step"], {k: v.copy() for k, v in rec["weights"].items()},
                         rec["weights"]))
    assert [s for s, _, _ in seen] == [5] and not tap.armed
    step, before, handed = seen[0]
    assert set(handed) >= {"layers.lstm1.rnn.weight_hh_l0", "layers.ip1.linear.weight"}
    assert all(np.array_equal(before[k], handed[k]) for k in handed)  # training went on
    start = recs[0]
    assert start["probe"]["kind"] == "text" and len(start["vocab"]) == 30


def test_every_validation_records_saturation_and_a_scored_snippet(tmp_path):
    recs = list(train(tiny_project(tmp_path), RunOptions(out=tmp_path / "run", steps=12)))
    vals = [r for r in recs if r["kind"] == "val"]
    probes = [r for r in recs if r["kind"] == "probe"]
    assert len(vals) == len(probes) == 2
    for v, p in zip(vals, probes):
        assert set(v["gate_saturation"]) == {"lstm1/L0", "lstm1/L1"}
        assert set(v["gate_saturation"]["lstm1/L0"]) == {"i", "f", "o", "g", "all"}
        assert p["step"] == v["step"] and p["surprise"][0] is None and p["top"][0] == []
        assert len(p["surprise"]) == len(p["text"]) == len(p["top"])
        assert math.isclose(p["loss"], np.mean(p["surprise"][1:]), abs_tol=1e-4)
    logged = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text()
              .splitlines()]
    assert [r["gate_saturation"] for r in logged if r["kind"] == "val"] == \
        [v["gate_saturation"] for v in vals]
    assert not any(r["kind"] == "probe" for r in logged)


def test_an_mnist_run_is_inspected_on_a_held_out_digit(tmp_path, capsys):
    from designer.graph.project import Project
    from tests.nets import digits_net
    from tests.training.data.test_data_mnist import write_set
    write_set(tmp_path, "t10k", 120)
    g = digits_net({"folder": str(tmp_path), "batch_size": 10, "holdout": 30}, 8, tmp_path)
    project = Project(g, "digits", "", {"type": "Adam", "max_steps": 4},
                      {"log_interval": 2, "eval_interval": 2, "eval_batches": 1,
                       "device": "cpu"})
    recs = list(train(project, RunOptions(out=tmp_path / "run", steps=4)))
    assert recs[0]["probe"]["kind"] == "mnist" and recs[0]["vocab"] is None
    assert "gate_saturation" in next(r for r in recs if r["kind"] == "val")
    code, out, err = command(capsys, "inspect", tmp_path / "run", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["input"]["kind"] == "mnist" and data["input"]["steps"] == 28
    assert data["input"]["origin"].startswith("the first held-out digit of")
    assert data["surprise"] is None and "top" not in data
    assert len(data["prediction"]) == 5 and sum(p for _, p in data["prediction"]) <= 1.0
    assert len(data["grad_norm_per_step"]) == 28 and min(data["grad_norm_per_step"]) > 0
    assert np.array(data["layers"][0]["gates"]["f"]).shape == (28, 8)
    code, _, err = command(capsys, "inspect", tmp_path / "run", "--text", "abc")
    assert code == 2 and "was trained on mnist data; --text is for text runs" in err


# ------------------------------------------------------------- sequences and series --
def sequence_run(tmp_path, data: str, *init_args, steps: int = 12):
    """``init`` a project for ``data`` (smaller than init makes it) and train it a few CPU
    steps; returns the run folder and the loop's records."""
    from designer.cli import main
    from designer.graph import project as P
    project = tmp_path / "p.json"
    assert main(["init", "--data", data, *init_args, "--out", str(project)]) == 0
    p = P.load(project)
    p.graph.set_param("lstm1", "num_output", 8)
    recs = list(train(p, RunOptions(out=tmp_path / "run", steps=steps)))
    return tmp_path / "run", recs


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    from tests.training.trained.test_sequence_commands import vowels_like
    tmp = tmp_path_factory.mktemp("classes")
    return sequence_run(tmp, vowels_like(tmp), "--net", "lstm-fcn")  # a recurrent one


@pytest.fixture(scope="module")
def forecaster(tmp_path_factory):
    from tests.training.trained.test_sequence_commands import weekly
    tmp = tmp_path_factory.mktemp("series")
    return sequence_run(tmp, weekly(tmp, 160), "--horizon", "3")


def test_a_classifier_prints_the_class_it_leans_to_after_every_step(classifier, capsys):
    run, recs = classifier
    assert recs[0]["probe"]["kind"] == "classes"  # the loop measures its gates at evals
    vals = [r for r in recs if r["kind"] == "val"]
    assert vals and all(set(v["gate_saturation"]) == {"lstm1"} for v in vals)
    assert not any(r["kind"] == "probe" for r in recs)  # no text to score
    code, out, err = command(capsys, "inspect", run, "--json")
    assert code == 0, err
    data = json.loads(out)
    inp = data["input"]
    assert inp["kind"] == "classes" and inp["origin"].startswith("test sequence 0 of 15 in "
                                                                 "Toy_TEST.ts, class ")
    assert data["classes"] == ["up", "flat", "down"] and inp["target"] in data["classes"]
    leaning = np.array(data["leaning"])
    assert leaning.shape == (inp["steps"], 3)
    np.testing.assert_allclose(leaning.sum(1), 1.0, atol=1e-5)
    assert data["prediction"][0] == [data["classes"][int(leaning[-1].argmax())],
                                     pytest.approx(leaning[-1].max(), abs=1e-6)]
    assert len(data["grad_norm_per_step"]) == inp["steps"] and data["surprise"] is None
    code, out, err = command(capsys, "inspect", run, "--text", "class down")
    assert code == 0, err
    lines = out.splitlines()
    assert "test sequence" in lines[0] and lines[0].endswith("class down")
    assert "the sequence is of class down; the net says" in lines[2]
    head = next(i for i, line in enumerate(lines) if line.startswith("step "))
    assert "leans to" in lines[head] and "surprise" not in lines[head]
    assert lines[head + 1].split()[2] in ("up", "flat", "down")


def test_a_forecaster_prints_its_window_with_the_forecast_and_the_truth(forecaster, capsys):
    run, recs = forecaster
    assert recs[0]["probe"]["kind"] == "series"
    assert all("gate_saturation" in r for r in recs if r["kind"] == "val")
    code, out, err = command(capsys, "inspect", run, "--json")
    assert code == 0, err
    data = json.loads(out)
    window = data["window"]
    assert data["input"]["kind"] == "series" and window["targets"] == ["sales"]
    steps = data["input"]["steps"]
    assert len(window["history"]) == len(window["times"]) == steps
    assert len(window["forecast"]) == len(window["truth"]) == len(window["ahead"]) == 3
    assert window["times"][-1] < window["ahead"][0]  # the forecast comes after the window
    assert "leaning" not in data and len(data["grad_norm_per_step"]) == steps
    code, out, err = command(capsys, "inspect", run, "--text", window["ahead"][0])
    assert code == 0, err
    assert f"(the forecast from {window['ahead'][0]})" in out.splitlines()[0]
    tail = out.splitlines()[-4:]
    assert tail[0].split()[:3] == ["ahead", "sales", "forecast"]
    assert [line.split()[0] for line in tail[1:]] == window["ahead"]


def test_a_pick_that_names_no_sequence_is_one_sentence(classifier, forecaster, capsys):
    code, _, err = command(capsys, "inspect", classifier[0], "--text", "99")
    assert code == 2 and err.strip() == ("rnn-designer: there is no test sequence 99: the "
                                         "test split holds 15, numbered 0 to 14")
    code, _, err = command(capsys, "inspect", forecaster[0], "--text", "1850-01")
    assert code == 2 and "is neither a test window's number nor the time" in err
