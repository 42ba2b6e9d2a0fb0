"""SequencePool computes what its spec says: the mean, the max or the attention-weighted
average of each sequence's valid steps; padding after the end changes nothing, forward or
backward; a sequence of length 0 gives zeros; the designer's counts and memory estimate match
the module; a small classifier of padded sequences trains with it."""
import math

import pytest
import torch

from designer.engines.net.build import Net, count_parameters
from designer.engines.net.pooling import SequencePool
from designer.graph.memory_layers import Context, rule
from designer.graph.model import Graph
from tests.engines.probes import padded_and_junk, saved_bytes

METHODS = ["mean", "max", "attention"]


def toy_ts(tmp_path, features: int = 2, n: int = 12):
    """A .ts file of sequences 3 to 8 steps long, two classes told apart by a slope."""
    lines = [f"@dimensions {features}", "@equalLength false", "@classLabel true up down",
             "@data"]
    for i in range(n):
        length, sign = 3 + i % 6, 1 if i % 2 else -1
        channels = [",".join(f"{sign * t * 0.3 + c * 0.1:.2f}" for t in range(length))
                    for c in range(features)]
        lines.append(":".join(channels) + f":{'up' if sign > 0 else 'down'}")
    f = tmp_path / "toy.ts"
    f.write_text("\n".join(lines) + "\n")
    return f


