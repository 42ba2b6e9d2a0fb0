"""``rnn-designer validate``: the report, its exit codes, and one clear line for bad files."""
import json
import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import PROJECTS, need_data, widened_char_rnn


def validate(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "designer", "validate", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


@need_data("tinyshakespeare.txt")
def test_char_rnn_report_matches_mycaffe():
    out = validate(PROJECTS / "char-rnn-shakespeare.json", "--json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    rows = {r["name"]: r for r in rep["layers"]}
    assert rows["lstm1"]["outputs"] == [[75, 25, 512]]
    assert set(rows["lstm1"]) >= {"name", "type", "inputs", "outputs", "params", "flops"}
    assert abs(rep["total_params"] - 3_214_879) / 3_214_879 < 0.01
    assert rep["problems"] == []


@need_data("tinyshakespeare.txt")
def test_plain_text_table():
    out = validate(PROJECTS / "char-rnn-shakespeare-unrolled.json")
    assert out.returncode == 0
    assert "lstm2  LSTM" in out.stdout and "(75, 25, 512)" in out.stdout
    assert "total: 3,214,879 parameters" in out.stdout


def test_malformed_file_exits_2_with_one_line(tmp_path):
    f = tmp_path / "broken.json"
    f.write_text('{"schema_version": 1, "graph": ')
    out = validate(f)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert str(f) in out.stderr and "not valid JSON" in out.stderr


def test_cycle_exits_2(tmp_path):
    f = tmp_path / "cycle.json"
    f.write_text(json.dumps({"schema_version": 1, "graph": {
        "layers": [{"name": "a", "type": "ReLU"}, {"name": "b", "type": "TanH"}],
        "links": [{"from": "a.y", "to": "b.x"}, {"from": "b.y", "to": "a.x"}]}}))
    out = validate(f)
    assert out.returncode == 2 and "cycle" in out.stderr and "Traceback" not in out.stderr


def test_shape_mismatch_exits_1_naming_the_layers(tmp_path):
    d = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    # feed the labels (ids) straight into the LSTM instead of the embedding's vectors
    for link in d["graph"]["links"]:
        if link["to"] == "lstm1.x":
            link["from"] = "data.label"
    f = tmp_path / "mismatch.json"
    f.write_text(json.dumps(d))
    out = validate(f, "--json")
    assert out.returncode == 1
    (p,) = [p for p in json.loads(out.stdout)["problems"] if p["severity"] == "error"]
    assert p["layer"] == "lstm1" and "data gives (75, 25) ids" in p["message"]
    text = validate(f)
    assert text.returncode == 1 and "error: lstm1 expects" in text.stdout


@pytest.mark.parametrize("name", ["missing.json"])
def test_missing_file_exits_2(tmp_path, name):
    out = validate(tmp_path / name)
    assert out.returncode == 2 and "does not exist" in out.stderr


@need_data("tinyshakespeare.txt")
def test_validate_tells_the_training_memory_per_engine_and_warns_when_it_cannot_fit(tmp_path):
    out = validate(PROJECTS / "char-rnn-shakespeare.json", "--device", "cpu")
    assert out.returncode == 0
    assert "memory to train on the CPU (AdamW, fp32): about " in out.stdout
    assert "all cuDNN" in out.stdout and "all unrolled" in out.stdout
    rep = json.loads(validate(PROJECTS / "char-rnn-shakespeare.json", "--json", "--device",
                              "cpu").stdout)
    mem = rep["memory"]
    assert mem["device"] == "cpu" and mem["fits"] and mem["capacity"] > 0
    assert mem["estimate"]["weights"] == 4 * rep["total_params"]
    assert set(mem["engines"]) == {"cudnn", "caffe"}
    big = widened_char_rnn(tmp_path, 1_048_576)
    rep = json.loads(validate(big, "--json", "--device", "cpu").stdout)
    assert not rep["memory"]["fits"]
    warning = [p for p in rep["problems"] if p["kind"] == "memory"]
    assert warning[0]["severity"] == "warning" and "but the CPU" in warning[0]["message"]


def special_file(tmp_path, kind: str):
    """A path that exists but is no regular file: a named pipe (no writer ever comes), a
    listening socket, or a folder."""
    path = tmp_path / "series.csv"
    if kind == "named pipe":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(1)
    else:
        path.mkdir()
    return path


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind, layer, param", [
    ("named pipe", "TimeSeries", "file"), ("socket", "CharText", "corpus"),
    ("folder", "TimeSeries", "file")])
def test_a_data_file_that_is_no_regular_file_is_refused_not_waited_on(tmp_path, kind, layer,
                                                                      param):
    path = special_file(tmp_path, kind)
    d = json.loads((PROJECTS / "co2-forecast.json").read_text())
    if layer == "CharText":
        d = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    data = next(x for x in d["graph"]["layers"] if x["type"] == layer)
    data["params"][param] = str(path)
    project = tmp_path / "p.json"
    project.write_text(json.dumps(d))
    out = subprocess.run([sys.executable, "-m", "designer", "validate", str(project)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    errors = [line for line in out.stdout.splitlines() if line.startswith("error:")]
    what = "a folder, not a file" if kind == "folder" else f"a {kind}, not a regular file"
    assert errors == [f"error: data: {path} is {what}"]
