"""The training loop: records, checkpoints, exact resume, stop, NaN, bad checkpoints."""
import json
import math

import pytest
import torch

from designer.graph import Graph
from designer.graph.project import Project
from designer.training.run import checkpoint as C
from designer.training.run.control import StopToken
from designer.training.run.loop import RunOptions, TrainingError, train
from tests.nets import link_all

TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        * 30)


def tiny_project(tmp_path, engine="CUDNN", batching="random", dropout=0.3,
                 training=None, solver=None, corpus_text=TEXT) -> Project:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text)
    g = Graph(project_dir=tmp_path)
    g.add_layer("CharText", "data", {"corpus": "corpus.txt", "seq_len": 12, "batch_size": 4,
                                     "batching": batching})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.add_layer("LSTM", "lstm1", {"num_output": 16, "num_layers": 2, "dropout_ratio": dropout,
                                  "engine": engine})
    g.add_layer("Dropout", "drop", {"dropout_ratio": dropout})
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "lstm1.x"), ("data.cont", "lstm1.cont"),
                 ("lstm1.y", "drop.x"), ("drop.y", "ip1.x"), ("ip1.y", "loss.logits"),
                 ("data.label", "loss.label")])
    p = Project(g, "tiny", "",
                {"type": "Adam", "base_lr": 0.01, "max_steps": 40, **(solver or {})},
                {"log_interval": 2, "eval_interval": 6, "eval_batches": 2,
                 "checkpoint_interval": 5, "sample_interval": 8, "sample_length": 20,
                 "device": "cpu", **(training or {})})
    p.save(tmp_path / "tiny.json")
    return p


def run_all(project, **kw) -> list[dict]:
    return list(train(project, RunOptions(**kw)))


def train_losses(records):
    return [(r["step"], r["loss"]) for r in records if r["kind"] == "train"]


def test_a_run_yields_plain_records_and_writes_its_folder(tmp_path):
    recs = run_all(tiny_project(tmp_path), out=tmp_path / "run", steps=12)
    kinds = [r["kind"] for r in recs]
    assert kinds[0] == "start" and kinds[-1] == "done" and recs[-1]["reason"] == "finished"
    assert {"train", "val", "checkpoint", "sample"} <= set(kinds)
    for r in recs:  # only plain data crosses threads
        json.dumps(r)
    train_recs = [r for r in recs if r["kind"] == "train"]
    assert [r["step"] for r in train_recs] == [2, 4, 6, 8, 10, 12]
    for key in ("loss", "lr", "tokens_per_s", "ms_per_step", "grad_norm"):
        assert all(math.isfinite(r[key]) for r in train_recs)
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == len([r for r in recs if r["kind"] in ("train", "val")])
    assert C.load(tmp_path / "run").step == 12
    assert (tmp_path / "run" / "project.json").exists()
    sample = next(r for r in recs if r["kind"] == "sample")
    assert len(sample["text"]) == 20


def test_loss_falls(tmp_path):
    recs = run_all(tiny_project(tmp_path, dropout=0.0), out=tmp_path / "run", steps=40)
    losses = [loss for _, loss in train_losses(recs)]
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize("engine,batching", [("CUDNN", "random"), ("CAFFE", "random"),
                                             ("CUDNN", "stream"), ("CAFFE", "stream")])
def test_resume_continues_exactly(tmp_path, engine, batching):
    """2N steps give the same losses as N steps, resume, N steps."""
    whole = tiny_project(tmp_path, engine, batching)
    straight = run_all(whole, out=tmp_path / "a", steps=20)
    first = run_all(whole, out=tmp_path / "b", steps=10)
    second = run_all(whole, out=tmp_path / "b", resume=True, steps=20)
    assert second[0]["resumed"] and second[0]["step"] == 10
    assert train_losses(first) + train_losses(second) == train_losses(straight)
    vals = [(r["step"], r["val_loss"]) for r in straight if r["kind"] == "val"]
    vals2 = [(r["step"], r["val_loss"]) for r in first + second if r["kind"] == "val"]
    assert [v for v in vals2 if v[0] != 10] == vals  # the first part also validates at its end
    samples = [r["text"] for r in straight if r["kind"] == "sample"]
    assert samples == [r["text"] for r in first + second if r["kind"] == "sample"]
    metrics = [json.loads(x) for x in (tmp_path / "b" / "metrics.jsonl").read_text().split("\n")
               if x]
    assert [m["step"] for m in metrics if m["kind"] == "train"] == list(range(2, 21, 2))


