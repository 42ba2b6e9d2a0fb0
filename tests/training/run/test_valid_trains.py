"""What the designer calls valid trains: every example and every net of the newcomer-mistakes
gallery, broken and mended, through the smoke step, the trainer and the command."""
import json
import subprocess
import sys

import pytest

from designer.cli import main
from designer.graph import hints
from designer.graph import project as P
from designer.training.run.loop import RunOptions, TrainingError, train
from designer.training.run.smoke import smoke_step
from tests.conftest import DATA, PROJECTS, need_data
from tests.newcomer import MISTAKES, as_project, write_corpus

EXAMPLES = sorted(PROJECTS.glob("*.json"))


def cli(*args):
    return subprocess.run([sys.executable, "-m", "designer", *map(str, args)],
                          capture_output=True, text=True)


def one_step(project, tmp_path) -> list[dict]:
    project.training = {**project.training, "eval_batches": 1, "sample_interval": 0,
                        "device": "cpu"}
    return list(train(project, RunOptions(out=tmp_path / "run", steps=1, device="cpu")))


def gallery(mistake, tmp_path):
    if mistake.needs_mnist and not (DATA / "mnist").exists():
        pytest.skip("the MNIST files are not in the data folder")
    return mistake.build(write_corpus(tmp_path), DATA / "mnist")


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_is_refused_in_one_sentence_or_trains_and_mended_it_trains(mistake,
                                                                              tmp_path):
    graph = gallery(mistake, tmp_path)
    project = as_project(graph, mistake.name)
    problem = [p for p in graph.problems() if p.layer == mistake.layer][0]
    if mistake.severity == "error":
        assert smoke_step(project).status == "skipped"
        with pytest.raises(TrainingError) as e:
            one_step(project, tmp_path / "broken")
        assert e.value.code == 2 and str(e.value) == f"the net is not valid: {problem}"
    else:  # a warning: the net is odd but it trains
        assert one_step(project, tmp_path / "odd")[-1]["kind"] == "done"
    hints.apply(graph, problem.fix)
    result = smoke_step(project)
    assert result.status == "ok", result.message
    records = one_step(project, tmp_path / "mended")
    assert records[-1]["kind"] == "done" and records[-1]["step"] == 1


@need_data("tinyshakespeare.txt", "speech_8k.wav", "mnist")
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_passes_the_smoke_step_and_trains_one_step(path, tmp_path):
    project = P.load(path)
    result = smoke_step(project)
    assert result.status == "ok", result.message
    records = one_step(project, tmp_path)
    assert records[-1]["kind"] == "done"


@need_data("tinyshakespeare.txt")
def test_too_few_outputs_is_caught_by_validate_and_refused_by_train(tmp_path):
    data = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    ip = next(layer for layer in data["graph"]["layers"] if layer["name"] == "ip1")
    ip["params"]["num_output"] = 10
    f = tmp_path / "ip10.json"
    f.write_text(json.dumps(data))
    checked = cli("validate", f)
    assert checked.returncode == 1
    assert "error: ip1 has 10 outputs, but the labels take 65 values: set ip1's num_output " \
           "to V (65)" in checked.stdout
    trained = cli("train", f, "--steps", "1", "--device", "cpu", "--out", tmp_path / "run",
                  "--quiet")
    assert trained.returncode == 2 and "Traceback" not in trained.stderr
    assert trained.stderr.strip() == ("rnn-designer: the net is not valid: ip1 has 10 outputs, "
                                      "but the labels take 65 values: set ip1's num_output to "
                                      "V (65)")
    assert not (tmp_path / "run").exists()
    ip["params"].update(num_output="V", axis=1)
    f.write_text(json.dumps(data))
    checked = cli("validate", f, "--json")
    (problem,) = json.loads(checked.stdout)["problems"]
    assert "axis" in problem["message"] and problem["layer"] == "ip1"
    assert problem["fix"] == {"kind": "set", "layer": "ip1", "text": "set ip1's axis to 2",
                              "param": "axis", "value": 2}


@need_data("tinyshakespeare.txt")
def test_validate_deep_runs_a_real_batch(tmp_path):
    done = cli("validate", PROJECTS / "char-rnn-shakespeare.json", "--deep")
    assert done.returncode == 0, done.stderr
    assert "smoke step: the net ran forward and backward on a real batch of 2 x 3" in done.stdout


@pytest.mark.timeout(60)
def test_validate_deep_refuses_a_device_for_data_and_exits_non_zero(tmp_path, capsys):
    d = json.loads((PROJECTS / "co2-forecast.json").read_text())
    d["graph"]["layers"][0]["params"]["file"] = "/dev/zero"  # endless NUL bytes
    f = tmp_path / "zero.json"
    f.write_text(json.dumps(d))
    code = main(["validate", str(f), "--deep"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert "error: data: /dev/zero is a character device, not a regular file" in out
    assert out[-1] == "1 error" and not any(line.startswith("smoke step") for line in out)


def test_an_unforeseen_error_is_one_sentence_with_the_trace_on_disk(tmp_path):
    from designer.training.commands import unforeseen
    try:
        raise ValueError("cuDNN said no\nand more")
    except ValueError as e:
        text = unforeseen(e, str(tmp_path))
    assert text == ("training stopped on an unexpected ValueError: cuDNN said no; the details "
                    f"are in {tmp_path / 'error.log'}")
    assert "Traceback" in (tmp_path / "error.log").read_text()
