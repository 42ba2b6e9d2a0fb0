"""Our sLSTM and mLSTM against the public ``xlstm`` package (and its ``mlstm_kernels``) on the
same weights: outputs, final states and every gradient (both sides are autograd).

What is compared, and how the layouts map
-----------------------------------------
sLSTM: our :func:`slstm_layers` (one level) against ``xlstm``'s ``sLSTMCell`` on its
``vanilla`` backend (pure PyTorch), fed ``W_xc x`` as its input. The package's external
recurrent kernel is (heads, d_in, gate, d_out) and its bias (heads, gate, d); its vanilla
backend keeps them internally as (heads, 4d, d) rows [gate, d_out] and (4H,) [gate, head, d],
which are exactly our ``W_hc`` and ``b_c``; its input layout ``SBGNH`` is our ``W_xc x``
(gate blocks of H, the heads side by side); its state (4, N, H) is our (h, c, n, m). The
package has no exponential forget gate for the sLSTM (its pointwise functions are "slstm",
with logsigmoid(f~), and "lstm"), so ``exp_forget`` is not compared. Its first step from a
zero state takes m = i~ when *every* n is zero (``torch.all``), ours per unit; both give the
same numbers from a zero state and from a carried state with n > 0, which is what is compared
(where only some n are zero, h agrees but that unit's c, n and m differ by a common factor).
The gradients with respect to the initial c and n are compared from a carried state only: from
a zero state ours are zero (n = 0 is a fresh start, f' = 0), the package's are not (its f' is
exp(log f - i~) clamped at 1; c and n being zero, the outputs are the same).

mLSTM: our cell (:func:`mlstm_unit` step by step and :func:`chunk_level`, chunkwise; with
cell_norm "none" it computes the kernels' h~, with "head" the xlstm cell's
MultiHeadLayerNorm of it) against ``mlstm_kernels``' native PyTorch recurrent sequence,
chunkwise and parallel forms, and against ``xlstm``'s own
``recurrent_step_stabilized_simple``. The formulations differ in three places, none of which
changes h:

- the 1/sqrt(d) scale: ours (and ``xlstm.blocks.mlstm.backends``) divide k, ``mlstm_kernels``
  divides q. h is the same; ``mlstm_kernels``' C and n are sqrt(d) times ours.
- C's orientation: ours is per head (value, key) (C = v k^T), both packages' (key, value).
- eps: both packages divide by max(|n^T q|, exp(-m)) + eps (eps = 1e-6 by default), ours by
  max(|n^T q|, exp(-m)). With eps = 0 passed to the package the two agree to rounding; with the
  default eps, h differs by the factor den / (den + eps), a relative 1e-6 / den (den is at least
  exp(-m)): 4e-6 to 1.5e-5 on the inputs below (the largest i~ 3 to 6).

Our h also carries the output gate (h = sigmoid(o~) * h~); the packages' cells return h~, so
the test compares ours with sigmoid(o~) times theirs. The stabiliser m is the same on both
sides, on every form (the recurrent one, m_0 = 0 from a zero state).
"""
import math

import pytest
import torch
import torch.nn.functional as F

from designer.cells.mlstm.arithmetic import chunk_level, mlstm_unit
from designer.cells.slstm.arithmetic import slstm_layers

TOL64 = 1e-10  # float64: both sides do the same arithmetic in a different order
TOL32 = 1e-5


def rel(a, b):
    """max|a - b| / max|b| (an element-wise ratio would divide by values zero by chance)."""
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-300)).item()


def check_all(ours, theirs, tol):
    worst = {name: rel(ours[name], theirs[name]) for name in ours}
    assert max(worst.values()) < tol, worst
    return worst


def grads(outputs, probes, wrt):
    """Gradients of sum(output * probe) with respect to ``wrt`` (a dict of tensors)."""
    loss = sum((o * p).sum() for o, p in zip(outputs, probes))
    return dict(zip(wrt, torch.autograd.grad(loss, list(wrt.values()))))


# ------------------------------------------------------------------------------- sLSTM --
def slstm_weights(e, hidden, heads, dtype, gen):
    d = hidden // heads
    return {
        "W_xc_l0": torch.randn(4 * hidden, e, generator=gen, dtype=dtype) / math.sqrt(e),
        "b_c_l0": torch.randn(4 * hidden, generator=gen, dtype=dtype),
        "W_hc_l0": torch.randn(heads, 4 * d, d, generator=gen, dtype=dtype) / math.sqrt(d),
    }


