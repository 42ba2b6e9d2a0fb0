"""MinGRU and MinLSTM on both engines: the paper's equations, engine parity, the scan's
precision and gradients, state carried step by step, checkpoints across engines, training."""
import pytest
import torch

from designer.engines.net.build import Net
from designer.engines.expansion.expand import expand_params
from designer.cells.minimal.engines.scan import ScanRecurrent
from designer.cells.minimal.arithmetic import min_layers
from designer.engines.measure.parity import TOLERANCE, compare, spread_lengths
from designer.engines.unrolled import UnrolledRecurrent
from designer.graph import Graph
from tests.cells.running import assert_state_carries_step_by_step, char_feeds, kept_bytes
from tests.nets import char_net

KINDS = ["MinGRU", "MinLSTM"]


# ------------------------------------------------------------------ the paper, as written --
def g(v):
    return torch.where(v >= 0, v + 0.5, torch.sigmoid(v))


def paper(kind, weights, x, h0, levels, both, lengths=None):
    """The recurrence straight from Feng et al. (2024), one sequence and one step at a time:
    minGRU z = sigmoid(Linear_z x), h~ = g(Linear_h x), h = (1 - z) h + z h~; minLSTM
    f = sigmoid(Linear_f x), i = sigmoid(Linear_i x), f' = f / (f + i), i' = i / (f + i),
    h = f' h + i' h~. Padded steps are skipped; the backward direction reads each sequence's
    valid steps last to first."""
    t_, n = x.shape[0], x.shape[1]
    dirs = 2 if both else 1
    finals = []
    for k in range(levels):
        ys = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            w, b = weights[f"W_xc_l{k}{sfx}"], weights[f"b_c_l{k}{sfx}"]
            h_size = w.shape[0] // (2 if kind == "MinGRU" else 3)
            cols = []
            for s in range(n):
                valid = t_ if lengths is None else int(lengths[s])
                steps = range(valid - 1, -1, -1) if d == 1 else range(valid)
                h = h0[k * dirs + d, s]
                out = [torch.zeros(h_size, dtype=x.dtype)] * t_
                for t in steps:
                    pre = w @ x[t, s] + b
                    if kind == "MinGRU":
                        z, cand = torch.sigmoid(pre[:h_size]), g(pre[h_size:])
                        h = (1 - z) * h + z * cand
                    else:
                        f, i = torch.sigmoid(pre[:h_size]), torch.sigmoid(pre[h_size:2 * h_size])
                        cand = g(pre[2 * h_size:])
                        h = f / (f + i) * h + i / (f + i) * cand
                    out[t] = h
                cols.append(torch.stack(out))
                finals.append((k * dirs + d, s, h))
            ys.append(torch.stack(cols, 1))
        x = torch.cat(ys, -1)
    final = torch.stack([torch.stack([h for c, s, h in finals if c == chain])
                         for chain in range(levels * dirs)])
    return x, final


def rel(a, b):
    return ((a.double() - b.double()).abs().max() / b.double().abs().max()).item()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels,both,padded", [(1, False, False), (2, False, True),
                                                (1, True, True), (2, True, False)])
def test_both_engines_compute_the_papers_equations(kind, levels, both, padded):
    torch.manual_seed(levels + 2 * both + 4 * padded)
    t_, n, e, h = 20, 3, 5, 6  # two chunks of the scan: one whole, one filled up
    scan = ScanRecurrent(kind, e, h, levels, bidirectional=both)
    scan.reset_parameters("uniform", 0.1)
    unrolled = UnrolledRecurrent(kind, e, h, levels, bidirectional=both)
    unrolled.load_state_dict(scan.state_dict())  # the same tensors, as they are
    x = torch.randn(t_, n, e)
    h0 = torch.randn(levels * (2 if both else 1), n, h) * 0.5  # any sign: no log h0 taken
    lengths = torch.tensor([20, 9, 0]) if padded else None
    weight = torch.randn(t_, n, h * (2 if both else 1))

    def run(fn, dtype):
        xi, hi = (t.to(dtype).clone().requires_grad_() for t in (x, h0))
        y, final = fn(xi, hi)
        ((y * weight.to(dtype)).sum() + (final * final).sum()).backward()
        return y, final, xi.grad, hi.grad

    ref_w = {k: v.detach().double().requires_grad_() for k, v in scan.state_dict().items()}
    ref = run(lambda xi, hi: paper(kind, ref_w, xi, hi, levels, both, lengths), torch.double)
    log_scan = ScanRecurrent(kind, e, h, levels, bidirectional=both)
    log_scan.load_state_dict(scan.state_dict())
    log_scan.method = "log"  # the GPU's way, here on the CPU (whose own is "linear")
    for module in (scan, log_scan, unrolled):
        got = run(lambda xi, hi: (lambda y, s: (y, s[0]))(*module(xi, None, (hi,), lengths)),
                  torch.float32)
        for a, b, what in zip(got, ref, ("output", "final h", "grad x", "grad h0")):
            assert rel(a, b) < 1e-5, (type(module).__name__, what, rel(a, b))
        for name, p in module.named_parameters():
            assert rel(p.grad, ref_w[name].grad) < 1e-5, (type(module).__name__, name)
        module.zero_grad()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("resets", [False, True])