def pool_graph(tmp_path, method="attention", units=0, lengths=True, batch_first=False):
    """SequenceClasses -> LSTM (reading the lengths) -> SequencePool -> InnerProduct K ->
    SoftmaxWithLoss."""
    g = Graph(project_dir=tmp_path)
    g.add_layer("SequenceClasses", "data", {"file": str(toy_ts(tmp_path)), "batch_size": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.add_layer("SequencePool", "pool", {"method": method, "attention_units": units})
    g.add_layer("InnerProduct", "ip", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    links = [("data", "data", "lstm", "x"), ("data", "lengths", "lstm", "lengths"),
             ("lstm", "y", "pool", "x"), ("pool", "y", "ip", "x"), ("ip", "y", "loss", "logits"),
             ("data", "label", "loss", "label")]
    if lengths:
        links.append(("data", "lengths", "pool", "lengths"))
    for link in links:
        g.connect(*link)
    assert g.errors() == []
    return g


def batch(n: int = 4, steps: int = 8, seed: int = 0) -> dict:
    """Feeds for pool_graph: padded sequences 1 to ``steps`` long, zeros after their end."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, steps + 1, (n,), generator=g)
    x = torch.randn(steps, n, 2, generator=g)
    x[torch.arange(steps).unsqueeze(1) >= lengths] = 0.0
    return {"data.data": x, "data.lengths": lengths,
            "data.label": torch.randint(0, 2, (n,), generator=g)}


def randomise(module):
    """Scores that are not all zero (the last scoring layer starts at zero: the mean)."""
    with torch.no_grad():
        for p in module.parameters():
            p.normal_()


@pytest.mark.parametrize("batch_first", [False, True])
def test_each_method_pools_the_valid_steps_as_written(batch_first):
    torch.manual_seed(0)
    x, lengths = torch.randn(6, 3, 4), torch.tensor([6, 2, 4])
    feed = x.transpose(0, 1) if batch_first else x
    mean = SequencePool("mean", 4, batch_first=batch_first)(feed, lengths)
    top = SequencePool("max", 4, batch_first=batch_first)(feed, lengths)
    att = SequencePool("attention", 4, 3, batch_first=batch_first)
    randomise(att)
    weighted = att(feed, lengths)
    for i, n in enumerate(lengths.tolist()):
        steps = x[:n, i]
        assert torch.allclose(mean[i], steps.mean(0))
        assert torch.equal(top[i], steps.max(0).values)
        w = torch.softmax(att.score(steps).squeeze(1), 0)
        assert torch.allclose(weighted[i], (w.unsqueeze(1) * steps).sum(0), atol=1e-6)
    for method in METHODS:  # without lengths every step counts
        m = SequencePool(method, 4, batch_first=batch_first)
        assert torch.allclose(m(feed), m(feed, torch.tensor([6, 6, 6])), atol=1e-6)


def test_attention_starts_as_the_mean_and_learns_its_scores():
    torch.manual_seed(0)
    x, lengths = torch.randn(5, 3, 4), torch.tensor([5, 1, 3])
    for units in (0, 3):
        att = SequencePool("attention", 4, units)
        assert torch.allclose(att(x, lengths), SequencePool("mean", 4)(x, lengths), atol=1e-6)
        att(x, lengths).square().sum().backward()
        assert att.score[-1].weight.grad.abs().sum() > 0


@pytest.mark.parametrize("method", METHODS)
def test_padding_after_the_end_changes_neither_outputs_nor_gradients(tmp_path, method):
    torch.manual_seed(0)
    net = Net(pool_graph(tmp_path, method, units=3))
    if method == "attention":
        randomise(net.layers["pool"])
    lengths = torch.tensor([2, 5, 3, 1])
    x, noisy = padded_and_junk(lengths, 5, 2)
    longer = torch.cat([noisy, torch.randn(3, 4, 2) * 100])  # junk steps appended

    def run(data):
        net.zero_grad()
        y = net({"data.data": data, "data.lengths": lengths}, want=("pool",)).blobs[("pool", 0)]
        y.square().sum().backward()
        return y.detach(), [p.grad.clone() for p in net.parameters() if p.grad is not None]

    y0, g0 = run(x)
    for data in (noisy, longer):
        y1, g1 = run(data)
        assert torch.allclose(y0, y1, atol=1e-6)
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g0, g1))


@pytest.mark.parametrize("method", METHODS)
def test_padded_steps_never_reach_the_pool_even_when_they_hold_nan(method):
    torch.manual_seed(0)
    pool = SequencePool(method, 3, 2)
    x = torch.randn(4, 2, 3)
    lengths = torch.tensor([2, 4])
    ref = pool(x, lengths)
    x[2:, 0] = float("nan")
    x.requires_grad_(True)
    y = pool(x, lengths)
    y.sum().backward()
    assert torch.allclose(y, ref) and torch.isfinite(x.grad).all()


@pytest.mark.parametrize("method", METHODS)
def test_a_sequence_of_length_zero_gives_zeros_and_finite_gradients(method):
    torch.manual_seed(0)
    pool = SequencePool(method, 3, 2)
    randomise(pool)
    x = torch.randn(4, 3, 3, requires_grad=True)
    y = pool(x, torch.tensor([0, 4, 2]))
    assert torch.equal(y[0], torch.zeros(3)) and torch.isfinite(y).all()
    y.sum().backward()
    assert torch.isfinite(x.grad).all() and torch.equal(x.grad[:, 0], torch.zeros(4, 3))
    assert all(torch.isfinite(p.grad).all() for p in pool.parameters())


@pytest.mark.parametrize("method, units", [("mean", 0), ("max", 0), ("attention", 0),
                                           ("attention", 5)])
def test_the_designer_counts_the_parameters_the_engine_builds(tmp_path, method, units):
    g = pool_graph(tmp_path, method, units)
    net = Net(g)
    assert g.info("pool").params == count_parameters(net.layers["pool"])
    assert g.info("pool").params == {("mean", 0): 0, ("max", 0): 0, ("attention", 0): 6,
                                     ("attention", 5): 6 * 5 + 5 + 5}[(method, units)]
    out = net(batch())
    assert tuple(out.blobs[("pool", 0)].shape) == tuple(g.output("pool", "y").shape)


@pytest.mark.parametrize("method, units, lengths", [
    ("mean", 0, False), ("mean", 0, True), ("max", 0, False), ("max", 0, True),
    ("attention", 0, False), ("attention", 0, True), ("attention", 8, False),
    ("attention", 8, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_the_memory_rule_counts_what_autograd_keeps(method, units, lengths, batch_first):
    """The rule's bytes (its own buffers, and its input when it keeps it) against the
    tensors one forward pass saves for backward, the weights left out."""
    t, n, h = 20, 16, 32
    pool = SequencePool(method, h, units, batch_first)
    x = torch.randn((n, t, h) if batch_first else (t, n, h), requires_grad=True)
    ends = torch.randint(1, t + 1, (n,)) if lengths else None
    measured = saved_bytes(lambda: pool(x, ends), *pool.parameters())
    params = {"method": method, "attention_units": units, "batch_first": batch_first}
    ctx = Context("SequencePool", params, [(tuple(x.shape), "float"),
                                           ((n,), "index") if lengths else None],
                  [((n, h), "float")], "cpu", "CAFFE", 4)
    kept = rule(ctx, count_parameters(pool))
    est = kept.extra + (4 * t * n * h if 0 in kept.inputs else 0)
    assert abs(est - measured) <= 0.05 * measured + 64, (est, measured)


def test_a_classifier_with_attention_pooling_trains_on_the_cpu(tmp_path):
    from designer.graph.project import Project
    from designer.training.run.loop import RunOptions, train
    g = pool_graph(tmp_path, "attention", 4)
    project = Project(g, "pooled", "", {"type": "Adam", "base_lr": 0.05, "max_steps": 12},
                      {"log_interval": 1, "eval_interval": 6, "eval_batches": 1,
                       "checkpoint_interval": 6, "sample_interval": 0, "device": "cpu"})
    project.save(tmp_path / "pooled.json")
    records = list(train(project, RunOptions(out=tmp_path / "run", steps=12)))
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 12 and all(math.isfinite(loss) for loss in losses)
    assert sum(losses[-3:]) < sum(losses[:3])
    assert (tmp_path / "run").is_dir()
