"""The RG-LRU on both engines against the paper's equations written out here, one sequence,
step and channel at a time (float64, within 1e-10: outputs, final states and every gradient);
the scan's chunks and padding under gradcheck; parity of the SCAN engine with the unrolled
net; the paper's initialisation; the state carried step by step."""
import pytest
import torch

from designer.cells.rglru.arithmetic import initial_lambda, rglru_layers
from designer.cells.rglru.engines.scan import ScanRGLRU
from designer.engines.measure.parity import TOLERANCE, compare, layer_parity, spread_lengths
from designer.engines.unrolled import UnrolledRecurrent
from designer.graph import project as P
from designer.graph.retype import replace_layer
from tests.conftest import PROJECTS
from tests.cells.running import assert_state_carries_step_by_step


# ------------------------------------------------------------------ the paper, as written --
def paper(weights, x, h0, levels, both, lengths=None):
    """De et al. (2024), the RG-LRU: r_t = sigmoid(W_a x_t + b_a), i_t = sigmoid(W_x x_t +
    b_x), a_t = a^(c r_t) with a = sigmoid(Lambda) and c = 8, h_t = a_t * h_{t-1} + sqrt(1 -
    a_t^2) * (i_t * u_t), here with u_t = W_u x_t + b_u (the layer's input projected to H).
    Each sequence on its own; padded steps are skipped; the backward direction reads each
    sequence's valid steps last to first."""
    t_, n = x.shape[0], x.shape[1]
    dirs = 2 if both else 1
    finals = []
    for k in range(levels):
        ys = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            w, b = weights[f"W_xc_l{k}{sfx}"], weights[f"b_c_l{k}{sfx}"]
            lam = weights[f"Lambda_l{k}{sfx}"]
            size = lam.shape[0]
            w_a, w_x, w_u = w[:size], w[size:2 * size], w[2 * size:]
            b_a, b_x, b_u = b[:size], b[size:2 * size], b[2 * size:]
            cols = []
            for s in range(n):
                valid = t_ if lengths is None else int(lengths[s])
                steps = range(valid - 1, -1, -1) if d == 1 else range(valid)
                h = h0[k * dirs + d, s]
                out = [torch.zeros(size, dtype=x.dtype)] * t_
                for t in steps:
                    r = torch.sigmoid(w_a @ x[t, s] + b_a)
                    i = torch.sigmoid(w_x @ x[t, s] + b_x)
                    u = w_u @ x[t, s] + b_u
                    a_t = torch.sigmoid(lam) ** (8 * r)
                    h = a_t * h + torch.sqrt(1 - a_t ** 2) * (i * u)
                    out[t] = h
                cols.append(torch.stack(out))
                finals.append((k * dirs + d, s, h))
            ys.append(torch.stack(cols, 1))
        x = torch.cat(ys, -1)
    final = torch.stack([torch.stack([h for c, s, h in finals if c == chain])
                         for chain in range(levels * dirs)])
    return x, final


def rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("levels,both,padded", [(1, False, False), (2, False, True),
                                                (1, True, True), (2, True, False)])
def test_both_engines_compute_the_papers_equations_in_float64(levels, both, padded):
    torch.manual_seed(levels + 2 * both + 4 * padded)
    t_, n, e, h = 20, 3, 5, 6  # two chunks of the scan: one whole, one filled up
    scan = ScanRGLRU(e, h, levels, bidirectional=both).double()
    scan.reset_parameters("uniform", 0.1)  # Lambda as the paper starts it
    unrolled = UnrolledRecurrent("RGLRU", e, h, levels, bidirectional=both).double()
    unrolled.load_state_dict(scan.state_dict())  # the same tensors, as they are
    x = torch.randn(t_, n, e, dtype=torch.double)
    h0 = torch.randn(levels * (2 if both else 1), n, h, dtype=torch.double) * 0.5
    lengths = torch.tensor([20, 9, 0]) if padded else None
    weight = torch.randn(t_, n, h * (2 if both else 1), dtype=torch.double)

    def run(fn):
        xi, hi = x.clone().requires_grad_(), h0.clone().requires_grad_()
        y, final = fn(xi, hi)
        ((y * weight).sum() + (final * final).sum()).backward()
        return y, final, xi.grad, hi.grad

    ref_w = {k: v.detach().clone().requires_grad_() for k, v in scan.state_dict().items()}
    ref = run(lambda xi, hi: paper(ref_w, xi, hi, levels, both, lengths))
    for module in (scan, unrolled):
        got = run(lambda xi, hi: (lambda y, s: (y, s[0]))(*module(xi, None, (hi,), lengths)))
        for a, b, what in zip(got, ref, ("output", "final h", "grad x", "grad h0")):
            assert rel(a, b) < 1e-10, (type(module).__name__, what, rel(a, b))
        for name, p in module.named_parameters():
            assert rel(p.grad, ref_w[name].grad) < 1e-10, (type(module).__name__, name)


