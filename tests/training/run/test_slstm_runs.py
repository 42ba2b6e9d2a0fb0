"""sLSTM nets in the life of a run: training headless on the CPU, resuming exactly, switching
engines on resume (the same tensors: the optimizer goes on), writing text one step at a time
with (h, c, n, m) carried, being inspected step by step (gates and the normaliser); a
checkpoint of another cell type is refused in words."""
import numpy as np
import pytest

from designer.graph.retype import replace_layer
from designer.training.run.loop import TrainingError
from tests.training.run.test_loop import run_all, tiny_project, train_losses


def slstm_project(tmp_path, engine="FUSED"):
    """The loop tests' tiny Char-RNN with its two-level LSTM made a two-level sLSTM."""
    p = tiny_project(tmp_path, dropout=0.0)
    replace_layer(p.graph, "lstm1", "sLSTM", {"num_output": 16, "num_heads": 4,
                                              "num_layers": 2, "engine": engine})
    assert p.graph.layer("lstm1").type == "sLSTM" and p.graph.errors() == []
    p.save(tmp_path / "tiny.json")
    return p


def test_an_slstm_net_learns_and_resumes_exactly(tmp_path):
    p = slstm_project(tmp_path)
    straight = run_all(p, out=tmp_path / "a", steps=20)
    losses = [loss for _, loss in train_losses(straight)]
    assert straight[0]["engines"] == {"lstm1": "FUSED"} and losses[-1] < 0.9 * losses[0], losses
    first = run_all(p, out=tmp_path / "b", steps=10)
    second = run_all(p, out=tmp_path / "b", resume=True, steps=20)
    assert train_losses(first) + train_losses(second) == train_losses(straight)
    assert any(r["kind"] == "sample" and r["text"] for r in straight)


def test_switching_engines_on_resume_keeps_the_optimizer(tmp_path):
    p = slstm_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=4)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=6, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"
    assert not any("optimizer starts afresh" in n for n in recs[0].get("notes", []))


def test_generation_and_inspection_read_a_trained_slstm_net(tmp_path):
    from designer.training.readout.inspect import inspect
    from designer.training.readout.probe import text_probe
    from designer.training.trained.generate import generate_text, load_trained
    p = slstm_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    model = load_trained(tmp_path / "run", "last", device="cpu")
    text = generate_text(model, "First", 20, temperature=0.0)
    assert len(text) >= 20 and text == generate_text(model, "First", 20, temperature=0.0)
    seen = inspect(model.net, text_probe("Before we proceed", model.vocab), parity=True)
    assert [lv.name for lv in seen.layers] == ["lstm1/L0", "lstm1/L1"]
    level = seen.layers[0]
    assert level.engine == "FUSED"
    assert list(level.quantities()) == ["i", "f", "g", "o", "c", "normaliser", "h"]
    for gate in ("i", "f", "o"):
        assert (level.gates[gate] >= 0).all() and (level.gates[gate] <= 1 + 1e-6).all()
    # the stabiliser makes one of i' and f' exactly 1 at every step after the first
    np.testing.assert_allclose(np.maximum(level.gates["i"], level.gates["f"])[1:], 1.0,
                               atol=1e-6)
    assert (level.n >= 1 - 1e-6).all()
    report = seen.parity["lstm1"]
    assert report["pair"] == ["fused sLSTM", "unrolled"]
    assert max(report["output"]) <= 1e-5 * max(report["output_scale"], 1.0)


def test_a_checkpoint_of_another_cell_type_is_refused_in_one_sentence(tmp_path):
    p = tiny_project(tmp_path, dropout=0.0)
    run_all(p, out=tmp_path / "run", steps=2)
    replace_layer(p.graph, "lstm1", "sLSTM", {"num_output": 16, "num_heads": 4,
                                              "num_layers": 2})
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    text = str(e.value)
    assert text.endswith("was trained with a different graph: lstm1 is an LSTM there and an "
                         "sLSTM in the project") and "\n" not in text