@pytest.mark.parametrize("method", ["log", "linear"])
def test_the_scan_and_the_unrolled_net_agree_in_float32(kind, levels, resets, method):
    diffs = compare(kind, input_size=7, hidden=16, levels=levels, steps=40, batch=4,
                    resets=resets, seed=levels, settings={"method": method})
    worst = max(diffs, key=lambda d: d.rel)
    assert worst.rel <= TOLERANCE, worst
    names = {d.name for d in diffs}
    assert {"output", "final h_T", "grad input", "grad initial h", "grad W_xc_l0",
            "grad b_c_l0"} <= names and not any("W_hc" in n for n in names)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels,both", [(1, True), (2, False), (2, True)])
@pytest.mark.parametrize("method", ["log", "linear"])
def test_parity_with_padded_lengths_bidirectional_and_stacked(kind, levels, both, method):
    lengths = spread_lengths(37, 5, seed=levels)
    lengths[0] = 0  # a sequence with no step: no output, its state as it came in
    diffs = compare(kind, 6, 8, levels, 37, 5, bidirectional=both, lengths=lengths,
                    settings={"method": method})
    assert max(d.rel for d in diffs) <= TOLERANCE, max(diffs, key=lambda d: d.rel)
    padding = [d for d in diffs if "at padding" in d.name]
    assert len(padding) == 4 and all(d.abs == 0.0 for d in padding)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["log", "linear"])
def test_the_chunked_scan_passes_gradcheck_in_float64(kind, method):
    torch.manual_seed(3)
    t_, n, e, h = 5, 3, 3, 2
    gates = 2 if kind == "MinGRU" else 3
    names = ("W_xc_l0", "b_c_l0", "W_xc_l0_reverse", "b_c_l0_reverse")
    shapes = ((gates * h, e), (gates * h,)) * 2
    tensors = [torch.randn(s, dtype=torch.double, requires_grad=True) for s in shapes]
    x = torch.randn(t_, n, e, dtype=torch.double, requires_grad=True)
    h0 = torch.randn(2, n, h, dtype=torch.double, requires_grad=True)
    lengths = torch.tensor([5, 2, 4])

    def fn(x, h0, *ws):  # chunks of 2 steps: within a chunk, across chunks and the padding
        return min_layers(kind, dict(zip(names, ws)), x, h0, 1, 2, lengths, chunk=2,
                          method=method)
    assert torch.autograd.gradcheck(fn, (x, h0, *tensors))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["log", "linear"])
def test_a_thousand_steps_keep_float32_precision(kind, method):
    """Scanned in one piece, log h_t = a*_t + logcumsumexp(...) loses 6e-8 x |a*_t|: 5e-5 of
    h after 1,000 steps; in chunks of 32 the error stays that of a few dozen steps. Step by
    step in plain arithmetic nothing cancels."""
    torch.manual_seed(4)
    scan = ScanRecurrent(kind, 4, 8)
    scan.reset_parameters("uniform", 0.0)
    scan.method = method
    unrolled = UnrolledRecurrent(kind, 4, 8).double()
    unrolled.load_state_dict({k: v.double() for k, v in scan.state_dict().items()})
    x = torch.randn(1024, 2, 4) * 2
    with torch.no_grad():
        want, (want_h,) = unrolled(x.double())
        got, (got_h,) = scan(x)
        scan.chunk = 1024
        whole, _ = scan(x)
    assert rel(got, want) < 1e-5 and rel(got_h, want_h) < 1e-5
    if method == "log":
        assert rel(whole, want) > 2 * rel(got, want)  # what the chunks are for