def test_lambda_starts_with_a_to_the_c_uniform_between_0_9_and_0_999():
    a_c = torch.sigmoid(initial_lambda(20000, generator=torch.Generator().manual_seed(0))) ** 8
    assert 0.9 <= a_c.min() < 0.901 and 0.998 < a_c.max() <= 0.999
    assert abs(a_c.mean().item() - (0.9 + 0.999) / 2) < 2e-3
    m = ScanRGLRU(4, 8, 2, bidirectional=True)
    m.reset_parameters("uniform", 0.0)
    for k in ("Lambda_l0", "Lambda_l1_reverse"):
        a_c = torch.sigmoid(getattr(m, k)) ** 8
        assert ((a_c >= 0.9 - 1e-6) & (a_c <= 0.999 + 1e-6)).all()


def test_the_chunked_scan_passes_gradcheck_in_float64():
    torch.manual_seed(3)
    t_, n, e, h = 5, 3, 3, 2
    names = ("W_xc_l0", "b_c_l0", "Lambda_l0", "W_xc_l0_reverse", "b_c_l0_reverse",
             "Lambda_l0_reverse")
    shapes = ((3 * h, e), (3 * h,), (h,)) * 2
    tensors = [torch.randn(s, dtype=torch.double, requires_grad=True) for s in shapes]
    x = torch.randn(t_, n, e, dtype=torch.double, requires_grad=True)
    h0 = torch.randn(2, n, h, dtype=torch.double, requires_grad=True)
    lengths = torch.tensor([5, 2, 4])

    def fn(x, h0, *ws):  # chunks of 2 steps: within a chunk, across chunks and the padding
        return rglru_layers(dict(zip(names, ws)), x, h0, 1, 2, lengths, chunk=2)
    assert torch.autograd.gradcheck(fn, (x, h0, *tensors))


@pytest.mark.parametrize("levels,resets", [(1, True), (3, False)])
def test_the_scan_and_the_unrolled_net_agree_in_float32(levels, resets):
    diffs = compare("RGLRU", input_size=7, hidden=16, levels=levels, steps=40, batch=4,
                    resets=resets, seed=levels, settings={"chunk": 8})
    worst = max(diffs, key=lambda d: d.rel)
    assert worst.rel <= TOLERANCE, worst
    names = {d.name for d in diffs}
    assert {"output", "final h_T", "grad input", "grad initial h", "grad W_xc_l0",
            "grad b_c_l0", "grad Lambda_l0"} <= names
    assert diffs.compared == ("SCAN: the linear scan, chunks of 8 steps",
                              "CAFFE: the reference executor, node by node")


@pytest.mark.parametrize("levels,both", [(1, True), (2, False)])
def test_parity_with_padded_lengths_bidirectional_and_stacked(levels, both):
    lengths = spread_lengths(37, 5, seed=levels)
    lengths[0] = 0  # a sequence with no step: no output, its state as it came in
    diffs = compare("RGLRU", 6, 8, levels, 37, 5, bidirectional=both, lengths=lengths)
    assert max(d.rel for d in diffs) <= TOLERANCE, max(diffs, key=lambda d: d.rel)
    padding = [d for d in diffs if "at padding" in d.name]
    assert len(padding) == 4 and all(d.abs == 0.0 for d in padding)


def char_rnn():
    """The Char-RNN's graph (two levels, T=75, N=25) with its LSTM retyped to an RG-LRU."""
    graph = P.load(PROJECTS / "char-rnn-shakespeare.json").graph
    replace_layer(graph, "lstm1", "RGLRU")
    graph.set_param("lstm1", "num_output", 128)
    return graph


def test_parity_of_the_char_rnn_retyped_compares_two_computations_in_both_types():
    row = layer_parity(char_rnn(), "lstm1", steps=20)
    assert (row["steps"], row["batch"], row["levels"]) == (20, 8, 2)
    assert row["ok"] and 0 < row["max_abs"], [d for d in row["diffs"] if d["rel"] > TOLERANCE]
    assert row["compared"] == ["SCAN: the linear scan, chunks of 6 steps",
                               "CAFFE: the reference executor, node by node"]
    row64 = layer_parity(char_rnn(), "lstm1", steps=20, dtype=torch.float64)
    assert row64["tolerance"] == 1e-10 and row64["ok"]
    for d in row64["diffs"]:  # each against its own largest value, no floor needed
        assert d["abs"] <= 1e-10 * max(d["scale"], 1e-300) or d["abs"] == 0.0, d


@pytest.mark.parametrize("cls", [ScanRGLRU, UnrolledRecurrent])
def test_the_state_carries_step_by_step_as_over_the_whole_sequence(cls):
    """Generation feeds one step at a time and carries the state: the same as the whole
    sequence at once, restarts included."""
    torch.manual_seed(5)
    m = ScanRGLRU(3, 5, 2) if cls is ScanRGLRU else cls("RGLRU", 3, 5, 2)
    assert_state_carries_step_by_step(m)


def test_a_restart_forgets_the_past():
    torch.manual_seed(6)
    m = ScanRGLRU(3, 4)
    m.reset_parameters("uniform", 0.0)
    x, cont = torch.randn(8, 2, 3), torch.ones(8, 2)
    cont[4] = 0
    y1, _ = m(x, cont, (torch.randn(1, 2, 4),))
    x2 = x.clone()
    x2[:4] = torch.randn(4, 2, 3)  # another past
    y2, _ = m(x2, cont, (torch.randn(1, 2, 4),))
    assert torch.allclose(y1[4:], y2[4:], atol=1e-6) and not torch.allclose(y1[:4], y2[:4])
