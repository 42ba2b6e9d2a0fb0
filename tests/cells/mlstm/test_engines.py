"""The mLSTM's two engines compute the paper's function: the chunkwise-parallel form (CHUNK)
and the unrolled net (CAFFE) against each other and against the recurrent equations of Beck
et al. (2024) written out below, outputs, final states (C, n, m) and every gradient."""
import math

import pytest
import torch

from designer.engines.net.build import Net
from designer.engines.expansion.expand import expand
from designer.cells.mlstm.engines.chunk import ChunkMLSTM, UnrolledMLSTM
from designer.cells.mlstm.expansion import expand_mlstm
from designer.engines.measure.parity import TOLERANCE, compare, layer_parity
from designer.graph import Graph
from tests.cells.running import kept_bytes
from tests.nets import char_net

E, H, HEADS = 5, 8, 2


def paper(weights, x, levels, heads, forget="sigmoid", lengths=None, stabilised=True,
          norm="head"):
    """The recurrent equations of the paper, one step and one head at a time.

    Unstabilised: C_t = f C_{t-1} + i v k^T, n_t = f n_{t-1} + i k, h = o (C q) /
    max(|n^T q|, 1) with i = exp(i~). Stabilised (the appendix): m_t = max(log f + m_{t-1},
    i~), i' = exp(i~ - m_t), f' = exp(log f + m_{t-1} - m_t), the bound exp(-m_t). ``norm``
    "head": each head's read-out (C q) / den minus its mean over the head's d values, divided
    by the square root of their variance + 1e-5, before o. Returns the outputs and the final
    (C, n, m) per level (m = 0 unstabilised)."""
    steps, batch = x.shape[0], x.shape[1]
    finals = []
    for k in range(levels):
        w, b = weights[f"W_xc_l{k}"], weights[f"b_c_l{k}"]
        hidden = (w.shape[0] - 2 * heads) // 4
        d = hidden // heads
        out = torch.zeros(steps, batch, hidden, dtype=x.dtype)
        level_final = []
        for s in range(batch):
            cs = [torch.zeros(d, d, dtype=x.dtype) for _ in range(heads)]
            ns = [torch.zeros(d, dtype=x.dtype) for _ in range(heads)]
            ms = [torch.zeros((), dtype=x.dtype) for _ in range(heads)]
            last = steps if lengths is None else lengths[s]
            for t in range(last):
                z = w @ x[t, s] + b
                q, kk, v, o = (z[j * hidden:(j + 1) * hidden] for j in range(4))
                o = torch.sigmoid(o)
                for j in range(heads):
                    qj, kj, vj = (u[j * d:(j + 1) * d] for u in (q, kk, v))
                    kj = kj / math.sqrt(d)
                    it, ft = z[4 * hidden + j], z[4 * hidden + heads + j]
                    log_f = torch.nn.functional.logsigmoid(ft) if forget == "sigmoid" else ft
                    if stabilised:
                        m = torch.maximum(log_f + ms[j], it)
                        i_, f_ = torch.exp(it - m), torch.exp(log_f + ms[j] - m)
                        bound = torch.exp(-m)
                        ms[j] = m
                    else:
                        i_, f_, bound = torch.exp(it), torch.exp(log_f), torch.ones(())
                    cs[j] = f_ * cs[j] + i_ * torch.outer(vj, kj)
                    ns[j] = f_ * ns[j] + i_ * kj
                    den = torch.maximum((ns[j] @ qj).abs(), bound)
                    read = (cs[j] @ qj) / den
                    if norm == "head":
                        centred = read - read.mean()
                        read = centred / torch.sqrt((centred * centred).mean() + 1e-5)
                    out[t, s, j * d:(j + 1) * d] = o[j * d:(j + 1) * d] * read
            level_final.append((torch.stack(cs).flatten(), torch.cat(ns), torch.stack(ms)))
        finals.append(tuple(torch.stack(f) for f in zip(*level_final)))
        x = out
    return x, tuple(torch.stack(f) for f in zip(*finals))


