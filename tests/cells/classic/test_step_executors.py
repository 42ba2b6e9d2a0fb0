"""The fused GRU and RNN step executors compute what the node-by-node reference does: outputs,
final states and every gradient, with resets, stacked levels and both directions."""
import pytest
import torch

from designer.engines.unrolled import UnrolledRecurrent


def run(m, fast, x, cont, h0):
    m.fast = fast
    m.zero_grad()
    x.grad = None
    y, (h,) = m(x, cont, (h0,))
    weight = torch.arange(y.numel(), dtype=y.dtype).view_as(y).sin()
    ((y * weight).sum() + (h ** 2).sum()).backward()
    return [y.detach(), h.detach(), x.grad.clone()] + [p.grad.clone() for p in m.parameters()]


@pytest.mark.parametrize("kind,act", [("GRU", "tanh"), ("RNN", "tanh"), ("RNN", "relu")])
@pytest.mark.parametrize("levels,bidirectional", [(1, False), (2, False), (2, True)])
def test_the_fused_executor_matches_the_reference(kind, act, levels, bidirectional):
    torch.manual_seed(0)
    m = UnrolledRecurrent(kind, 5, 7, levels, 0.0, False, act, bidirectional=bidirectional)
    m.double()
    m.reset_parameters("uniform", 0.1)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.05 * torch.randn_like(p))
    t_, n = 6, 3
    x = torch.randn(t_, n, 5, dtype=torch.float64, requires_grad=True)
    cont = None  # a bidirectional layer takes no resets
    if not bidirectional:
        cont = torch.ones(t_, n, dtype=torch.float64)
        cont[3, 1] = 0  # a reset mid-sequence
    h0 = torch.randn(levels * (2 if bidirectional else 1), n, 7, dtype=torch.float64)
    fast = run(m, True, x, cont, h0)
    assert m._plans[(t_, False)][1] is not None  # the fused plan was made and used
    ref = run(m, False, x, cont, h0)
    for a, b in zip(fast, ref):
        assert torch.allclose(a, b, rtol=0, atol=1e-12), (a - b).abs().max()


def test_a_float32_run_stays_within_parity():
    torch.manual_seed(1)
    m = UnrolledRecurrent("GRU", 8, 16, 2)
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(20, 4, 8, requires_grad=True)
    cont = torch.ones(20, 4)
    h0 = torch.zeros(2, 4, 16)
    fast, ref = run(m, True, x, cont, h0), run(m, False, x, cont, h0)
    for a, b in zip(fast, ref):
        assert (a - b).abs().max() <= 1e-5 * max(1.0, b.abs().max())


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_under_bf16_autocast_the_gemms_round_and_the_state_stays_float32(kind):
    torch.manual_seed(0)
    m = UnrolledRecurrent(kind, 16, 32, 2)
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(10, 4, 16, requires_grad=True)
    y32, _ = m(x)
    y32.sum().backward()
    g32, x.grad = x.grad.clone(), None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y16, (h16, *_) = m(x)
    assert y16.dtype == torch.float32 and h16.dtype == torch.float32
    y16.sum().backward()
    assert 0 < (y16 - y32).abs().max() < 2e-2  # bf16 products, not a float32 run
    assert (x.grad - g32).abs().max() < 2e-2 * g32.abs().max()