def package_slstm_cell(weights, heads):
    """xlstm's vanilla sLSTMCell holding our weights, set through its external layout."""
    cell_mod = pytest.importorskip("xlstm.blocks.slstm.cell")
    w_hc, b_c = weights["W_hc_l0"], weights["b_c_l0"]
    d = w_hc.shape[2]
    hidden = heads * d
    cfg = cell_mod.sLSTMCellConfig(hidden_size=hidden, num_heads=heads, backend="vanilla",
                                   function="slstm", dtype="float32", input_shape="SBGNH",
                                   output_shape="SBH", enable_automatic_mixed_precision=False)
    cell = cell_mod.sLSTMCell(cfg).to(w_hc.dtype)
    # external (heads, d_in, gate, d_out) <- ours (heads, [gate, d_out], d_in)
    cell.recurrent_kernel[...] = w_hc.detach().view(heads, 4, d, d).permute(0, 3, 1, 2)
    # external (heads, gate, d) <- ours (4H,) [gate, head, d]
    cell.bias[...] = b_c.detach().view(4, heads, d).permute(1, 0, 2)
    return cell


def carried_slstm_state(n, hidden, dtype, gen):
    """A state as a run leaves it: n >= 1 after any step, m of either sign."""
    h = torch.randn(n, hidden, generator=gen, dtype=dtype).tanh()
    c = torch.randn(n, hidden, generator=gen, dtype=dtype) * 2
    nn_ = 1 + 3 * torch.rand(n, hidden, generator=gen, dtype=dtype)
    m = torch.randn(n, hidden, generator=gen, dtype=dtype)
    return h, c, nn_, m


@pytest.mark.parametrize("dtype,tol", [(torch.float64, TOL64), (torch.float32, TOL32)])
@pytest.mark.parametrize("carried", [False, True])
@pytest.mark.parametrize("heads", [2, 4])
def test_slstm_matches_the_xlstm_vanilla_cell(heads, carried, dtype, tol):
    gen = torch.Generator().manual_seed(100 * heads + carried)
    t_, n, e, hidden = 6, 3, 5, 8 * heads // 2
    weights = {k: v.requires_grad_() for k, v in
               slstm_weights(e, hidden, heads, dtype, gen).items()}
    x = torch.randn(t_, n, e, generator=gen, dtype=dtype, requires_grad=True)
    if carried:
        state = tuple(s.requires_grad_() for s in carried_slstm_state(n, hidden, dtype, gen))
    else:
        state = tuple(torch.zeros(n, hidden, dtype=dtype) for _ in range(4))

    cell = package_slstm_cell(weights, heads)
    # the vanilla backend's internal layout is ours, tensor for tensor
    assert torch.equal(cell._recurrent_kernel, weights["W_hc_l0"].detach())
    assert torch.equal(cell._bias, weights["b_c_l0"].detach())

    y, last = slstm_layers(weights, x, tuple(s.unsqueeze(0) for s in state), 1)
    y_p, last_p = cell(F.linear(x, weights["W_xc_l0"]), torch.stack(state))
    names = ("y", "h_T", "c_T", "n_T", "m_T")
    ours = dict(zip(names, (y, *(s[0] for s in last))))
    theirs = dict(zip(names, (y_p, *last_p)))
    check_all(ours, theirs, tol)

    probes = [torch.randn(v.shape, generator=gen, dtype=dtype) for v in ours.values()]
    probes[-1] = probes[-1] * 0  # m is the stabiliser: nothing downstream reads its value
    wrt = {"x": x, "W_xc": weights["W_xc_l0"]}
    if carried:  # from a zero state the package lets f' reach the zero c (clamped at 1), we cut
        wrt.update(zip(("h0", "c0", "n0", "m0"), state))
    g_ours = grads(ours.values(), probes, {**wrt, "b_c": weights["b_c_l0"],
                                           "W_hc": weights["W_hc_l0"]})
    g_theirs = grads(theirs.values(), probes, {**wrt, "b_c": cell._bias_,
                                               "W_hc": cell._recurrent_kernel_})
    check_all(g_ours, g_theirs, tol)


# ------------------------------------------------------------------------------- mLSTM --
def mlstm_inputs(t_, n, heads, d, dtype, gen):
    """Leaf tensors q, k, v (T, N, NH, d), o~ (T, N, H), i~, f~ (T, N, NH)."""
    def r(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=gen, dtype=dtype) * scale + shift).requires_grad_()
    q, k, v = (r(t_, n, heads, d) for _ in range(3))
    o = r(t_, n, heads * d)
    i = r(t_, n, heads, scale=2.0)
    f = r(t_, n, heads, scale=2.0, shift=2.0)
    return {"q": q, "k": k, "v": v, "o": o, "i": i, "f": f}


def our_xw(z):
    """Our input transform's blocks [q, k, v, o, i~, f~] from the leaf tensors."""
    return torch.cat([z["q"].flatten(-2), z["k"].flatten(-2), z["v"].flatten(-2), z["o"],
                      z["i"], z["f"]], -1)