def random_layer(cls=ChunkMLSTM, levels=1, forget="sigmoid", dtype=torch.float64, seed=0,
                 norm="head"):
    torch.manual_seed(seed)
    m = cls(E, H, HEADS, levels, forget=forget, norm=norm)
    with torch.no_grad():
        for p in m.parameters():
            p.uniform_(-0.5, 0.5)
    return m.to(dtype)


@pytest.mark.parametrize("forget,norm", [("sigmoid", "head"), ("exp", "head"),
                                         ("sigmoid", "none")])
@pytest.mark.parametrize("chunk", [3, 4, 64])
def test_the_chunkwise_form_is_the_papers_recurrence(forget, norm, chunk):
    m = random_layer(levels=2, forget=forget, norm=norm)
    m.chunk = chunk
    x = torch.randn(10, 3, E, dtype=torch.float64)
    lengths = [10, 6, 1]
    y, (c, n, mm) = m(x, lengths=torch.tensor(lengths))
    w = dict(m.named_parameters())
    want, (wc, wn, wm) = paper(w, x, 2, HEADS, forget, lengths, norm=norm)
    assert torch.allclose(y, want, atol=1e-12)
    assert torch.allclose(c, wc, atol=1e-12) and torch.allclose(n, wn, atol=1e-12)
    assert torch.allclose(mm, wm, atol=1e-12)
    # the stabiliser changes nothing: the plain equations give the same outputs, and the
    # stored memory times exp(m) is the plain one
    plain, (pc, pn, _) = paper(w, x, 2, HEADS, forget, lengths, stabilised=False, norm=norm)
    assert torch.allclose(y, plain, atol=1e-10)
    heads_c = c.view(2, 3, HEADS, -1) * mm.exp().unsqueeze(-1)
    assert torch.allclose(heads_c.flatten(2), pc, rtol=1e-9, atol=1e-12)


def test_every_gradient_matches_the_papers_recurrence():
    m = random_layer(levels=1)
    m.chunk = 4
    x = torch.randn(9, 2, E, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(9, 2, H, dtype=torch.float64)
    (m(x)[0] * weight).sum().backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
    x.grad = None
    w = dict(m.named_parameters())
    for p in w.values():
        p.grad = None
    (paper(w, x, 1, HEADS)[0] * weight).sum().backward()
    want = [x.grad] + [p.grad for p in m.parameters()]
    for a, b in zip(got, want):
        assert torch.allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("forget", ["sigmoid", "exp"])
@pytest.mark.parametrize("levels,lengths,chunk", [(1, None, 4), (2, [12, 7, 3, 0], 5),
                                                  (1, [12, 12, 1, 9], 64)])
def test_both_engines_agree_in_float32(forget, levels, lengths, chunk):
    """Outputs, final C, n and m, the input's, the carried state's and every weight's
    gradient within 1e-5, with resets mid-sequence and padded sequences."""
    diffs = compare("mLSTM", E, H, levels, steps=12, batch=4, heads=HEADS, forget_gate=forget,
                    lengths=lengths, settings={"chunk": chunk})
    names = {d.name for d in diffs}
    assert {"final C_T", "final n_T", "final m_T", "grad input", "grad initial C",
            "grad W_xc_l0", "grad b_c_l0"} <= names
    worst = max(diffs, key=lambda d: d.rel)
    assert worst.rel <= TOLERANCE, worst


def test_padded_steps_change_nothing():
    m = random_layer(dtype=torch.float32)
    m.chunk = 4
    x = torch.randn(7, 2, E)
    y, state = m(x)
    longer = torch.cat([x, torch.randn(5, 2, E)], 0)
    y2, state2 = m(longer, lengths=torch.tensor([7, 7]))
    assert torch.equal(y2[7:], torch.zeros_like(y2[7:]))
    assert torch.allclose(y2[:7], y, atol=1e-6)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(state, state2))


