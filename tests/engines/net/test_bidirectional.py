"""Bidirectional layers and padded sequences: both engines compute the same function, padded
steps change nothing, and a padded batch equals each sequence run alone."""
import pytest
import torch

from designer.engines.measure.parity import TOLERANCE, compare, spread_lengths
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.cells.classic.engines.step_plans import compile_lstm_plan
from designer.engines.unrolled import UnrolledRecurrent
from designer.engines.net.convert import convert_layer

KINDS = ["LSTM", "GRU", "RNN"]


def pair(kind, e=4, h=5, levels=2, bidirectional=True, seed=0):
    """A cuDNN module with random weights and the unrolled module holding the same weights."""
    torch.manual_seed(seed)
    a = CudnnRecurrent(kind, e, h, levels, 0.0, False, bidirectional=bidirectional)
    with torch.no_grad():
        for p in a.parameters():
            p.uniform_(-0.4, 0.4)
    b = UnrolledRecurrent(kind, e, h, levels, bidirectional=bidirectional)
    b.load_state_dict(convert_layer(kind, a.state_dict(), levels, "CUDNN", "CAFFE"))
    return a, b


def worst(diffs):
    return max(diffs, key=lambda d: d.rel)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels", [1, 2])
@pytest.mark.parametrize("padding", ["none", "spread", "with an empty sequence"])
def test_bidirectional_engines_agree_on_outputs_states_and_every_gradient(kind, levels,
                                                                          padding):
    lengths = {"none": None, "spread": spread_lengths(9, 5, seed=levels),
               "with an empty sequence": [9, 0, 4, 9, 1]}[padding]
    diffs = compare(kind, 4, 6, levels, 9, 5, bidirectional=True, lengths=lengths, seed=levels)
    assert worst(diffs).rel <= TOLERANCE, worst(diffs)
    names = {d.name for d in diffs}
    assert f"grad W_xc_l{levels - 1}_reverse" in names and "grad W_hc_l0_reverse" in names
    if lengths is not None:
        assert "unrolled grad input at padding" in names and "cuDNN output at padding" in names


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resets", [False, True])
def test_one_directional_padded_engines_agree_with_and_without_resets(kind, resets):
    diffs = compare(kind, 4, 6, 2, 10, 5, resets=resets, lengths=spread_lengths(10, 5),
                    seed=3)
    assert worst(diffs).rel <= TOLERANCE, worst(diffs)


def test_the_fused_executor_runs_the_backward_chain_and_agrees_with_the_reference():
    m = UnrolledRecurrent("LSTM", 3, 4, 2, bidirectional=True)
    assert compile_lstm_plan(m.expansion(6)) is not None
    # padded sequences need the HOLD nodes, which only the reference executor runs
    assert compile_lstm_plan(m.expansion(6, lengths=True)) is None
    fast = compare("LSTM", 5, 8, 2, 12, 3, bidirectional=True, fast=True)
    ref = compare("LSTM", 5, 8, 2, 12, 3, bidirectional=True, fast=False)
    assert worst(fast).rel <= TOLERANCE and worst(ref).rel <= TOLERANCE


