"""The Hawk example project: an RG-LRU between a causal Conv1D and a GELU output gate, drawn
from plain layers; it checks, ``parity`` passes on it in both types, and the benchmark against
a cuDNN LSTM runs at small sizes on the CPU."""
import json
import subprocess
import sys
from pathlib import Path

from designer.cli import main
from designer.graph import project as P
from tests.conftest import PROJECTS, need_data

HAWK = PROJECTS / "hawk-shakespeare.json"


@need_data("tinyshakespeare.txt")
def test_the_hawk_block_is_drawn_from_plain_layers_around_the_cell():
    g = P.load(HAWK).graph
    assert g.errors() == []
    types = {layer.name: layer.type for layer in g.layers()}
    assert types["conv"] == "Conv1D" and g.layer("conv").get("padding") == "causal"
    assert types["rglru"] == "RGLRU" and types["gelu"] == "GELU"
    assert types["gated"] == "Eltwise" and g.layer("gated").get("operation") == "PROD"
    into = {(k.src, k.dst, k.dst_port) for k in g.links()}
    assert {("conv", "rglru", "x"), ("rglru", "gated", "a"), ("gelu", "gated", "b"),
            ("data", "rglru", "cont")} <= into


@need_data("tinyshakespeare.txt")
def test_parity_passes_on_it_in_both_types(capsys):
    for dtype in ("float32", "float64"):
        assert main(["parity", str(HAWK), "--json", "--dtype", dtype]) == 0
        (row,) = json.loads(capsys.readouterr().out)["layers"]
        assert row["layer"] == "rglru" and row["ok"] and row["max_abs"] > 0, row


def test_the_benchmark_runs_at_small_sizes_on_the_cpu():
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "rglru_vs_lstm.py"
    run = subprocess.run([sys.executable, str(script), "--device", "cpu", "--small", "--json",
                          "--iters", "1", "--chunks", "16"], capture_output=True, text=True,
                         timeout=300, cwd=script.parents[2])
    assert run.returncode == 0, run.stderr
    row = json.loads(run.stdout)
    assert (row["T"], row["rglru_params"], row["lstm_params"]) == (64, 3200, 3200)
    assert row["lstm_over_rglru_fwd_bwd_chunk16"] > 0