def test_weights_convert_both_ways_and_the_state_carries():
    a = random_layer(ChunkMLSTM, levels=2, dtype=torch.float32)
    b = UnrolledMLSTM(E, H, HEADS, 2)
    b.load_state_dict(a.state_dict())  # the same tensors: no conversion to make
    a2 = ChunkMLSTM(E, H, HEADS, 2)
    a2.load_state_dict(b.state_dict())
    x = torch.randn(8, 2, E)
    whole, _ = a2(x)
    first, state = b(x[:5])  # the unrolled net carries its state into the chunkwise form
    rest, _ = a(x[5:], state=state)
    assert torch.allclose(torch.cat([first, rest]), whole, atol=1e-6)


def test_a_reset_zeroes_the_state():
    m = random_layer(dtype=torch.float32)
    x = torch.randn(6, 2, E)
    cont = torch.ones(6, 2)
    cont[3, 0] = 0
    y, _ = m(x, cont)
    fresh, _ = m(x[3:, :1])
    assert torch.allclose(y[3:, :1], fresh, atol=1e-6)
    assert not torch.allclose(y[3:, 1:], m(x[3:, 1:])[0], atol=1e-4)


def graph(engine="CHUNK", lengths=False) -> Graph:
    return char_net("mLSTM", {"num_output": H, "num_heads": HEADS, "num_layers": 2,
                              "engine": engine}, steps=9, batch=3, embed=E, vocab=11)


def test_the_unrolled_net_is_one_unit_per_step():
    exp = expand(graph(), "rnn")
    counts = exp.counts()
    assert counts["MLSTM_UNIT"] == 2 * 9 and counts["INNER_PRODUCT"] == 2
    assert "HOLD" not in counts and exp.weights["L0/W_xc"] == (4 * H + 2 * HEADS, E)
    (unit,) = exp.step_nodes(1)
    assert unit.bottoms == ("L0/C_0", "L0/n_0", "L0/m_0", "L0/W_xc_x_1", "L0/cont_1")
    assert unit.tops == ("L0/C_1", "L0/n_1", "L0/m_1", "L0/h_1")
    assert exp.shapes["L0/C_0"] == (1, 3, H * H // HEADS) and exp.shapes["L1/m_0"] == (1, 3, 2)
    padded = expand_mlstm({"num_output": H, "num_heads": HEADS}, 4, 3, E, lengths=True)
    assert padded.counts()["HOLD"] == 4 and padded.step_nodes(2)[1].tops == ("C_2", "n_2", "m_2")


def test_the_net_builds_either_engine_from_the_same_checkpoint():
    g = graph()
    torch.manual_seed(0)
    chunk = Net(g)
    unrolled = Net(g, engine="caffe")
    assert type(chunk.layers["rnn"]) is ChunkMLSTM
    assert type(unrolled.layers["rnn"]) is UnrolledMLSTM
    unrolled.load_state_dict(chunk.state_dict())
    feeds = {"data.data": torch.randint(0, 11, (9, 3)), "data.label": torch.randint(0, 11, (9, 3))}
    state = chunk.initial_state(3)
    assert [tuple(s.shape) for s in state["rnn"]] == [(2, 3, 32), (2, 3, 8), (2, 3, 2)]
    a, b = chunk(feeds, state), unrolled(feeds, state)
    assert torch.allclose(chunk.loss(a), unrolled.loss(b), atol=1e-6)
    bias = chunk.layers["rnn"].b_c_l0.detach()
    assert bias[-HEADS:].tolist() == [3.0, 6.0]  # the forget gates start remembering


def test_the_parity_command_reads_the_layer():
    row = layer_parity(graph(), "rnn", steps=7, batch=3)
    assert row["ok"] and row["type"] == "mLSTM"


@pytest.mark.parametrize("engine,t_", [("CHUNK", 150), ("CHUNK", 40), ("CAFFE", 70)])
def test_the_memory_rule_matches_what_the_layer_keeps(engine, t_):
    """The rule against the tensors the layer keeps for backward, on the CPU."""
    from designer.graph.memory_layers import Context, rule
    n, e, h, heads = 2, 16, 32, 4
    cls = ChunkMLSTM if engine == "CHUNK" else UnrolledMLSTM
    m = cls(e, h, heads, 2)
    x = torch.randn(t_, n, e, requires_grad=True)
    saved = kept_bytes(m, x)
    params = {"num_output": h, "num_heads": heads, "num_layers": 2, "dropout_ratio": 0.0}
    ctx = Context("mLSTM", params, [((t_, n, e), "float")], [((t_, n, h), "float")], "cpu",
                  engine, 4)
    kept = rule(ctx, 0)
    assert abs(kept.extra - saved) / saved < 0.05


def test_the_graph_knows_the_chunk():
    from designer.cells.mlstm.arithmetic import CHUNK
    from designer.cells.mlstm.memory import MLSTM_CHUNK
    assert MLSTM_CHUNK == CHUNK


def test_the_benchmark_runs_at_small_sizes_on_the_cpu():
    import json
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_mlstm.py"
    run = subprocess.run([sys.executable, str(script), "--device", "cpu", "--small", "--json",
                          "--iters", "1", "--steps", "16"], capture_output=True, text=True,
                         timeout=300, cwd=script.parents[2])
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)["speed"]
    assert [r["T"] for r in rows] == [16] and rows[0]["unrolled_ms_step"] is not None
    assert abs(rows[0]["lstm_params"] - rows[0]["params"]) / rows[0]["params"] < 0.05


