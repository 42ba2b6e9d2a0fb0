"""An RG-LRU net in the life of a run: training headless on the CPU, resuming exactly,
switching engines on resume (the same tensors: the optimizer goes on), writing text one step at
a time, being inspected step by step with the parity of its two engines."""
import numpy as np

from designer.graph.retype import replace_layer
from tests.training.run.test_loop import run_all, tiny_project, train_losses


def rglru_project(tmp_path, engine="SCAN"):
    """The loop tests' tiny Char-RNN with its two-level LSTM made a two-level RG-LRU."""
    p = tiny_project(tmp_path, dropout=0.0)
    replace_layer(p.graph, "lstm1", "RGLRU", {"num_output": 16, "num_layers": 2,
                                              "engine": engine})
    assert p.graph.layer("lstm1").type == "RGLRU" and p.graph.errors() == []
    p.save(tmp_path / "tiny.json")
    return p


def test_it_learns_and_resumes_exactly(tmp_path):
    p = rglru_project(tmp_path)
    straight = run_all(p, out=tmp_path / "a", steps=16)
    losses = [loss for _, loss in train_losses(straight)]
    assert straight[0]["engines"] == {"lstm1": "SCAN"} and losses[-1] < 0.95 * losses[0], losses
    first = run_all(p, out=tmp_path / "b", steps=8)
    second = run_all(p, out=tmp_path / "b", resume=True, steps=16)
    assert train_losses(first) + train_losses(second) == train_losses(straight)
    assert any(r["kind"] == "sample" and r["text"] for r in straight)


def test_switching_engines_on_resume_keeps_the_optimizer(tmp_path):
    p = rglru_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=6)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=10, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"
    assert not any("optimizer starts afresh" in n for n in recs[0].get("notes", []))


def test_generation_and_inspection_read_a_trained_net(tmp_path):
    from designer.training.readout.inspect import inspect
    from designer.training.readout.probe import text_probe
    from designer.training.trained.generate import generate_text, load_trained
    p = rglru_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=8)
    model = load_trained(tmp_path / "run", "last", device="cpu")
    text = generate_text(model, "First", 30, temperature=0.0)
    assert len(text) >= 30 and text == generate_text(model, "First", 30, temperature=0.0)
    seen = inspect(model.net, text_probe("Before we proceed", model.vocab), parity=True)
    assert [lv.name for lv in seen.layers] == ["lstm1/L0", "lstm1/L1"]
    level = seen.layers[0]
    assert level.engine == "SCAN" and list(level.quantities()) == ["r", "i", "h"]
    for gate in ("r", "i"):  # sigmoids of the input transform's first two blocks
        assert ((level.gates[gate] > 0) & (level.gates[gate] < 1)).all()
    report = seen.parity["lstm1"]
    assert report["pair"] == ["linear scan", "unrolled"]
    assert max(report["output"]) <= 1e-5 * max(report["output_scale"], 1.0)
    assert np.isfinite(level.gates["r"]).all()