def carried_mlstm_state(n, heads, d, dtype, gen):
    """Our state layout: C (N, NH*d*d) per head [value, key], n (N, H), m (N, NH)."""
    c = torch.randn(n, heads * d * d, generator=gen, dtype=dtype).requires_grad_()
    nn_ = torch.randn(n, heads * d, generator=gen, dtype=dtype).requires_grad_()
    m = torch.randn(n, heads, generator=gen, dtype=dtype).requires_grad_()
    return c, nn_, m


def zero_mlstm_state(n, heads, d, dtype):
    return (torch.zeros(n, heads * d * d, dtype=dtype), torch.zeros(n, heads * d, dtype=dtype),
            torch.zeros(n, heads, dtype=dtype))


def to_package_state(state, heads, d, k_scale):
    """Ours -> (C (N, NH, d_key, d_value), n (N, NH, d_key), m (N, NH, 1)); ``k_scale`` is
    sqrt(d) for mlstm_kernels (which scales q, not k), 1 for xlstm's backends."""
    c, nn_, m = state
    n = c.shape[0]
    return (c.view(n, heads, d, d).transpose(-1, -2) * k_scale,
            nn_.view(n, heads, d) * k_scale, m.unsqueeze(-1))


def from_package_state(state, k_scale):
    c, nn_, m = state
    n = c.shape[0]
    return c.transpose(-1, -2).reshape(n, -1) / k_scale, nn_.reshape(n, -1) / k_scale, \
        m.reshape(n, -1)


def bnsd(t):
    """(T, N, NH, ...) -> (N, NH, T, ...), the packages' layout."""
    return t.movedim(0, 2)


def ours_stepped(z, state, heads, norm="none"):
    xw = our_xw(z)
    hs = []
    c, nn_, m = state
    for t in range(xw.shape[0]):
        c, nn_, m, h = mlstm_unit(c, nn_, m, xw[t], heads=heads, norm=norm)
        hs.append(h)
    return torch.stack(hs), (c, nn_, m)


def gated(h_tilde, z):
    """sigmoid(o~) * the packages' h~ (N, NH, T, d) -> (T, N, H)."""
    t_, n = z["o"].shape[:2]
    return torch.sigmoid(z["o"]) * h_tilde.movedim(2, 0).reshape(t_, n, -1)


def compare_mlstm(ours, theirs, z, state, carried, tol):
    """Outputs, final states and the gradients of a random function of them."""
    names = ("h", "C_T", "n_T", "m_T")
    ours, theirs = dict(zip(names, (ours[0], *ours[1]))), dict(zip(names, (theirs[0],
                                                                           *theirs[1])))
    worst = check_all(ours, theirs, tol)
    gen = torch.Generator().manual_seed(7)
    probes = [torch.randn(v.shape, generator=gen, dtype=v.dtype) for v in ours.values()]
    probes[-1] = probes[-1] * 0
    wrt = dict(z)
    if carried:
        wrt.update(zip(("C0", "n0", "m0"), state))
    worst.update(check_all(grads(ours.values(), probes, wrt),
                           grads(theirs.values(), probes, wrt), tol))
    return worst


def mlstm_case(seed: int, steps: int, dtype, carried: bool, n: int = 2, heads: int = 2,
               d: int = 4):
    """Random inputs (`mlstm_inputs`) and a starting state, carried or zero."""
    gen = torch.Generator().manual_seed(seed)
    z = mlstm_inputs(steps, n, heads, d, dtype, gen)
    state = (carried_mlstm_state(n, heads, d, dtype, gen) if carried
             else zero_mlstm_state(n, heads, d, dtype))
    return z, state


CASES = [(torch.float64, TOL64, False), (torch.float64, TOL64, True),
         (torch.float32, TOL32, True)]


@pytest.mark.parametrize("norm", ["none", "head"])
@pytest.mark.parametrize("dtype,tol,carried", CASES)
def test_mlstm_step_matches_mlstm_kernels_recurrent(dtype, tol, carried, norm):
    """With cell_norm 'none', the kernels' h~ gated; with 'head', the xlstm package's
    mLSTMCell output norm of it (MultiHeadLayerNorm, a group norm with one group a head, eps
    1e-5) as it starts (its scale 1, no bias), before the output gate."""
    native = pytest.importorskip("mlstm_kernels.torch.recurrent.native_sequence")
    ln = pytest.importorskip("xlstm.components.ln") if norm == "head" else None
    t_, heads, d = 7, 2, 4
    z, state = mlstm_case(11 + carried, t_, dtype, carried)
    ours = ours_stepped(z, state, heads, norm=norm)
    h, last = native.mlstm_recurrent_sequence__native_fw(
        *(bnsd(z[a]) for a in "qkvif"), *to_package_state(state, heads, d, math.sqrt(d)),
        return_last_states=True, eps=0.0, dtype_state=dtype)
    if ln is not None:
        h = ln.MultiHeadLayerNorm(heads * d, weight=True, bias=False).to(dtype)(h)
    compare_mlstm(ours, (gated(h, z), from_package_state(last, math.sqrt(d))), z, state,
                  carried, tol)


