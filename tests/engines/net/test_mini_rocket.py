"""MiniRocket computes what aeon's MiniRocket computes, given the same kernels' channels,
dilations and biases (on real UCR sets and on made-up sequences); padded steps change
nothing; the fit follows the seed; its buffers travel in a state dict and a checkpoint of
another size is refused; no gradient flows through it; the memory estimate matches what its
forward holds."""
import weakref

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from designer.engines.net import remembered as fitted_features
from designer.engines.net import rocket as engine
from designer.engines.measure.bench import random_feeds
from designer.engines.net.build import Net
from designer.engines.net.rocket import MiniRocket
from designer.graph import memory_rocket
from designer.graph.layers import rocket as R
from designer.graph.memory_layers import Context, rule
from designer.graph.model import Graph
from designer.training.run.checkpoint import Checkpoint, CheckpointError
from designer.training.run.resume import convert_for
from tests.conftest import DATA, need_data

ARROWHEAD = "ucr/ArrowHead_TRAIN.ts"
VOWELS = "japanese_vowels/JapaneseVowels_TRAIN.ts"


def aeon_mini_rocket():
    module = pytest.importorskip("aeon.transformations.collection.convolution_based",
                                 reason="aeon (the 'peers' extra) is not installed")
    return module.MiniRocket


def read_ts(name: str, n: int) -> np.ndarray:
    """The first ``n`` sequences of a .ts file as (N, C, T) float32, zeros after the shorter
    ones' ends (aeon reads them as data)."""
    from aeon.datasets import load_from_ts_file
    x, _ = load_from_ts_file(str(DATA / name))
    x = list(x[:n])
    out = np.zeros((len(x), x[0].shape[0], max(s.shape[1] for s in x)), np.float32)
    for i, s in enumerate(x):
        out[i, :, :s.shape[1]] = s
    return out