@pytest.mark.parametrize("engine", [0, 1], ids=["cudnn", "unrolled"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_padded_batch_equals_each_sequence_run_alone(kind, engine):
    """Outputs, final states and every gradient, sequence by sequence, without padding."""
    m = pair(kind)[engine]
    t_, n, lengths = 7, 4, [7, 3, 1, 5]
    x = torch.randn(t_, n, 4)
    weight = torch.randn(t_, n, 10)

    def run(xs, lens, w):
        m.zero_grad()
        xs = xs.clone().requires_grad_()
        y, state = m(xs, None, None, lens)
        ((y * w).sum() + sum((s * s).sum() for s in state)).backward()
        return y, state, xs.grad, {k: p.grad.clone() for k, p in m.named_parameters()}

    y, state, dx, grads = run(x, torch.tensor(lengths), weight)
    total = {k: torch.zeros_like(v) for k, v in grads.items()}
    for i, length in enumerate(lengths):
        yi, si, dxi, gi = run(x[:length, i:i + 1], None, weight[:length, i:i + 1])
        assert torch.allclose(y[:length, i:i + 1], yi, atol=1e-6)
        assert torch.all(y[length:, i] == 0) and torch.all(dx[length:, i] == 0)
        assert torch.allclose(dx[:length, i:i + 1], dxi, atol=1e-6)
        for s, s_alone in zip(state, si):
            assert torch.allclose(s[:, i:i + 1], s_alone, atol=1e-6)
        for k in total:
            total[k] += gi[k]
    for k, g in grads.items():
        assert torch.allclose(g, total[k], atol=1e-5), k


@pytest.mark.parametrize("engine", [0, 1], ids=["cudnn", "unrolled"])
def test_an_empty_sequence_outputs_zeros_and_keeps_its_state(engine):
    m = pair("LSTM", levels=1)[engine]
    x = torch.randn(5, 3, 4)
    h0 = torch.randn(2, 3, 5)
    c0 = torch.randn(2, 3, 5)
    y, (h, c) = m(x, None, (h0, c0), torch.tensor([5, 0, 2]))
    assert torch.all(y[:, 1] == 0)
    assert torch.equal(h[:, 1], h0[:, 1]) and torch.equal(c[:, 1], c0[:, 1])
    assert not torch.equal(h[:, 0], h0[:, 0])


@pytest.mark.parametrize("engine", [0, 1], ids=["cudnn", "unrolled"])
def test_a_restart_at_a_padded_step_changes_nothing(engine):
    m = pair("GRU", bidirectional=False)[engine]
    x, lengths = torch.randn(6, 3, 4), torch.tensor([6, 2, 4])
    cont = torch.ones(6, 3)
    cont[3, 0] = 0  # a real restart inside the first sequence
    y1, s1 = m(x, cont, None, lengths)
    cont[3, 1] = 0  # step 3 of the second sequence is padding
    cont[5, 2] = 0
    y2, s2 = m(x, cont, None, lengths)
    # the unrolled net ignores those flags outright; cuDNN splits its call there (a few ulp)
    same = torch.equal if engine else lambda a, b: torch.allclose(a, b, atol=1e-6, rtol=0)
    assert same(y1, y2) and same(s1[0], s2[0])
    y0, _ = m(x, None, None, lengths)
    assert not torch.allclose(y0[3:, 0], y1[3:, 0])  # while the real restart did restart


@pytest.mark.parametrize("module", [0, 1], ids=["cudnn", "unrolled"])
def test_bad_lengths_and_cont_on_a_bidirectional_layer_are_refused_in_words(module):
    m = pair("RNN", levels=1)[module]
    x = torch.randn(5, 2, 4)
    with pytest.raises(ValueError, match="a sequence's length is 6, but lengths must lie "
                                         "between 0 and the 5 steps"):
        m(x, None, None, torch.tensor([6, 2]))
    with pytest.raises(ValueError, match=r"one length per sequence, \(2,\), not \(3,\)"):
        m(x, None, None, torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="whole numbers"):
        m(x, None, None, torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="is bidirectional: it cannot follow 'cont'"):
        m(x, torch.ones(5, 2))


def test_batch_first_bidirectional_output_is_forward_half_first():
    a, b = pair("LSTM", levels=1)
    a.batch_first = b.batch_first = True
    x = torch.randn(3, 6, 4)  # (N, T, E)
    ya, _ = a(x, None, None, torch.tensor([6, 4, 1]))
    yb, _ = b(x, None, None, torch.tensor([6, 4, 1]))
    assert ya.shape == yb.shape == (3, 6, 10) and torch.allclose(ya, yb, atol=1e-6)
    # the backward half at a sequence's first step has read the whole sequence; the forward
    # half there has read one step: it matches a one-step forward run
    one, _ = a(x[:, :1], None, None, None)
    assert torch.allclose(ya[:, 0, :5], one[:, 0, :5], atol=1e-6)
