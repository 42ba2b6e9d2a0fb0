"""An mLSTM net in the life of a run: training headless on the CPU, resuming exactly,
switching engines on resume (the same tensors: the optimizer goes on), writing text one step
at a time with (C, n, m) carried, being inspected step by step (its gates and the matrix
memory's norm); a checkpoint of another cell type is refused in words."""
import pytest

from designer.graph.retype import replace_layer
from designer.training.run.loop import TrainingError
from tests.training.run.test_loop import run_all, tiny_project, train_losses


def mlstm_project(tmp_path, engine="CHUNK"):
    """The loop tests' tiny Char-RNN with its two-level LSTM made a two-level mLSTM."""
    p = tiny_project(tmp_path, dropout=0.0)
    replace_layer(p.graph, "lstm1", "mLSTM", {"num_output": 16, "num_heads": 2,
                                              "num_layers": 2, "engine": engine})
    assert p.graph.layer("lstm1").type == "mLSTM" and p.graph.errors() == []
    p.save(tmp_path / "tiny.json")
    return p


def test_an_mlstm_net_learns_and_resumes_exactly(tmp_path):
    p = mlstm_project(tmp_path)
    straight = run_all(p, out=tmp_path / "a", steps=24)
    losses = [loss for _, loss in train_losses(straight)]
    assert straight[0]["engines"] == {"lstm1": "CHUNK"} and losses[-1] < 0.9 * losses[0], losses
    first = run_all(p, out=tmp_path / "b", steps=12)
    second = run_all(p, out=tmp_path / "b", resume=True, steps=24)
    assert train_losses(first) + train_losses(second) == train_losses(straight)
    assert any(r["kind"] == "sample" and r["text"] for r in straight)


def test_switching_engines_on_resume_keeps_the_optimizer(tmp_path):
    p = mlstm_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=6)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=10, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"
    assert not any("optimizer starts afresh" in n for n in recs[0].get("notes", []))


def test_generation_and_inspection_read_a_trained_mlstm(tmp_path):
    from designer.training.readout.inspect import inspect
    from designer.training.readout.probe import text_probe
    from designer.training.trained.generate import generate_text, load_trained
    p = mlstm_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=8)
    model = load_trained(tmp_path / "run", "last", device="cpu")
    text = generate_text(model, "First", 30, temperature=0.0)
    assert len(text) >= 30 and text == generate_text(model, "First", 30, temperature=0.0)
    seen = inspect(model.net, text_probe("Before we proceed", model.vocab), parity=True)
    assert [lv.name for lv in seen.layers] == ["lstm1/L0", "lstm1/L1"]
    level = seen.layers[0]
    assert level.engine == "CHUNK" and set(level.gates) == {"i", "f", "o"}
    steps = len("Before we proceed")
    assert level.gates["i"].shape == (steps, 2) and level.gates["o"].shape == (steps, 16)
    assert level.c.shape == (steps, 2) and (level.c > 0).all()  # the memory's norm per head
    for gate in ("i", "f"):  # stabilised: at most 1, and one of them is 1 where m moved
        assert (level.gates[gate] <= 1 + 1e-6).all() and (level.gates[gate] >= 0).all()
    report = seen.parity["lstm1"]
    assert report["pair"] == ["chunkwise", "unrolled"]
    assert max(report["output"]) <= 1e-5 * max(report["output_scale"], 1.0)
    assert set(report["final"]) == {"C_T", "n_T", "m_T"}


def test_a_checkpoint_of_another_cell_type_is_refused_in_one_sentence(tmp_path):
    p = tiny_project(tmp_path, dropout=0.0)
    run_all(p, out=tmp_path / "run", steps=2)
    replace_layer(p.graph, "lstm1", "mLSTM", {"num_output": 16, "num_heads": 2,
                                              "num_layers": 2})
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    text = str(e.value)
    assert text.endswith("was trained with a different graph: lstm1 is an LSTM there and an "
                         "mLSTM in the project") and "\n" not in text
