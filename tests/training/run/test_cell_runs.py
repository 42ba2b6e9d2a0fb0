"""The cells with an engine of their own (MinGRU, MinLSTM, mLSTM, sLSTM) in the life of a run:
training headless on the CPU, resuming exactly, switching engines on resume (the same tensors:
the optimizer goes on), writing text one step at a time with their state carried, being
inspected step by step (each cell's gates and what its memory holds); a checkpoint of another
cell type is refused in words."""
import numpy as np
import pytest

from designer.graph.retype import replace_layer
from designer.training.run.loop import TrainingError
from tests.training.run.test_loop import run_all, tiny_project, train_losses

ENGINE = {"MinGRU": "SCAN", "MinLSTM": "SCAN", "mLSTM": "CHUNK", "sLSTM": "FUSED"}
HEADS = {"mLSTM": {"num_heads": 2}, "sLSTM": {"num_heads": 4}}
STEPS = {"sLSTM": 20}  # steps to learn in; the others 24
ARTICLE = {"mLSTM": "an", "sLSTM": "an"}  # "a MinGRU"


def cell_project(tmp_path, kind):
    """The loop tests' tiny Char-RNN with its two-level LSTM made a two-level ``kind``."""
    p = tiny_project(tmp_path, dropout=0.0)
    replace_layer(p.graph, "lstm1", kind, {"num_output": 16, **HEADS.get(kind, {}),
                                           "num_layers": 2, "engine": ENGINE[kind]})
    assert p.graph.layer("lstm1").type == kind and p.graph.errors() == []
    p.save(tmp_path / "tiny.json")
    return p


@pytest.mark.parametrize("kind", list(ENGINE))
def test_a_net_of_the_cell_learns_and_resumes_exactly(tmp_path, kind):
    p, steps = cell_project(tmp_path, kind), STEPS.get(kind, 24)
    straight = run_all(p, out=tmp_path / "a", steps=steps)
    losses = [loss for _, loss in train_losses(straight)]
    assert straight[0]["engines"] == {"lstm1": ENGINE[kind]}
    assert losses[-1] < 0.9 * losses[0], losses
    first = run_all(p, out=tmp_path / "b", steps=steps // 2)
    second = run_all(p, out=tmp_path / "b", resume=True, steps=steps)
    assert train_losses(first) + train_losses(second) == train_losses(straight)
    assert any(r["kind"] == "sample" and r["text"] for r in straight)


@pytest.mark.parametrize("kind, steps, more", [("MinGRU", 6, 10), ("mLSTM", 6, 10),
                                               ("sLSTM", 4, 6)])
def test_switching_engines_on_resume_keeps_the_optimizer(tmp_path, kind, steps, more):
    p = cell_project(tmp_path, kind)
    run_all(p, out=tmp_path / "run", steps=steps)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=more, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"
    assert not any("optimizer starts afresh" in n for n in recs[0].get("notes", []))


def read_back(tmp_path, kind, steps, chars):
    """Train ``kind`` for ``steps``, check it writes the same ``chars`` characters twice at
    temperature 0, and inspect it with parity: its first level's reading and the parity
    report."""
    from designer.training.readout.inspect import inspect
    from designer.training.readout.probe import text_probe
    from designer.training.trained.generate import generate_text, load_trained
    p = cell_project(tmp_path, kind)
    run_all(p, out=tmp_path / "run", steps=steps)
    model = load_trained(tmp_path / "run", "last", device="cpu")
    text = generate_text(model, "First", chars, temperature=0.0)
    assert len(text) >= chars and text == generate_text(model, "First", chars, temperature=0.0)
    seen = inspect(model.net, text_probe("Before we proceed", model.vocab), parity=True)
    assert [lv.name for lv in seen.layers] == ["lstm1/L0", "lstm1/L1"]
    report = seen.parity["lstm1"]
    assert max(report["output"]) <= 1e-5 * max(report["output_scale"], 1.0)
    return seen.layers[0], report


def test_generation_and_inspection_read_a_trained_min_net(tmp_path):
    level, report = read_back(tmp_path, "MinLSTM", 8, 30)
    assert level.engine == "SCAN" and list(level.quantities()) == ["f", "i", "h"]
    np.testing.assert_allclose(level.gates["f"] + level.gates["i"], 1.0, atol=1e-6)
    assert report["pair"] == ["parallel scan", "unrolled"]


def test_generation_and_inspection_read_a_trained_mlstm(tmp_path):
    level, report = read_back(tmp_path, "mLSTM", 8, 30)
    assert level.engine == "CHUNK" and set(level.gates) == {"i", "f", "o"}
    steps = len("Before we proceed")
    assert level.gates["i"].shape == (steps, 2) and level.gates["o"].shape == (steps, 16)
    assert level.c.shape == (steps, 2) and (level.c > 0).all()  # the memory's norm per head
    for gate in ("i", "f"):  # stabilised: at most 1, and one of them is 1 where m moved
        assert (level.gates[gate] <= 1 + 1e-6).all() and (level.gates[gate] >= 0).all()
    assert report["pair"] == ["chunkwise", "unrolled"]
    assert set(report["final"]) == {"C_T", "n_T", "m_T"}


def test_generation_and_inspection_read_a_trained_slstm_net(tmp_path):
    level, report = read_back(tmp_path, "sLSTM", 2, 20)
    assert level.engine == "FUSED"
    assert list(level.quantities()) == ["i", "f", "g", "o", "c", "normaliser", "h"]
    for gate in ("i", "f", "o"):
        assert (level.gates[gate] >= 0).all() and (level.gates[gate] <= 1 + 1e-6).all()
    # the stabiliser makes one of i' and f' exactly 1 at every step after the first
    np.testing.assert_allclose(np.maximum(level.gates["i"], level.gates["f"])[1:], 1.0,
                               atol=1e-6)
    assert (level.n >= 1 - 1e-6).all()
    assert report["pair"] == ["fused sLSTM", "unrolled"]


@pytest.mark.parametrize("kind", ["MinGRU", "mLSTM", "sLSTM"])
def test_a_checkpoint_of_another_cell_type_is_refused_in_one_sentence(tmp_path, kind):
    p = tiny_project(tmp_path, dropout=0.0)
    run_all(p, out=tmp_path / "run", steps=2)
    replace_layer(p.graph, "lstm1", kind, {"num_output": 16, **HEADS.get(kind, {}),
                                           "num_layers": 2})
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    text = str(e.value)
    assert text.endswith("was trained with a different graph: lstm1 is an LSTM there and "
                         f"{ARTICLE.get(kind, 'a')} {kind} in the project") and "\n" not in text
