"""Hydra computes what aeon's Hydra computes, given the same kernels and channel picks (on
made-up sequences of one and of several channels, and on a UCR set); padded steps change
nothing; the fit follows the seed and shares the features among the dilations the length
gives; its buffers travel in a state dict; no gradient flows through it; remembered features
are the computed ones; the memory estimate matches what its forward holds."""
import numpy as np
import pytest
import torch

from designer.engines.net.hydra import Hydra
from designer.graph.layers import hydra as H
from designer.graph.layers import rocket as R
from designer.graph.memory_layers import Context, rule
from tests.conftest import DATA
from tests.engines.net.test_mini_rocket import LiveBytes


def aeon_internal():
    module = pytest.importorskip("aeon.transformations.collection.convolution_based._hydra",
                                 reason="aeon (the 'peers' extra) is not installed")
    return module._HydraInternal


def with_aeons_kernels(ours: Hydra, ref) -> None:
    """Put aeon's kernels and channel picks into ``ours`` (fitted, 32 groups a view)."""
    used, g = ours.plan()
    assert used == [int(d) for d in ref.dilations] and g == 32
    w, mix = [], []
    for j in range(len(used)):
        for v in range(2):
            w.append(ref.W[j, v].reshape(-1, H.TAPS))
            m = torch.zeros(g, ours.channels)
            if ours.channels == 1:
                m.fill_(1.0)
            else:
                m.scatter_add_(1, ref.idx[j][v], torch.ones(ref.idx[j][v].shape))
            mix.append(m)
    w, mix = torch.cat(w), torch.cat(mix)
    ours.weights[:len(w)] = w
    ours.mix[:len(mix)] = mix


def aeons_budget(steps: int) -> int:
    """The features that give 32 groups a view at each of aeon's dilations."""
    dilations = int(np.log2((steps - 1) / 8)) + 1
    return dilations * H.VIEWS * H.COUNTS * 8 * 32


@pytest.mark.parametrize("channels, steps", [(1, 100), (3, 60), (12, 29)])
def test_the_features_are_aeons_given_its_kernels(channels, steps):
    internal = aeon_internal()
    torch.manual_seed(0)
    x = torch.randn(6, channels, steps)
    x[2, :, steps // 2:] = 0.0  # a padded one: its responses tie where the window is zeros
    ours = Hydra(channels, aeons_budget(steps), 8, 10, 8, 0, True)
    ours.fit(x.transpose(1, 2))
    torch.manual_seed(1)
    ref = internal(steps, channels)
    with_aeons_kernels(ours, ref)
    got = ours(x.transpose(1, 2))
    want = ref(x).clamp(min=0).sqrt()
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_on_a_ucr_set():
    internal = aeon_internal()
    path = DATA / "ucr" / "GunPoint_TRAIN.ts"
    if not path.exists():
        pytest.skip(f"data not found in {DATA}: ucr/GunPoint_TRAIN.ts")
    from aeon.datasets import load_from_ts_file
    x, _ = load_from_ts_file(str(path))
    x = torch.tensor(np.asarray(x[:20], dtype=np.float32))  # (20, 1, 150)
    ours = Hydra(1, aeons_budget(x.shape[2]), 8, 10, 8, 0, True)
    ours.fit(x.transpose(1, 2))
    torch.manual_seed(3)
    ref = internal(x.shape[2], 1)
    with_aeons_kernels(ours, ref)
    torch.testing.assert_close(ours(x.transpose(1, 2)), ref(x).clamp(min=0).sqrt(),
                               rtol=1e-5, atol=1e-5)


def test_the_budget_is_shared_among_the_dilations_the_length_gives():
    p = {"num_features": 8192, "kernels": 8, "max_dilations": 10}
    assert H.steps_dilations(24, p) == [1, 2]
    assert H.steps_dilations(251, p) == [1, 2, 4, 8, 16]
    assert H.steps_dilations(5, p) == [1]
    assert H.steps_dilations(10_000, {**p, "max_dilations": 3}) == [1, 2, 4]
    assert H.steps_dilations(10_000, {**p, "num_features": 64}) == [1, 2]  # a group each
    m = Hydra(1, 8192, 8, 10, 8, 0, False)
    m.fit(torch.randn(251, 4, 1))
    used, g = m.plan()
    assert used == [1, 2, 4, 8, 16] and g == 8192 // (5 * 32) == 51
    y = m(torch.randn(251, 4, 1))
    assert y.shape == (4, 8192) and (y[:, 5 * 32 * 51:] == 0).all() and (y >= 0).all()


def test_padding_and_the_steps_after_each_length_change_nothing():
    torch.manual_seed(0)
    m = Hydra(2, 1024, 8, 10, 8, 0, False)
    x = torch.randn(40, 3, 2)
    lengths = torch.tensor([40, 25, 31])
    m.fit(x, lengths)
    want = m(x, lengths)
    noisy = x.clone()
    noisy[30:, 1] = 99.0  # after the second one's end
    torch.testing.assert_close(m(noisy, lengths), want)
    short = x[:31, 1:2]  # read alone, shorter: padded to the 40 steps fitted
    torch.testing.assert_close(m(short, lengths[1:2]), want[1:2])


def test_the_seed_draws_the_kernels_and_a_state_dict_carries_them():
    x = torch.randn(50, 4, 3)
    a, b, c = (Hydra(3, 512, 8, 10, 8, s, False) for s in (0, 0, 1))
    for m in (a, b, c):
        m.fit(x)
    assert torch.equal(a(x), b(x)) and not torch.equal(a(x), c(x))
    fresh = Hydra(3, 512, 8, 10, 8, 5, False)
    fresh.load_state_dict(a.state_dict())
    assert fresh.is_fitted and fresh.steps() == 50
    torch.testing.assert_close(fresh(x), a(x))


def test_no_gradient_flows_through_it_and_remembered_features_are_the_computed_ones(
        monkeypatch):
    x = torch.randn(30, 5, 2, requires_grad=True)
    m = Hydra(2, 512, 8, 10, 8, 0, False)
    m.fit(x)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = m(x)
    assert not y.requires_grad and saved == []
    again = m(x[:, [3, 0]])  # from the bank
    torch.testing.assert_close(again, y[[3, 0]])
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)
    torch.testing.assert_close(m(x[:, [3, 0]]), again)


