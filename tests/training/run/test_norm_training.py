"""Nets with BatchNorm or LayerNorm train on the CPU: labelled padded sequences -> LSTM -> norm
-> SequenceLast -> InnerProduct -> loss; a checkpoint keeps BatchNorm's running statistics, so a
resumed run continues exactly."""
import math

import pytest
import torch

from designer.graph import Graph
from designer.graph.project import Project
from designer.training.run import checkpoint as C
from designer.training.run.loop import RunOptions, train


def sequences(folder, count: int = 24) -> str:
    """Sequences of 2 to 7 steps of two features; the label says whether the first feature
    mostly rises."""
    rows = ["series_id,step,a,b,label"]
    for s in range(count):
        up = s % 2 == 0
        for t in range(2 + s % 6):
            a = (t if up else -t) * 0.3 + (s % 5) * 0.1
            rows.append(f"{s},{t},{a:.2f},{(s * 3 + t) % 7 * 0.1:.2f},{'up' if up else 'down'}")
    (folder / "seqs.csv").write_text("\n".join(rows) + "\n")
    return "seqs.csv"


def norm_project(folder, norm: str) -> Project:
    g = Graph(project_dir=folder)
    g.add_layer("SequenceClasses", "data", {"file": sequences(folder), "batch_size": 6})
    g.add_layer("LSTM", "lstm", {"num_output": 8})
    g.add_layer(norm, "norm")
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    links = [("data", "data", "lstm", "x"), ("data", "lengths", "lstm", "lengths"),
             ("lstm", "y", "norm", "x"), ("norm", "y", "last", "x"),
             ("data", "lengths", "last", "lengths"), ("last", "y", "ip", "x"),
             ("ip", "y", "loss", "logits"), ("data", "label", "loss", "label")]
    if norm == "BatchNorm":
        links.append(("data", "lengths", "norm", "lengths"))
    for link in links:
        g.connect(*link)
    assert g.problems() == []
    return Project(g, "norms", "", {"type": "Adam", "base_lr": 0.02, "max_steps": 8},
                   {"log_interval": 1, "eval_interval": 2, "eval_batches": 1,
                    "checkpoint_interval": 4, "sample_interval": 0, "device": "cpu"})


def losses(records, kind="train", key="loss"):
    return [(r["step"], r[key]) for r in records if r["kind"] == kind]


@pytest.mark.parametrize("norm", ["LayerNorm", "BatchNorm"])
def test_a_net_with_a_norm_trains_a_few_steps(tmp_path, norm):
    records = list(train(norm_project(tmp_path, norm), RunOptions(out=tmp_path / "run",
                                                                  steps=8)))
    assert records[-1]["kind"] == "done" and records[-1]["reason"] == "finished"
    train_losses = [loss for _, loss in losses(records)]
    assert len(train_losses) == 8 and all(math.isfinite(v) for v in train_losses)
    assert all(math.isfinite(v) for _, v in losses(records, "val", "val_loss"))
    weights = C.load(tmp_path / "run").weights
    if norm == "BatchNorm":  # the running statistics travel with the weights
        assert {"layers.norm.running_mean", "layers.norm.running_var",
                "layers.norm.num_batches_tracked"} <= set(weights)
        assert int(weights["layers.norm.num_batches_tracked"]) == 8
        assert not torch.allclose(weights["layers.norm.running_var"], torch.ones(8))


def test_a_resumed_batch_norm_run_continues_exactly(tmp_path):
    """8 steps give the same losses, training and validation (which reads the running
    statistics), as 4 steps, resume, 4 steps."""
    project = norm_project(tmp_path, "BatchNorm")
    straight = list(train(project, RunOptions(out=tmp_path / "a", steps=8)))
    first = list(train(project, RunOptions(out=tmp_path / "b", steps=4)))
    second = list(train(project, RunOptions(out=tmp_path / "b", resume=True, steps=8)))
    assert second[0]["resumed"] and second[0]["step"] == 4
    assert losses(first) + losses(second) == losses(straight)
    assert losses(first, "val", "val_loss") + losses(second, "val", "val_loss") == \
        losses(straight, "val", "val_loss")
    a, b = C.load(tmp_path / "a").weights, C.load(tmp_path / "b").weights
    for key in ("layers.norm.running_mean", "layers.norm.running_var"):
        assert torch.equal(a[key], b[key])
