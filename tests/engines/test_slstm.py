"""The sLSTM on both engines: the paper's equations, engine parity (outputs, final states and
every gradient), gradcheck, the state carried step by step, restarts, checkpoints across
engines, the unrolled net's nodes."""
import math

import pytest
import torch

from designer.engines.build import Net
from designer.engines.convert import convert_state_dict
from designer.engines.expansion import expand_params
from designer.engines.parity import TOLERANCE, compare, spread_lengths
from designer.engines.slstm import FusedSLSTM, fill_slstm
from designer.engines.slstm_cell import KernelGradUnit, slstm_layers, slstm_unit
from designer.engines.unrolled import UnrolledRecurrent
from designer.graph import Graph


# ------------------------------------------------------------------ the paper, as written --
def sig(v):
    return 1.0 / (1.0 + torch.exp(-v))


def paper(weights, x, state, levels, both, heads, exp_forget=False, lengths=None):
    """The stabilised sLSTM of Beck et al. (2024), eqs. (8)-(17) and (49)-(51), one sequence,
    one head and one step at a time: z = tanh(z~), i = exp(i~), f = sigmoid(f~) (or exp(f~)),
    o = sigmoid(o~), each pre-activation w x + r h_prev + b with r the head's own block;
    m = max(log f + m_prev, log i) (log i where n_prev = 0), i' = exp(log i - m), f' =
    exp(log f + m_prev - m), c = f' c + i' z, n = f' n + i', h = o c / n. Padded steps are
    skipped; the backward direction reads each sequence's valid steps last to first."""
    t_, n = x.shape[0], x.shape[1]
    dirs = 2 if both else 1
    finals = {}
    for k in range(levels):
        ys = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            w, b, r = (weights[f"{a}_l{k}{sfx}"] for a in ("W_xc", "b_c", "W_hc"))
            hid = w.shape[0] // 4
            dh = hid // heads
            chain = k * dirs + d
            cols = []
            for s in range(n):
                valid = t_ if lengths is None else int(lengths[s])
                h, c, nn_, m = (st[chain, s] for st in state)
                out = [torch.zeros(hid, dtype=x.dtype)] * t_
                for t in (range(valid - 1, -1, -1) if d == 1 else range(valid)):
                    wx = w @ x[t, s] + b
                    hs, cs, ns, ms = [], [], [], []
                    for q in range(heads):
                        u = slice(q * dh, (q + 1) * dh)
                        rec = r[q] @ h[u]  # rows [i, f, z, o] of dh each
                        pre = [wx[g * hid + q * dh:g * hid + (q + 1) * dh] +
                               rec[g * dh:(g + 1) * dh] for g in range(4)]
                        log_i = pre[0]
                        log_f = pre[1] if exp_forget else torch.log(sig(pre[1]))
                        fresh = nn_[u] == 0
                        m_new = torch.where(fresh, log_i, torch.maximum(log_f + m[u], log_i))
                        i_p = torch.exp(log_i - m_new)
                        f_p = torch.where(fresh, 0.0, torch.exp(log_f + m[u] - m_new))
                        c_new = f_p * c[u] + i_p * torch.tanh(pre[2])
                        n_new = f_p * nn_[u] + i_p
                        hs.append(sig(pre[3]) * c_new / n_new)
                        cs.append(c_new), ns.append(n_new), ms.append(m_new)
                    h, c, nn_, m = (torch.cat(v) for v in (hs, cs, ns, ms))
                    out[t] = h
                cols.append(torch.stack(out))
                finals[chain, s] = (h, c, nn_, m)
            ys.append(torch.stack(cols, 1))
        x = torch.cat(ys, -1)
    final = tuple(torch.stack([torch.stack([finals[ch, s][j] for s in range(n)])
                               for ch in range(levels * dirs)]) for j in range(4))
    return x, final


def rel(a, b):
    return ((a.double() - b.double()).abs().max() / b.double().abs().max()).item()