def test_a_resumed_run_may_switch_engine(tmp_path):
    p = tiny_project(tmp_path, "CUDNN", dropout=0.0)
    run_all(p, out=tmp_path / "run", steps=6)
    recs = run_all(p, out=tmp_path / "run", resume=True, steps=10, engine="caffe")
    assert recs[0]["engines"] == {"lstm1": "CAFFE"} and recs[-1]["reason"] == "finished"


def test_stopping_mid_run_writes_a_checkpoint(tmp_path):
    token = StopToken()
    recs = []
    for r in train(tiny_project(tmp_path), RunOptions(out=tmp_path / "run", steps=40), token):
        recs.append(r)
        if r["kind"] == "train" and r["step"] == 4:
            token.stop()
    assert recs[-1]["reason"] == "stopped" and recs[-1]["step"] == 4
    assert C.load(tmp_path / "run").step == 4


def test_pause_and_resume(tmp_path):
    token = StopToken()
    kinds = []
    for r in train(tiny_project(tmp_path), RunOptions(out=tmp_path / "run", steps=6), token):
        kinds.append(r["kind"])
        if r["kind"] == "train" and r["step"] == 2:
            token.pause()
        if r["kind"] == "paused":
            token.resume()
    assert kinds.count("paused") == 1 and kinds.count("resumed") == 1 and kinds[-1] == "done"


def test_non_finite_losses_stop_the_run_and_keep_the_last_good_checkpoint(tmp_path,
                                                                         monkeypatch):
    from designer.engines.net import layers
    calls = {"n": 0}
    real = layers.SoftmaxWithLoss.forward

    def poisoned(self, logits, label):  # from the 7th training step on, the loss is NaN
        loss = real(self, logits, label)
        if self.training:
            calls["n"] += 1
            if calls["n"] > 6:
                return loss * float("nan")
        return loss

    monkeypatch.setattr(layers.SoftmaxWithLoss, "forward", poisoned)
    p = tiny_project(tmp_path, training={"nan_patience": 3, "checkpoint_interval": 2,
                                         "eval_interval": 100})
    recs = run_all(p, out=tmp_path / "run", steps=40)
    done = recs[-1]
    assert done["reason"] == "nan" and done["step"] == 10
    err = next(r for r in recs if r["kind"] == "error")
    assert "not a finite number for 4 steps in a row" in err["message"]
    skipped = [r["skipped"] for r in recs if r["kind"] == "train"]
    assert skipped == [0, 0, 0, 2, 2]
    ck = C.load(tmp_path / "run")
    assert ck.step == 6 and all(torch.isfinite(t).all() for t in ck.weights.values())


def test_early_stopping_with_patience(tmp_path):
    p = tiny_project(tmp_path, solver={"base_lr": 1e-9}, training={"patience": 2,
                                                                    "eval_interval": 2})
    recs = run_all(p, out=tmp_path / "run", steps=40)
    assert recs[-1]["reason"] == "early_stop" and recs[-1]["step"] < 40


def test_a_run_folder_is_never_overwritten(tmp_path):
    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    before = (tmp_path / "run" / "metrics.jsonl").read_bytes()
    with pytest.raises(TrainingError, match="already holds a run; continue it with --resume"):
        run_all(p, out=tmp_path / "run", steps=2)
    assert (tmp_path / "run" / "metrics.jsonl").read_bytes() == before


def test_a_checkpoint_of_another_graph_is_refused(tmp_path):
    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    p.graph.set_param("lstm1", "num_output", 32)
    with pytest.raises(TrainingError, match="lstm1.rnn.weight_ih_l0 is .* in the checkpoint but"):
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    p.graph.rename_layer("drop", "dropout")
    with pytest.raises(TrainingError, match="different graph: the project has dropout"):
        run_all(p, out=tmp_path / "run", resume=True, steps=4)