@pytest.mark.parametrize("n, steps, channels, num_features, lengths", [
    (16, 251, 1, 8192, False), (8, 100, 12, 2048, True), (32, 24, 3, 8192, False)])
def test_the_forward_peak_is_estimated(n, steps, channels, num_features, lengths, monkeypatch):
    monkeypatch.setattr(R, "REMEMBER_BYTES", 0)
    m = Hydra(channels, num_features, 8, 10, 8, 0, False)
    x = torch.randn(steps, n, channels)
    length = torch.full((n,), steps) if lengths else None
    m.fit(x, length)
    m.plan()
    with LiveBytes(x, *m.buffers(), *([length] if lengths else [])) as live:
        m(x, length)
    params = {"num_features": num_features, "kernels": 8, "max_dilations": 10,
              "max_channels": 8, "seed": 0, "batch_first": False}
    k = rule(Context("Hydra", params, [(tuple(x.shape), "float"),
                                       ((n,), "index") if lengths else None],
                     [((n, num_features), "float")], "cpu", "CUDNN", 4), 0)
    assert 0.8 < k.forward / live.peak < 1.5, (k.forward, live.peak)
    assert k.extra == sum(b.numel() * b.element_size() for b in m.state_dict().values())


def test_a_sequence_read_past_the_steps_fitted_is_not_taken_for_the_same_one_read_within():
    """Zeros after a sequence's end add nothing to its key's sums: the steps read are part of
    the key, so features made from 64 steps are not given for the same sequence read as the
    41 fitted (the counts of the minima differ)."""
    torch.manual_seed(0)
    m = Hydra(1, 256, 8, 10, 8, 0, False)
    x = torch.randn(41, 3, 1)
    m.fit(x)
    longer = torch.cat([x, torch.zeros(23, 3, 1)])
    first = m(longer)
    within = m(x)
    assert not torch.equal(first, within)
    fresh = Hydra(1, 256, 8, 10, 8, 0, False)
    fresh.load_state_dict(m.state_dict())
    torch.testing.assert_close(within, fresh(x))