def start_state(chains, n, h, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = [torch.randn(chains, n, h, generator=g) * 0.5 for _ in range(4)]
    s[2] = s[2].abs() + 1.0  # a normaliser the layer makes is >= 1
    return s


@pytest.mark.parametrize("levels,both,padded,forget", [
    (1, False, False, "sigmoid"), (2, False, True, "exp"), (1, True, True, "sigmoid"),
    (2, True, False, "exp")])
def test_both_engines_compute_the_papers_equations(levels, both, padded, forget):
    torch.manual_seed(levels + 2 * both + 4 * padded)
    t_, n, e, h, heads = 7, 3, 5, 6, 2
    fused = FusedSLSTM(e, h, heads, levels, bidirectional=both, forget_gate=forget)
    fill_slstm(fused, "uniform", 0.1)
    unrolled = UnrolledRecurrent("sLSTM", e, h, levels, bidirectional=both, heads=heads,
                                 forget_gate=forget)
    unrolled.load_state_dict(fused.state_dict())  # the same tensors, as they are
    chains = levels * (2 if both else 1)
    x = torch.randn(t_, n, e)
    s0 = start_state(chains, n, h)
    s0[1][0, 2] = s0[2][0, 2] = s0[3][0, 2] = 0.0  # one sequence starts from scratch (n = 0)
    lengths = torch.tensor([7, 3, 0]) if padded else None
    weight = torch.randn(t_, n, h * (2 if both else 1))

    def run(fn, dtype):
        xi = x.to(dtype).clone().requires_grad_()
        si = tuple(s.to(dtype).clone().requires_grad_() for s in s0)
        y, final = fn(xi, si)
        ((y * weight.to(dtype)).sum() + sum((f * f).sum() for f in final)).backward()
        return (y, *final, xi.grad, *(s.grad for s in si))

    ref_w = {k: v.detach().double().requires_grad_() for k, v in fused.state_dict().items()}
    ref = run(lambda xi, si: paper(ref_w, xi, si, levels, both, heads, forget == "exp",
                                   lengths), torch.double)
    names = ("output", "h_T", "c_T", "n_T", "m_T", "grad x", "grad h0", "grad c0", "grad n0",
             "grad m0")
    for module in (fused, unrolled):
        got = run(lambda xi, si: module(xi, None, si, lengths), torch.float32)
        for a, b, what in zip(got, ref, names):
            if b.abs().max() > 0:
                assert rel(a, b) < 1e-5, (type(module).__name__, what, rel(a, b))
            else:
                assert a.abs().max() == 0, (type(module).__name__, what)
        for name, p in module.named_parameters():
            assert rel(p.grad, ref_w[name].grad) < 1e-5, (type(module).__name__, name)
        module.zero_grad()


@pytest.mark.parametrize("levels,resets,forget", [(1, False, "sigmoid"), (1, True, "exp"),
                                                  (3, True, "sigmoid")])
def test_the_fused_and_the_unrolled_engine_agree_in_float32(levels, resets, forget):
    diffs = compare("sLSTM", input_size=7, hidden=16, levels=levels, steps=30, batch=4,
                    resets=resets, seed=levels, heads=4, forget_gate=forget)
    worst = max(diffs, key=lambda d: d.rel)
    assert worst.rel <= TOLERANCE, worst
    names = {d.name for d in diffs}
    assert {"output", "final h_T", "final c_T", "final n_T", "final m_T", "grad input",
            "grad initial n", "grad initial m", "grad W_xc_l0", "grad b_c_l0",
            "grad W_hc_l0"} <= names


@pytest.mark.parametrize("levels,both", [(1, True), (2, False), (2, True)])
def test_parity_with_padded_lengths_bidirectional_and_stacked(levels, both):
    lengths = spread_lengths(17, 5, seed=levels)
    lengths[0] = 0  # a sequence with no step: no output, its state as it came in
    diffs = compare("sLSTM", 6, 8, levels, 17, 5, bidirectional=both, lengths=lengths,
                    heads=2)
    assert max(d.rel for d in diffs) <= TOLERANCE, max(diffs, key=lambda d: d.rel)
    padding = [d for d in diffs if "at padding" in d.name]
    assert len(padding) == 4 and all(d.abs == 0.0 for d in padding)


def test_the_fused_recurrence_passes_gradcheck_in_float64():
    torch.manual_seed(3)
    t_, n, e, h, heads = 3, 2, 2, 2, 2
    names = ("W_xc_l0", "b_c_l0", "W_hc_l0", "W_xc_l0_reverse", "b_c_l0_reverse",
             "W_hc_l0_reverse")
    shapes = ((4 * h, e), (4 * h,), (heads, 4 * h // heads, h // heads)) * 2
    tensors = [(torch.randn(s, dtype=torch.double) * 0.5).requires_grad_() for s in shapes]
    x = torch.randn(t_, n, e, dtype=torch.double, requires_grad=True)
    s0 = [s.double().requires_grad_() for s in start_state(2, n, h)]
    lengths = torch.tensor([3, 1])

    def fn(x, *rest):
        ws, st = rest[:6], rest[6:]
        y, final = slstm_layers(dict(zip(names, ws)), x, st, 1, 2, lengths=lengths)
        return (y,) + final
    assert torch.autograd.gradcheck(fn, (x, *tensors, *s0))


@pytest.mark.parametrize("forget", ["sigmoid", "exp"])
def test_the_step_loops_written_out_gradient_is_autograds_through_the_unit(forget):
    """The FUSED engine's step loop takes the persistent kernels' gradient of a step, written
    out: in float64 it is autograd's through the unit the unrolled net runs, for a state that
    starts fresh (n = 0) and where the stabiliser's two candidates tie."""
    torch.manual_seed(7)
    pre = torch.randn(5, 3, 16, dtype=torch.double)
    c, n, m = (torch.randn(5, 3, 4, dtype=torch.double) for _ in range(3))
    n = n.abs() + 0.5
    c[0] = n[0] = m[0] = 0.0  # fresh
    i_t, f_t = pre[1, :, :4], pre[1, :, 4:8]
    m[1] = i_t - (f_t if forget == "exp" else torch.nn.functional.logsigmoid(f_t))  # ties
    grads = []
    for unit in (slstm_unit, KernelGradUnit.apply):
        args = [t.clone().requires_grad_() for t in (pre, c, n, m)]
        out = unit(*args, forget == "exp")
        g = torch.Generator().manual_seed(1)
        sum((t * torch.randn(t.shape, generator=g, dtype=t.dtype)).sum() for t in out).backward()
        grads.append([a.grad for a in args])
    for name, ours, autograd in zip(("pre", "c", "n", "m"), *grads):
        assert (ours - autograd).abs().max() < 1e-13, name


@pytest.mark.parametrize("cls", ["fused", "unrolled"])
def test_the_state_carries_step_by_step_as_over_the_whole_sequence(cls):
    """Generation feeds one step at a time and carries (h, c, n, m): the same as the whole
    sequence at once, restarts included."""
    torch.manual_seed(5)
    m = FusedSLSTM(3, 4, 2, 2) if cls == "fused" else \
        UnrolledRecurrent("sLSTM", 3, 4, 2, heads=2)
    fill_slstm(m, "uniform", 0.0)
    x = torch.randn(7, 2, 3)
    cont = torch.ones(7, 2)
    cont[4, 1] = 0
    with torch.no_grad():
        whole, final = m(x, cont)
        state, ys = None, []
        for t in range(7):
            y, state = m(x[t:t + 1], cont[t:t + 1], state)
            ys.append(y)
    assert len(state) == 4
    assert torch.allclose(torch.cat(ys), whole, atol=1e-6)
    for a, b in zip(state, final):
        assert torch.allclose(a, b, atol=1e-6)


def test_a_restart_forgets_the_past_and_one_at_a_padded_step_changes_nothing():
    torch.manual_seed(6)
    m = FusedSLSTM(3, 4, 2)
    fill_slstm(m, "uniform", 0.0)
    x, cont = torch.randn(8, 2, 3), torch.ones(8, 2)
    cont[4] = 0
    s0 = tuple(start_state(1, 2, 4))
    y1, _ = m(x, cont, s0)
    x2 = x.clone()
    x2[:4] = torch.randn(4, 2, 3)
    y2, _ = m(x2, cont, s0)
    assert torch.allclose(y1[4:], y2[4:], atol=1e-6) and not torch.allclose(y1[:4], y2[:4])
    lengths = torch.tensor([8, 3])
    y3, f3 = m(x, cont, s0, lengths)
    y4, f4 = m(x, torch.ones(8, 2), s0, lengths)  # sequence 1's restart falls in its padding
    assert torch.equal(y3[:, 1], y4[:, 1]) and torch.equal(f3[3][:, 1], f4[3][:, 1])


def test_a_fresh_start_is_stable_for_very_negative_input_gates():
    """n = 0 at the start: m = log i, so i' = 1 however small i is (no 0 / 0)."""
    m = FusedSLSTM(2, 4, 1)
    fill_slstm(m, "uniform", 0.0)
    with torch.no_grad():
        m.b_c_l0[:4] = -200.0  # i = exp(-200): below float32's smallest number
    x = torch.randn(5, 2, 2, requires_grad=True)
    y, final = m(x)
    y.sum().backward()
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    assert (final[2] >= 1).all()


def test_the_unrolled_net_shows_each_step_with_its_head_product():
    exp = expand_params("sLSTM", {"num_output": 8, "num_heads": 4, "num_layers": 2}, 3, 2, 5)
    counts = exp.counts()
    assert counts["HEAD_INNER_PRODUCT"] == 6 and counts["SLSTM_UNIT"] == 6
    assert counts["SCALE"] == 6 and counts["ELTWISE"] == 6
    assert exp.weights["L0/W_hc"] == (4, 8, 2) and exp.weights["L1/W_xc"] == (32, 8)
    unit = exp.step_nodes(2, level=1)[-1]
    assert unit.type == "SLSTM_UNIT" and len(unit.tops) == 4
    assert len(exp.outputs) == 1 + 2 * 4  # y, then (h, c, n, m) per level


def slstm_net(engine: str = "FUSED", heads: int = 2) -> Graph:
    """A tiny char net: data -> Embed -> sLSTM (two levels, following cont) -> InnerProduct
    -> loss."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 10, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, "input_dim": 12})
    g.add_layer("sLSTM", "rnn", {"num_output": 8, "num_heads": heads, "num_layers": 2,
                                 "engine": engine})
    g.add_layer("InnerProduct", "ip1", {"num_output": 12, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for a, b in [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("data.cont", "rnn.cont"),
                 ("rnn.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    g.pin_dims({"V": 12})
    return g


def feeds(seed=0):
    gen = torch.Generator().manual_seed(seed)
    data = torch.randint(0, 12, (10, 4), generator=gen)
    cont = torch.ones(10, 4)
    cont[0] = 0
    cont[6, 2] = 0
    return {"data.data": data, "data.cont": cont, "data.label": data.roll(-1, 0)}


def test_a_checkpoint_of_either_engine_loads_into_the_other_as_it_is():
    g = slstm_net()
    torch.manual_seed(0)
    fused, unrolled = Net(g), Net(g, "caffe")
    assert type(fused.layers["rnn"]) is FusedSLSTM and fused.engines["rnn"] == "FUSED"
    assert type(unrolled.layers["rnn"]) is UnrolledRecurrent
    state = fused.state_dict()
    layers = {"rnn": ("sLSTM", 2)}
    assert convert_state_dict(state, layers, {"rnn": "FUSED"}, {"rnn": "CAFFE"}).keys() == \
        state.keys()
    unrolled.load_state_dict(state)  # strict: the same keys and shapes
    with torch.no_grad():
        a, b = fused(feeds()), unrolled(feeds())
    assert rel(b.blobs[("ip1", 0)], a.blobs[("ip1", 0)]) < 1e-5
    for i in range(4):
        assert rel(b.state["rnn"][i], a.state["rnn"][i]) < 1e-5
    fused.load_state_dict(unrolled.state_dict())


@pytest.mark.parametrize("engine", ["auto", "cudnn", "caffe", "persist"])
def test_every_engine_choice_runs_it(engine):
    net = Net(slstm_net(), engine)
    assert net.engines["rnn"] == ("CAFFE" if engine == "caffe" else "FUSED")
    out = net(feeds())
    out.blobs[("loss", 0)].backward()
    assert all(p.grad is not None for p in net.parameters())


@pytest.mark.parametrize("engine", ["cudnn", "caffe"])
def test_the_nets_initial_state_is_the_four_states_it_carries(engine):
    """What a stream of batches starts from (``Net.initial_state``): h, c, n and m, each of
    the layer's levels, taken and given back by a step."""
    net = Net(slstm_net(), engine)
    start = net.initial_state(4)["rnn"]
    assert len(start) == 4 and all(s.shape == (2, 4, 8) and not s.any() for s in start)
    with torch.no_grad():
        carried = net(feeds(), net.initial_state(4)).state["rnn"]
        fresh = net(feeds()).state["rnn"]
    assert len(carried) == 4 and all(torch.equal(a, b) for a, b in zip(carried, fresh))


def test_the_uniform_filler_reads_each_heads_size():
    m = FusedSLSTM(5, 16, 4)
    fill_slstm(m, "uniform", 0.5)
    assert m.W_hc_l0.abs().max() <= 1 / math.sqrt(4) and m.W_hc_l0.abs().max() > 0.3
    assert m.W_xc_l0.abs().max() <= 1 / math.sqrt(16) and (m.b_c_l0 == 0.5).all()


def test_the_powerlaw_forget_bias_starts_as_the_xlstm_code_and_alike_on_both_engines():
    """``forget_bias`` "powerlaw": each head's forget-gate biases from +5 down to -7 with the
    exponent 0.3 + 1.3 level / (levels - 1) (xlstm's "powerlaw_blockdependent"), the other
    gates at bias_filler; the same tensors on both engines; "constant" leaves them all there."""
    g = slstm_net(heads=2)
    g.set_param("rnn", "forget_bias", "powerlaw")
    g.set_param("rnn", "bias_filler", 0.25)
    torch.manual_seed(0)
    fused = Net(g).layers["rnn"]
    torch.manual_seed(0)
    unrolled = Net(g, "caffe").layers["rnn"]
    h, d = 8, 4
    for k in range(2):
        b = fused.state_dict()[f"b_c_l{k}"]
        assert torch.equal(b, unrolled.state_dict()[f"b_c_l{k}"])
        j = torch.arange(d, dtype=torch.float64) / (d - 1)
        head = -(-5.0 + 12.0 * j ** (0.3 + 1.3 * k))
        assert torch.allclose(b[h:2 * h].double(), head.repeat(2), atol=1e-6)
        assert b[h] == 5.0 and b[2 * h - 1] == -7.0
        assert torch.all(b[:h] == 0.25) and torch.all(b[2 * h:] == 0.25)
    g.set_param("rnn", "forget_bias", "constant")
    assert torch.all(Net(g).layers["rnn"].state_dict()["b_c_l1"] == 0.25)