def test_the_head_norm_keeps_the_read_out_bounded_where_the_normaliser_vanishes():
    """A step whose query is nearly orthogonal to the normaliser n (|n^T q| far below |C q|,
    the bound exp(-m) small) reads out values thousands of times the memory's size with
    cell_norm 'none': what made training diverge. With 'head' every head's read-out has
    zero mean and unit variance over its d values, so no value passes sqrt(d)."""
    from designer.cells.mlstm.arithmetic import mlstm_unit
    d = H // HEADS
    torch.manual_seed(3)
    xw = torch.zeros(1, 4 * H + 2 * HEADS, dtype=torch.float64)
    q, k, v = (torch.randn(H, dtype=torch.float64) for _ in range(3))
    for j in range(HEADS):  # each head's key orthogonal to its query but for a sliver
        qj, kj = q[j * d:(j + 1) * d], k[j * d:(j + 1) * d]
        kj -= (kj @ qj) / (qj @ qj) * qj
        kj += 1e-9 * qj
    xw[0, :H], xw[0, H:2 * H], xw[0, 2 * H:3 * H] = q, k * math.sqrt(d), v
    xw[0, 3 * H:4 * H] = 30.0                        # o = 1
    xw[0, 4 * H:4 * H + HEADS] = 20.0                # i~ = 20
    xw[0, 4 * H + HEADS:] = 30.0                     # f = 1
    # a memory written at the same scale (m = 20) whose normaliser is still zero
    c0 = torch.randn(1, HEADS * d * d, dtype=torch.float64)
    n0 = torch.zeros(1, H, dtype=torch.float64)
    m0 = torch.full((1, HEADS), 20.0, dtype=torch.float64)
    *_, raw = mlstm_unit(c0, n0, m0, xw, heads=HEADS, norm="none")
    *_, normed = mlstm_unit(c0, n0, m0, xw, heads=HEADS, norm="head")
    assert raw.abs().max() > 1e3 * c0.abs().max()
    assert normed.abs().max() <= math.sqrt(d) * 1.0001
    per_head = normed.view(HEADS, d)
    assert torch.allclose(per_head.mean(-1), torch.zeros(HEADS, dtype=torch.float64), atol=1e-9)