@pytest.mark.parametrize("cls", [ScanRecurrent, UnrolledRecurrent])
@pytest.mark.parametrize("kind", KINDS)
def test_the_state_carries_step_by_step_as_over_the_whole_sequence(cls, kind):
    """Generation feeds one step at a time and carries the state: the same as the whole
    sequence at once, restarts included."""
    torch.manual_seed(5)
    m = cls(kind, 3, 5, 2)
    assert_state_carries_step_by_step(m)


@pytest.mark.parametrize("kind", KINDS)
def test_a_restart_forgets_the_past_and_one_at_a_padded_step_changes_nothing(kind):
    torch.manual_seed(6)
    m = ScanRecurrent(kind, 3, 4)
    m.reset_parameters("uniform", 0.0)
    x, cont = torch.randn(8, 2, 3), torch.ones(8, 2)
    cont[4] = 0
    y1, _ = m(x, cont, (torch.randn(1, 2, 4),))
    x2 = x.clone()
    x2[:4] = torch.randn(4, 2, 3)
    y2, _ = m(x2, cont)
    assert torch.allclose(y1[4:], y2[4:], atol=1e-6) and not torch.allclose(y1[:4], y2[:4])
    lengths = torch.tensor([8, 3])
    cont_padded = torch.ones(8, 2)
    cont_padded[5, 1] = 0  # at a padded step of sequence 1
    a = m(x, cont_padded, None, lengths)
    b = m(x, None, None, lengths)
    assert torch.allclose(a[0], b[0], atol=1e-6) and torch.allclose(a[1][0], b[1][0], atol=1e-6)


def min_net(kind: str, engine: str = "SCAN", levels: int = 2) -> Graph:
    """A tiny char net: data -> Embed -> the layer (following cont) -> InnerProduct -> loss."""
    return char_net(kind, {"num_output": 16, "num_layers": levels, "engine": engine},
                    steps=10, vocab=12, cont=True)


@pytest.mark.parametrize("engine", ["cudnn", "caffe", "persist"])
def test_every_engine_choice_runs_them(engine):
    g = min_net("MinLSTM")
    net = Net(g, engine)
    assert net.engines["rnn"] == ("CAFFE" if engine == "caffe" else "SCAN")
    if engine != "caffe":
        assert net.capture_blockers() == [
            "rnn runs the parallel scan with a 'cont' input, whose resets are found on the host"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine", ["SCAN", "CAFFE"])
def test_a_few_training_steps_lower_the_loss(kind, engine):
    from designer.engines.train_step.step import TrainStep, make_optimizer
    from designer.graph import settings
    torch.manual_seed(0)
    net = Net(min_net(kind, engine))
    solver = settings.effective("solver", {"base_lr": 0.02})
    step = TrainStep(net, make_optimizer(net.parameters(), solver, torch.device("cpu")), 5.0)
    batch = char_feeds(1)
    losses = [float(step(batch).loss) for _ in range(12)]
    assert losses[-1] < 0.8 * losses[0], losses


@pytest.mark.parametrize("kind,unit", [("MinGRU", "MIN_GRU_UNIT"), ("MinLSTM", "MIN_LSTM_UNIT")])
def test_each_unrolled_step_is_a_scale_and_a_unit_with_no_recurrent_matrix(kind, unit):
    params = {"num_output": 4, "num_layers": 2, "bidirectional": True}
    exp = expand_params(kind, params, 5, "N", 3, "rnn", lengths=True)
    counts = exp.counts()
    assert counts["SCALE"] == 2 * 2 * 5 + 2 and counts[unit] == 2 * 2 * 5  # + the masks
    assert counts["HOLD"] == 20 and counts["INNER_PRODUCT"] == 4  # the input transforms only
    gates = 2 if kind == "MinGRU" else 3
    assert exp.weights["L0/W_xc"] == (gates * 4, 3) and exp.weights["L1/W_xc_reverse"] == \
        (gates * 4, 8)
    assert not any("W_hc" in w for w in exp.weights)
    step = exp.step_nodes(2, level=1, direction=1)
    assert [n.type for n in step] == ["SCALE", unit, "HOLD"]
    assert step[1].bottoms == ("L1/h_conted_3_reverse", "L1/W_xc_x_2_reverse")


@pytest.mark.parametrize("kind", KINDS)
def test_under_bf16_autocast_the_scan_runs_in_float32(kind):
    torch.manual_seed(7)
    m = ScanRecurrent(kind, 8, 16, 2)
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(6, 3, 8, requires_grad=True)
    exact, _ = m(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y, (h,) = m(x)
        y.sum().backward()
    assert y.dtype == torch.float32 and h.dtype == torch.float32
    assert rel(y, exact) < 2e-2 and torch.isfinite(m.W_xc_l0.grad).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine,levels,dropout,cont,both", [
    ("cudnn", 1, 0.0, False, False), ("cudnn", 2, 0.3, True, False),
    ("cudnn", 1, 0.0, False, True), ("caffe", 2, 0.0, True, False),
    ("caffe", 1, 0.0, False, True)])