@pytest.mark.parametrize("dtype,tol,carried", CASES)
def test_mlstm_step_matches_xlstm_backend_step(dtype, tol, carried):
    backends = pytest.importorskip("xlstm.blocks.mlstm.backends")
    t_, heads, d = 7, 2, 4
    z, state = mlstm_case(21 + carried, t_, dtype, carried)
    ours = ours_stepped(z, state, heads)
    c, nn_, m = to_package_state(state, heads, d, 1.0)  # the same k scale as ours
    nn_, m = nn_.unsqueeze(-1), m.unsqueeze(-1)  # (N, NH, d, 1), (N, NH, 1, 1)
    hs = []
    for t in range(t_):  # the step squeezes its q, k, v in place: give it views of its own
        step = [z[a][t].unsqueeze(2).clone() for a in "qkv"]  # (N, NH, 1, d)
        gates = [z[a][t][..., None, None] for a in "if"]
        h, (c, nn_, m) = backends.recurrent_step_stabilized_simple(c, nn_, m, *step, *gates,
                                                                   eps=0.0)
        hs.append(h)
    theirs = (gated(torch.cat(hs, 2), z), from_package_state((c, nn_, m), 1.0))
    compare_mlstm(ours, theirs, z, state, carried, tol)


@pytest.mark.parametrize("chunk", [4, 64])
@pytest.mark.parametrize("dtype,tol,carried", CASES)
def test_mlstm_chunks_match_mlstm_kernels_chunkwise(dtype, tol, carried, chunk):
    chunkwise = pytest.importorskip("mlstm_kernels.torch.chunkwise.native")
    t_, heads, d = 12, 2, 4
    z, state = mlstm_case(31 + carried, t_, dtype, carried)
    ours = chunk_level(our_xw(z), state, heads, chunk=chunk, norm="none")
    h, last = chunkwise.mlstm_chunkwise__native_autograd(
        *(bnsd(z[a]) for a in "qkvif"), *to_package_state(state, heads, d, math.sqrt(d)),
        return_last_states=True, eps=0.0, chunk_size=4)
    compare_mlstm(ours, (gated(h, z), from_package_state(last, math.sqrt(d))), z, state,
                  carried, tol)


def test_mlstm_chunks_match_mlstm_kernels_parallel_from_zero():
    parallel = pytest.importorskip("mlstm_kernels.torch.parallel.native")
    gen = torch.Generator().manual_seed(41)
    t_, n, heads, d = 9, 2, 3, 4
    z = mlstm_inputs(t_, n, heads, d, torch.float64, gen)
    state = zero_mlstm_state(n, heads, d, torch.float64)
    h, _ = chunk_level(our_xw(z), state, heads, chunk=4, norm="none")
    h_p = parallel.mlstm_parallel__native_autograd(*(bnsd(z[a]) for a in "qkvif"), eps=0.0)
    gen = torch.Generator().manual_seed(7)
    probe = torch.randn(h.shape, generator=gen, dtype=h.dtype)
    check_all({"h": h}, {"h": gated(h_p, z)}, TOL64)
    check_all(grads([h], [probe], z), grads([gated(h_p, z)], [probe], z), TOL64)


def test_mlstm_the_packages_default_eps_is_a_relative_1e6_over_the_denominator():
    """With mlstm_kernels' default eps (1e-6 added to the denominator) h is ours times
    den / (den + eps): a relative difference of at most eps / exp(-max m)."""
    native = pytest.importorskip("mlstm_kernels.torch.recurrent.native_sequence")
    gen = torch.Generator().manual_seed(51)
    t_, n, heads, d = 7, 2, 2, 4
    z = mlstm_inputs(t_, n, heads, d, torch.float64, gen)
    state = zero_mlstm_state(n, heads, d, torch.float64)
    h, (_, _, m) = ours_stepped(z, state, heads)
    h_p = native.mlstm_recurrent_sequence__native_fw(*(bnsd(z[a]) for a in "qkvif"),
                                                     dtype_state=torch.float64)
    bound = 1e-6 * math.exp(max(0.0, z["i"].max().item()))
    diff = rel(h, gated(h_p, z))
    assert 0 < diff < bound
