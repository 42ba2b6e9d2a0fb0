"""The parity, unroll and bench commands."""
import json
import subprocess
import sys

from tests.conftest import PROJECTS, need_data

UNROLLED = PROJECTS / "char-rnn-shakespeare-unrolled.json"


def run(*args):
    return subprocess.run([sys.executable, "-m", "designer", *map(str, args)],
                          capture_output=True, text=True)


@need_data("tinyshakespeare.txt")
def test_parity_of_the_unrolled_char_rnn_exits_0():
    out = run("parity", UNROLLED)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "lstm1 (LSTM" in out.stdout and "lstm2 (LSTM" in out.stdout and "ok" in out.stdout


@need_data("tinyshakespeare.txt")
def test_unroll_json_lists_the_per_step_layers():
    out = run("unroll", UNROLLED, "--layer", "lstm1", "--steps", "75", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["node_count"] >= 4 * 75 and d["edge_count"] > d["node_count"]
    for step in range(1, 76):
        types = {n["type"] for n in d["nodes"] if n["step"] == step}
        assert types == {"SCALE", "INNER_PRODUCT", "ELTWISE", "LSTM_UNIT"}
    unit = next(n for n in d["nodes"] if n["name"] == "unit_75")
    assert unit["top_shapes"] == [[1, 25, 512], [1, 25, 512]]


@need_data("tinyshakespeare.txt")
def test_unroll_text_and_bad_layer():
    out = run("unroll", UNROLLED, "--layer", "lstm2", "--steps", "5")
    assert out.returncode == 0 and "LSTM_UNIT" in out.stdout and "24 nodes" in out.stdout
    bad = run("unroll", UNROLLED, "--layer", "nope")
    assert bad.returncode == 2 and "recurrent layers: lstm1, lstm2" in bad.stderr
    assert "Traceback" not in bad.stderr


@need_data("tinyshakespeare.txt")
def test_bench_reports_both_engines_on_the_cpu():
    out = run("bench", UNROLLED, "--device", "cpu", "--steps", "1", "--warmup", "1",
              "--seq", "10", "--batch", "4", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert [r["engine"] for r in rows] == ["cudnn", "caffe"]
    for r in rows:
        assert r["ms_step"] > 0 and r["tokens_s"] > 0 and r["build_ms"] > 0
    assert rows[0]["params"] == 3_218_975 and rows[1]["params"] == 3_214_879


def test_bench_on_a_missing_gpu_says_so():
    import torch
    if torch.cuda.is_available():
        return
    out = run("bench", UNROLLED, "--device", "cuda", "--steps", "1")
    assert out.returncode == 2 and "no CUDA GPU" in out.stderr