def test_the_memory_estimate_matches_the_saved_tensors(kind, engine, levels, dropout, cont, both):
    from designer.engines.measure.bench import random_feeds
    from designer.graph.memory import Setup, estimate
    from tests.engines.net.test_memory import net_graph, saved_bytes
    g = net_graph(kind, levels, dropout, cont, both)
    torch.manual_seed(0)
    net = Net(g, engine).train()
    measured = saved_bytes(net, random_feeds(g, torch.device("cpu")))
    est = estimate(g, Setup("cpu", engine)).activations
    assert abs(est - measured) / measured < 0.10, (est, measured)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine,device,method", [("SCAN", "cuda", "log"),
                                                  ("SCAN", "cpu", "linear"),
                                                  ("CAFFE", "cpu", None)])
@pytest.mark.parametrize("both", [False, True])
def test_the_layers_memory_rule_matches_what_it_keeps(kind, engine, device, method, both):
    """The rule per engine and device (a GPU scans in log space) against the tensors the layer
    keeps, run here on the CPU in that device's way."""
    from designer.graph.memory_layers import Context, rule
    t_, n, e, h = 24, 8, 32, 64
    if engine == "SCAN":
        m = ScanRecurrent(kind, e, h, 2, bidirectional=both)
        m.method = method
    else:
        m = UnrolledRecurrent(kind, e, h, 2, bidirectional=both)
    x = torch.randn(t_, n, e, requires_grad=True)
    saved = kept_bytes(m, x)
    d = 2 if both else 1
    params = {"num_output": h, "num_layers": 2, "bidirectional": both, "dropout_ratio": 0.0}
    ctx = Context(kind, params, [((t_, n, e), "float")], [((t_, n, d * h), "float")], device,
                  engine, 4)
    kept = rule(ctx, 0)
    assert kept.inputs == [0] and kept.outputs == []
    assert abs(kept.extra - saved) / saved < 0.05


def test_the_graph_knows_the_scans_chunk():
    from designer.cells.minimal.arithmetic import SCAN_CHUNK
    from designer.cells.minimal.memory import SCAN_CHUNK as GRAPH_CHUNK
    assert GRAPH_CHUNK == SCAN_CHUNK  # the memory rule fills the last chunk up as the scan does


def test_the_benchmark_runs_at_small_sizes_on_the_cpu():
    import json
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_min_rnn.py"
    run = subprocess.run([sys.executable, str(script), "--device", "cpu", "--small", "--json",
                          "--iters", "1"], capture_output=True, text=True, timeout=300,
                         cwd=script.parents[2])
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [(r["T"], r["kind"]) for r in rows] == [(64, "MinGRU"), (64, "MinLSTM"),
                                                   (16, "MinGRU"), (16, "MinLSTM")]
    assert all(abs(r["lstm_params"] - r["params"]) / r["params"] < 0.05 for r in rows)
