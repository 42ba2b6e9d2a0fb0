"""Both engines compute the same function: outputs, final states and every gradient."""
import pytest
import torch

from designer.cells.classic.engines.lstm_steps import UnrolledLSTMSteps
from designer.engines.measure.parity import TOLERANCE, compare
from designer.engines.unrolled import UnrolledRecurrent


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("resets", [False, True])
def test_cudnn_and_unrolled_agree_in_float32(kind, levels, resets):
    diffs = compare(kind, input_size=7, hidden=16, levels=levels, steps=12, batch=4,
                    resets=resets, seed=levels)
    worst = max(diffs, key=lambda d: d.rel)
    assert worst.rel <= TOLERANCE, worst
    names = {d.name for d in diffs}
    assert {"output", "final h_T", "grad input", "grad W_hc_l0"} <= names
    assert f"grad W_xc_l{levels - 1}" in names


def test_relu_rnn_agrees():
    diffs = compare("RNN", 5, 8, 2, 10, 3, nonlinearity="relu")
    assert max(d.rel for d in diffs) <= TOLERANCE


def test_both_unrolled_executors_agree_on_the_char_rnn_size():
    diffs_fast = compare("LSTM", 15, 64, 2, 30, 5, fast=True)
    diffs_ref = compare("LSTM", 15, 64, 2, 30, 5, fast=False)
    assert max(d.rel for d in diffs_fast) <= TOLERANCE
    assert max(d.rel for d in diffs_ref) <= TOLERANCE


def test_resets_really_reset():
    """A reset at step t makes what follows independent of everything before t."""
    torch.manual_seed(0)
    m = UnrolledRecurrent("LSTM", 3, 4)
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(8, 2, 3)
    cont = torch.ones(8, 2)
    cont[4] = 0
    y1, _ = m(x, cont)
    x2 = x.clone()
    x2[:4] = torch.randn(4, 2, 3)
    y2, _ = m(x2, cont)
    assert torch.allclose(y1[4:], y2[4:]) and not torch.allclose(y1[:4], y2[:4])


def test_fused_steps_pass_gradcheck_in_float64():
    torch.manual_seed(1)
    t_, n, h = 4, 2, 3
    xw = torch.randn(t_, n, 4 * h, dtype=torch.double, requires_grad=True)
    cont = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=torch.double)
    h0 = torch.randn(n, h, dtype=torch.double, requires_grad=True)
    c0 = torch.randn(n, h, dtype=torch.double, requires_grad=True)
    w = torch.randn(4 * h, h, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(lambda *a: UnrolledLSTMSteps.apply(*a, 0.0),
                                    (xw, cont, h0, c0, w))


def test_lstm_simple_clips_the_gate_gradients_in_both_executors():
    torch.manual_seed(2)
    grads = []
    for fast in (True, False):
        torch.manual_seed(2)
        m = UnrolledRecurrent("LSTMSimple", 3, 4, clip=1e-3)
        m.reset_parameters("uniform", 0.0)
        m.fast = fast
        x = torch.randn(6, 2, 3)
        y, _ = m(x)
        (y * 100).sum().backward()
        grads.append(m.b_c_l0.grad.clone())
    assert torch.allclose(grads[0], grads[1], atol=1e-7)
    # per step each gate gradient is within the threshold, so the bias sums over 6 x 2
    assert grads[0].abs().max() <= 6 * 2 * 1e-3 + 1e-7


def test_clockwork_forget_gate_bias():
    from designer.engines.unrolled import UnrolledRecurrent as U
    m = U.from_params("LSTMSimple", 3, {"num_output": 4,
                                        "enable_clockwork_forgetgate_bias": True})
    assert torch.all(m.b_c_l0[4:8] == 5.0) and torch.all(m.b_c_l0[:4] == 0.0)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_the_unrolled_engine_trains_under_bf16_autocast(kind):
    m = UnrolledRecurrent(kind, 8, 16, 2)
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(5, 3, 8, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y, _ = m(x)
        y.float().sum().backward()
    assert torch.isfinite(m.W_hc_l0.grad).all() and m.W_hc_l0.grad.dtype == torch.float32


def test_every_recurrent_type_compares_two_different_computations():
    """Each cell's parity pair builds, from the same parameters, a module of another engine
    than the unrolled net's, or the unrolled net's fused steps against its node-by-node
    executor."""
    from designer.engines.measure.parity_pairs import build, pair_of
    from designer.graph import registry
    for kind in registry.recurrent_kinds():
        pair = pair_of(kind)
        params = {"num_output": 8, "num_heads": 2}
        engine = build(kind, {**params, "engine": pair.engine}, 4)
        unrolled = build(kind, {**params, "engine": "CAFFE"}, 4)
        assert type(engine) is not type(unrolled) or not pair.reference_steps, kind
        assert engine.state_dict().keys() == unrolled.state_dict().keys() or pair.grads, kind


def test_a_layer_with_no_second_engine_is_refused_in_one_sentence():
    from designer.engines.measure.parity_pairs import pair_of
    with pytest.raises(ValueError, match="^an InnerProduct layer has no second engine to "
                                         "compare with its unrolled net$"):
        pair_of("InnerProduct")