def with_aeons_fit(fitted, channels: int, num_features: int) -> MiniRocket:
    """Our module holding aeon's fitted channels, dilations and biases."""
    counts, channel_indices, dilations, per, biases = fitted.parameters
    m = MiniRocket(channels, num_features, 32, 0, batch_first=True)
    m.dilations[:len(dilations)] = torch.from_numpy(dilations.astype(np.int64))
    m.counts[:len(per)] = torch.from_numpy(per.astype(np.int64))
    masks, start = torch.zeros_like(m.masks), 0
    for comb, width in enumerate(counts):
        picked = torch.from_numpy(channel_indices[start:start + width].astype(np.int64))
        masks[comb // 84, comb % 84, picked] = 1.0
        start += width
    m.masks.copy_(masks)
    m.biases.copy_(torch.from_numpy(np.asarray(biases, np.float32)))
    m.fitted.fill_(True)
    m._forget()
    return m


def assert_aeons_features(x: np.ndarray, num_features: int) -> None:
    theirs = aeon_mini_rocket()(n_kernels=num_features, random_state=3, n_jobs=1).fit(x)
    want = np.asarray(theirs.transform(x))
    got = with_aeons_fit(theirs, x.shape[1], num_features)(
        torch.from_numpy(x).permute(0, 2, 1)).numpy()
    assert got.shape == want.shape == (len(x), 84 * (num_features // 84))
    diff = np.abs(got - want)
    # a response equal to its bias, to the last bit, may fall either side (ties)
    assert (diff < 1e-6).mean() >= 0.999, (diff >= 1e-6).mean()
    assert diff.mean() < 1e-4


@need_data(ARROWHEAD)
def test_aeons_features_on_arrowhead():
    assert_aeons_features(read_ts(ARROWHEAD, 24), 9996)  # 251 steps: 20 dilations


@need_data(VOWELS)
def test_aeons_features_on_japanese_vowels_padded_to_one_length():
    # 12 channels, 13 to 26 steps: 3 dilations, 71 and 41 biases a kernel at the first two
    # (counted from the sorted responses)
    assert_aeons_features(read_ts(VOWELS, 40), 9996)


@pytest.mark.parametrize("channels, steps, num_features",
                         [(1, 120, 840), (3, 60, 1680), (2, 9, 168)])
def test_aeons_features_on_random_walks(channels, steps, num_features):
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((20, channels, steps)).cumsum(2).astype(np.float32)
    assert_aeons_features(x, num_features)


def padded(lengths, channels=3, garbage=True, seed=0):
    """(T, N, C) sequences of ``lengths``, the steps after each end ``garbage`` (huge values,
    infinities and NaN) or zeros."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(max(lengths), len(lengths), channels, generator=g).cumsum(0)
    for i, n in enumerate(lengths):
        x[n:, i] = torch.tensor([1e6, float("inf"), float("nan")])[:channels] if garbage else 0
    return x, torch.tensor(lengths)


@pytest.mark.parametrize("batch_first", [False, True])
def test_padded_steps_change_nothing(batch_first):
    lengths = [40, 17, 33, 9, 26]
    (x, n), (zeros, _) = padded(lengths), padded(lengths, garbage=False)
    m = MiniRocket(3, 840, 32, 1, batch_first)
    m.fit(x.transpose(0, 1) if batch_first else x, n)
    batch = m(x.transpose(0, 1) if batch_first else x, n)
    assert torch.isfinite(batch).all()
    assert torch.equal(batch, m(zeros.transpose(0, 1) if batch_first else zeros, n))
    # each sequence alone, cut to its length: the same features, but for a response that
    # lands on its bias (the convolution over another length rounds its last bit otherwise)
    alone = torch.stack([m(x[:k, i:i + 1].transpose(0, 1) if batch_first else x[:k, i:i + 1])[0]
                         for i, k in enumerate(lengths)])
    assert (alone == batch).float().mean() > 0.999
    assert (alone - batch).abs().mean() < 1e-4


def test_the_fit_reads_the_padded_steps_as_zeros():
    x, n = padded([30, 21, 30, 12], garbage=True)
    zeros, _ = padded([30, 21, 30, 12], garbage=False)
    a, b = MiniRocket(3, 336, 32, 2, False), MiniRocket(3, 336, 32, 2, False)
    a.fit(zeros)
    b.fit(x, n)
    for key in ("dilations", "counts", "masks", "length", "fitted"):
        assert torch.equal(a.state_dict()[key], b.state_dict()[key]), key
    assert int(b.length) == 30  # the data's padded steps: shorter batches read as padded to it
    assert torch.equal(a.biases, b.biases)
    assert torch.equal(b(x[:25], n.clamp(max=25)), b(zeros[:25].clone(), n.clamp(max=25)))


def test_the_fit_follows_the_seed():
    x, n = padded([50, 41, 38, 50, 22, 47], garbage=False)
    first, again, other = (MiniRocket(3, 840, 32, seed, False) for seed in (7, 7, 8))
    for m in (first, again, other):
        assert not m.is_fitted
        m(x, n)  # a module not yet fitted fits to the first batch it sees
        assert m.is_fitted and bool(m.fitted)
    for key, value in first.state_dict().items():
        assert torch.equal(value, again.state_dict()[key]), key
    assert not torch.equal(first.masks, other.masks)
    assert not torch.equal(first.biases, other.biases)
    assert torch.equal(first.dilations, other.dilations)  # the plan follows the length alone
    before = first.biases.clone()
    first(x[:30] * 5, None)  # a later batch does not fit it again
    assert torch.equal(first.biases, before)


def test_the_state_dict_carries_the_fit_into_a_fresh_module():
    x, n = padded([60, 44, 52], garbage=False)
    fitted = MiniRocket(3, 1008, 16, 4, False)
    fitted.fit(x, n)
    keys = {"dilations", "counts", "masks", "biases", "length", "fitted"}
    assert set(fitted.state_dict()) == keys  # the kernels are made, not saved
    fresh = MiniRocket(3, 1008, 16, 0, False)
    assert not fresh.is_fitted
    fresh.load_state_dict(fitted.state_dict())
    assert fresh.is_fitted and fresh.plan() == fitted.plan()
    assert torch.equal(fresh(x, n), fitted(x, n))
    other, _ = padded([20, 20], seed=5, garbage=False)
    fresh(other)  # loaded fitted: it does not fit again
    assert torch.equal(fresh.biases, fitted.biases)
    with pytest.raises(RuntimeError, match="size mismatch for biases"):
        MiniRocket(3, 1092, 16, 4, False).load_state_dict(fitted.state_dict())


def toy_ts(tmp_path, channels: int) -> str:
    lines = [f"@dimensions {channels}", "@equalLength false", "@classLabel true up down",
             "@data"]
    for i in range(12):
        steps, sign = 12 + i % 5, 1 if i % 2 else -1
        lines.append(":".join(",".join(f"{sign * t * 0.3 + c:.2f}" for t in range(steps))
                              for c in range(channels)) + f":{'up' if sign > 0 else 'down'}")
    f = tmp_path / f"toy{channels}.ts"
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def rocket_net(tmp_path, channels: int = 2, num_features: int = 168) -> Graph:
    """SequenceClasses -> MiniRocket -> BatchNorm -> InnerProduct K -> SoftmaxWithLoss."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    g = Graph(project_dir=tmp_path)
    g.add_layer("SequenceClasses", "data", {"file": toy_ts(tmp_path, channels),
                                            "batch_size": 4})
    g.add_layer("MiniRocket", "rocket", {"num_features": num_features})
    g.add_layer("BatchNorm", "bn")
    g.add_layer("InnerProduct", "ip", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    for link in (("data", "data", "rocket", "x"), ("data", "lengths", "rocket", "lengths"),
                 ("rocket", "y", "bn", "x"), ("bn", "y", "ip", "x"),
                 ("ip", "y", "loss", "logits"), ("data", "label", "loss", "label")):
        g.connect(*link)
    assert g.errors() == []
    return g


def fitted_checkpoint(tmp_path) -> Checkpoint:
    g = rocket_net(tmp_path)
    net = Net(g)
    x, n = padded([16, 12, 14, 13], channels=2, garbage=False)
    assert fitted_features.fit_from(net, {"data.data": x, "data.lengths": n})
    assert not fitted_features.fit_from(net, {"data.data": x, "data.lengths": n})  # once
    assert fitted_features.fitted_state(net)["layers.rocket.fitted"].item() is True
    return Checkpoint(tmp_path / "checkpoints" / "step-0000010", {}, net.state_dict(), None)


def test_a_checkpoint_loads_into_the_same_design(tmp_path):
    ck = fitted_checkpoint(tmp_path / "a")
    g = rocket_net(tmp_path / "b")
    net = Net(g)
    net.load_state_dict(convert_for(ck, g, net))
    assert net.layers["rocket"].is_fitted
    assert torch.equal(net.layers["rocket"].biases, ck.weights["layers.rocket.biases"])


@pytest.mark.parametrize("channels, num_features, said", [
    (2, 336, "rocket.biases is (168,) in the checkpoint but (336,) in the project"),
    (3, 168, "rocket.masks is (32, 84, 2) in the checkpoint but (32, 84, 3) in the project")])
def test_a_checkpoint_of_another_size_is_refused_in_one_sentence(tmp_path, channels,
                                                                 num_features, said):
    ck = fitted_checkpoint(tmp_path / "a")
    g = rocket_net(tmp_path / "b", channels, num_features)
    with pytest.raises(CheckpointError) as e:
        convert_for(ck, g, Net(g))
    assert str(e.value) == f"{ck.path} does not fit the project: {said}"


def test_no_gradient_flows_through_it_and_autograd_keeps_nothing_of_it():
    x, n = padded([20, 15, 18], garbage=False)
    x.requires_grad_(True)
    m = MiniRocket(3, 168, 32, 0, False)
    m.fit(x, n)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = m(x, n)
    assert not y.requires_grad and y.grad_fn is None and saved == []


def test_the_every_layer_net_trains_its_embedding_through_the_others(every_layer):
    g = every_layer()
    assert [p for p in g.problems() if p.layer == "rocket"] == []
    torch.manual_seed(0)
    net = Net(g)
    out = net(random_feeds(g, torch.device("cpu")))
    assert not out.blobs[("rocket", 0)].requires_grad
    net.loss(out).backward()
    assert net.layers["embed"].embedding.weight.grad.abs().sum() > 0


# -- the memory estimate against the storages its forward allocates -----------------------------

class LiveBytes(TorchDispatchMode):
    """The peak bytes of the storages the ops allocate while it is on (``known``: tensors
    there before, not counted)."""

    def __init__(self, *known):
        super().__init__()
        self.refs, self.size, self.now, self.peak = {}, {}, 0, 0
        self.known = {t.untyped_storage().data_ptr() for t in known}

    def _drop(self, key):
        self.refs[key] -= 1
        if not self.refs[key]:
            self.now -= self.size.pop(key)
            del self.refs[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            key = t.untyped_storage().data_ptr()
            if key in self.known or key == 0:
                continue
            if key not in self.refs:
                self.refs[key], self.size[key] = 0, t.untyped_storage().nbytes()
                self.now += self.size[key]
                self.peak = max(self.peak, self.now)
            self.refs[key] += 1
            weakref.finalize(t, self._drop, key)
        return out


def test_the_rule_follows_the_engines_constants():
    assert memory_rocket.ROCKET_CHUNK == engine.CHUNK
    assert memory_rocket.ROCKET_SORT_ABOVE == engine.SORT_ABOVE


@pytest.mark.parametrize("n, steps, channels, num_features, lengths, first, rows", [
    (16, 251, 1, 840, False, False, 32),   # several dilations, a few biases each
    (8, 100, 12, 9996, False, True, 32),   # many biases at dilation 1: sorted
    (32, 300, 3, 168, True, False, 32),    # one bias a dilation
    (4, 60, 1, 84 * 40, True, False, 1)])  # a single dilation
def test_the_forward_peak_is_estimated(n, steps, channels, num_features, lengths, first, rows,
                                       monkeypatch):
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)  # the features computed, not looked up
    m = MiniRocket(channels, num_features, rows, 0, first)
    x = torch.randn(n, steps, channels) if first else torch.randn(steps, n, channels)
    length = torch.randint(steps // 2, steps, (n,)) if lengths else None
    if lengths:
        length[0] = steps
    m.fit(x, length)
    m.plan()
    with LiveBytes(x, *m.buffers(), *([length] if lengths else [])) as live:
        m(x, length)
    params = {"num_features": num_features, "max_dilations": rows, "seed": 0,
              "batch_first": first}
    k = rule(Context("MiniRocket", params, [(tuple(x.shape), "float"),
                                            ((n,), "index") if lengths else None],
                     [((n, m.num_features), "float")], "cpu", "CUDNN", 4), 0)
    assert 0.95 < k.forward / live.peak < 1.3, (k.forward, live.peak)
    assert k.extra == sum(b.numel() * b.element_size() for b in m.state_dict().values())


def test_rank_0s_fit_becomes_every_ranks(tmp_path):
    """What a data-parallel run does after each rank fitted on its own first batch: rank 0's
    ``fitted_state``, loaded into another rank's net, gives that rank rank 0's features."""
    g = rocket_net(tmp_path)
    rank0, rank1 = Net(g), Net(g)
    x, n = padded([16, 12, 14, 13], channels=2, garbage=False, seed=1)
    other, m = padded([15, 16, 9, 11], channels=2, garbage=False, seed=2)
    fitted_features.fit_from(rank0, {"data.data": x, "data.lengths": n})
    fitted_features.fit_from(rank1, {"data.data": other, "data.lengths": m})
    assert not torch.equal(rank0.layers["rocket"].biases, rank1.layers["rocket"].biases)
    rank1.load_state_dict(fitted_features.fitted_state(rank0), strict=False)
    feeds = {"data.data": x, "data.lengths": n}
    assert torch.equal(rank0(feeds, want=("rocket",)).blobs[("rocket", 0)],
                       rank1(feeds, want=("rocket",)).blobs[("rocket", 0)])


# -- remembering: the features of sequences read before -----------------------------------------

def test_a_sequence_read_before_gives_the_features_it_gave_in_any_batch(monkeypatch):
    x, n = padded([30, 22, 30, 17, 25, 30], channels=2, seed=3)
    m = MiniRocket(2, 840, 32, 0, False)
    m.fit(x, n)
    first = m(x[:, :4], n[:4])  # sequences 0-3 computed and kept
    assert len(m._rows) == 4
    again = m(x[:, [3, 5, 1, 4]], n[[3, 5, 1, 4]])  # two kept, two new
    assert len(m._rows) == 6
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)
    computed = m(x[:, [3, 5, 1, 4]], n[[3, 5, 1, 4]])
    assert torch.equal(again, computed)
    assert torch.equal(again[0], first[3]) and torch.equal(again[2], first[1])


def test_the_keys_tell_sequences_apart_and_ignore_the_batch():
    m = MiniRocket(1, 168, 32, 0, True)
    s = torch.randn(5, 1, 40)
    s[4] = s[0]
    keys = m.keys(s)
    assert keys[4] == keys[0] and len(set(keys)) == 4
    nudged = s[:1].clone()
    nudged[0, 0, 7] = torch.nextafter(nudged[0, 0, 7], torch.tensor(1e9))  # one bit of one step
    assert m.keys(nudged)[0] != keys[0]
    assert m.keys(s[2:3])[0] == keys[2]


def test_the_bank_stops_at_its_bytes_and_still_answers(monkeypatch):
    x, n = padded([20] * 8, channels=1, garbage=False, seed=4)
    m = MiniRocket(1, 168, 32, 0, False)
    m.fit(x, n)
    monkeypatch.setattr(R, "REMEMBER_BYTES", 3 * 4 * 168)  # room for three sequences
    out = m(x, n)
    assert len(m._rows) == 3 and m._bank.shape[0] == 3
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)
    assert torch.equal(out, m(x, n))


def test_a_net_runs_the_layer_that_reads_the_data_before_its_step(tmp_path, monkeypatch):
    """``Net.stage`` computes (or recalls) the features outside the step, which then takes
    them as given: the same outputs, and the step holds no host lookup to keep it from a
    CUDA graph."""
    net = Net(rocket_net(tmp_path))
    assert net.staged == ["rocket"] and net.capture_blockers(carries_state=False) == []
    x, n = padded([16, 12, 14, 13], channels=2, garbage=False, seed=1)
    feeds = {"data.data": x, "data.lengths": n}
    fitted_features.fit_from(net, feeds)
    staged = net.stage(feeds)
    assert set(staged) == {"data.data", "data.lengths", "rocket.y"}
    calls = []
    net.layers["rocket"].register_forward_hook(lambda *a: calls.append(1))
    given = net(staged, want=("ip",)).blobs[("ip", 0)]
    assert not calls  # taken from the feeds, not run again
    assert torch.equal(given, net(feeds, want=("ip",)).blobs[("ip", 0)])
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)
    assert net.stage(feeds) is feeds


def test_loading_weights_forgets_what_it_remembered():
    x, n = padded([20, 15, 18], channels=1, garbage=False, seed=5)
    m = MiniRocket(1, 168, 32, 0, False)
    m.fit(x, n)
    m(x, n)
    assert m._rows
    m.load_state_dict(m.state_dict())
    assert not m._rows and m._bank is None


def test_training_steps_give_the_same_weights_whether_the_features_are_remembered(tmp_path,
                                                                                  monkeypatch):
    """The step with the features staged from memory and the step computing them reach the
    same weights, bit for bit, over batches that repeat sequences."""
    from designer.engines.train_step.step import TrainStep, make_optimizer
    from designer.graph import settings

    x, n = padded([16, 12, 14, 13, 15, 9, 11, 16], channels=2, garbage=True, seed=6)
    labels = torch.tensor([0, 1, 0, 1, 1, 0, 1, 0])
    order = [[0, 1, 2, 3], [4, 5, 6, 7], [2, 5, 0, 7], [1, 3, 4, 6]] * 3

    def train(remember_bytes):
        monkeypatch.setattr(R, "REMEMBER_BYTES", remember_bytes)
        torch.manual_seed(0)
        net = Net(rocket_net(tmp_path / str(remember_bytes)))
        fitted_features.fit_from(net, {"data.data": x, "data.lengths": n})
        solver = settings.effective("solver", {"type": "Adam", "base_lr": 1e-3})
        step = TrainStep(net, make_optimizer(net.parameters(), solver, torch.device("cpu")), 5.0)
        for rows in order:
            step({"data.data": x[:, rows], "data.lengths": n[rows], "data.label": labels[rows]})
        return net, {k: v.clone() for k, v in net.state_dict().items()}

    remembered, a = train(256 << 20)
    assert len(remembered.layers["rocket"]._rows) == 8  # every sequence kept once
    _, b = train(0)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