def test_a_checkpoint_of_another_vocabulary_is_refused(tmp_path):
    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    other = tmp_path / "other.txt"
    other.write_text(TEXT.upper())
    with pytest.raises(TrainingError, match="another vocabulary"):
        run_all(p, out=tmp_path / "run", resume=True, steps=4, corpus=other)


@pytest.mark.parametrize("damage, words", [
    ("weights", "not a safetensors weights file"),
    ("state", "not a training-state file"),
    ("meta", "damaged"),
    ("pointer", "damaged"),
])
def test_damaged_or_foreign_checkpoints_are_refused_in_one_sentence(tmp_path, damage, words):
    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    folder = C.load(tmp_path / "run").path
    target = {"weights": folder / "weights.safetensors", "state": folder / "state.pt",
              "meta": folder / "meta.json", "pointer": tmp_path / "run" / "last.json"}[damage]
    target.write_bytes(b"\x80\x04not what it should be")
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    assert words in str(e.value) and "\n" not in str(e.value) and e.value.code == 2


def test_the_leftovers_of_writes_cut_short_are_cleared_when_the_run_is_opened(tmp_path):
    import os
    import tempfile
    import time

    def cut_short(folder, name: str, data: bytes) -> None:  # as an atomic write killed
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.utime(tmp, (time.time() - 60,) * 2)

    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=4)
    run = tmp_path / "run"
    folder = C.load(run).path
    before = {f: f.read_bytes() for f in folder.iterdir()}
    # a run killed while it wrote its checkpoints: hidden temporaries of the pointers and state
    for name in ("last.json", "best.json", "last.json", "metrics.jsonl"):
        cut_short(run, name, b'{"checkpoint": "checkpoints/step-0000009", "step": 9}\n')
    cut_short(folder, "state.pt", b"\0" * 4_000_000)
    assert C.load(run).step == 4  # the checkpoint the pointer names, whole
    assert not [f for f in run.rglob("*") if f.name.endswith(".tmp")]
    assert {f: f.read_bytes() for f in folder.iterdir()} == before
    recs = run_all(p, out=run, resume=True, steps=6)  # and the run goes on from it
    assert recs[-1]["reason"] == "finished" and C.load(run).step == 6


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_a_pickle_with_code_is_not_executed(tmp_path):
    """state.pt is read with weights_only=True: a pickle that would run code is refused."""
    import pickle

    class Evil:
        def __reduce__(self):
            return (exec, ("open('%s', 'w').write('pwned')" % (tmp_path / "pwned"),))

    p = tiny_project(tmp_path)
    run_all(p, out=tmp_path / "run", steps=2)
    folder = C.load(tmp_path / "run").path
    with open(folder / "state.pt", "wb") as f:
        pickle.dump({"optimizer": Evil()}, f)
    with pytest.raises(TrainingError, match="not a training-state file"):
        run_all(p, out=tmp_path / "run", resume=True, steps=4)
    assert not (tmp_path / "pwned").exists()


def test_bad_data_is_one_sentence_and_nothing_is_written(tmp_path):
    p = tiny_project(tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", steps=2, corpus=empty)
    assert str(empty) in str(e.value) and e.value.code == 2
    assert not (tmp_path / "run").exists()


def test_out_of_memory_is_a_clear_message_and_the_process_goes_on(tmp_path, monkeypatch):
    from designer.engines.train_step import step as S

    def boom(self, feeds, state=None):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    p = tiny_project(tmp_path)
    monkeypatch.setattr(S.TrainStep, "__call__", boom)
    with pytest.raises(TrainingError) as e:
        run_all(p, out=tmp_path / "run", steps=4)
    assert "ran out of memory at batch size 4" in str(e.value)
    assert "lower the data layer's batch_size" in str(e.value)
    monkeypatch.undo()
    recs = run_all(p, out=tmp_path / "run2", steps=2)  # the same process trains on
    assert recs[-1]["reason"] == "finished"


def test_a_net_without_a_loss_is_refused_before_anything_is_written(tmp_path):
    p = tiny_project(tmp_path)
    p.graph.remove_layer("loss")
    with pytest.raises(TrainingError, match="no loss layer"):
        run_all(p, out=tmp_path / "run", steps=2)
    assert not (tmp_path / "run").exists()
