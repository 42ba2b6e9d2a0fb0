"""The parity, unroll and bench commands."""
import json
import subprocess
import sys

from designer.graph import project as P
from designer.graph.retype import replace_layer
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


def _padded_project(tmp_path):
    from designer.graph import Graph
    from designer.graph.project import Project
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 5,
                                      "batch_first": True})
    g.add_layer("LSTM", "bilstm", {"num_output": 6, "num_layers": 2, "bidirectional": True,
                                   "batch_first": True})
    g.connect("data", "data", "bilstm", "x")
    g.connect("data", "label", "bilstm", "lengths")
    path = tmp_path / "padded.json"
    Project(g, "padded", "", {}, {}).save(path)
    return path


def test_parity_covers_bidirectional_layers_and_padding(tmp_path):
    out = run("parity", _padded_project(tmp_path), "--steps", "8", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    (row,) = json.loads(out.stdout)["layers"]
    assert row["ok"] and row["bidirectional"] and sorted(row["lengths"])[-1] == 8
    names = {d["name"]: d for d in row["diffs"]}
    assert "grad W_hc_l1_reverse" in names
    for engine in ("cuDNN", "unrolled"):
        assert names[f"{engine} output at padding"]["abs"] == 0.0
        assert names[f"{engine} grad input at padding"]["abs"] == 0.0
    text = run("parity", _padded_project(tmp_path), "--steps", "8")
    assert "bilstm (LSTM, 2 layer(s), bidirectional" in text.stdout
    assert "padded to lengths" in text.stdout


def test_unroll_shows_the_backward_chain(tmp_path):
    out = run("unroll", _padded_project(tmp_path), "--layer", "bilstm", "--steps", "3")
    assert out.returncode == 0, out.stderr
    assert "bidirectional" in out.stdout and "unit_3_reverse" in out.stdout
    assert "HOLD x12" in out.stdout and "SEQUENCE_MASK x1" in out.stdout


def test_parity_in_float64_holds_the_engines_to_1e_10_and_names_them(tmp_path):
    proj = P.load(PROJECTS / "char-rnn-shakespeare.json")
    replace_layer(proj.graph, "lstm1", "mLSTM")
    proj.graph.set_param("lstm1", "num_output", 32)
    path = tmp_path / "mlstm.json"
    proj.save(path)
    out = run("parity", path, "--steps", "6", "--dtype", "float64", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["dtype"] == "float64" and report["tolerance"] == 1e-10
    (row,) = report["layers"]
    assert row["ok"] and row["max_rel"] <= 1e-10
    assert row["compared"] == ["CHUNK: the chunkwise form, chunks of 2 steps",
                               "CAFFE: the reference executor, node by node"]
    text = run("parity", path, "--steps", "6", "--dtype", "float64").stdout
    assert "float64 on the CPU" in text and "tolerance 1e-10" in text
    assert "compared: CHUNK: the chunkwise form" in text and "floor" in text
