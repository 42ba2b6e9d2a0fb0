"""Parity between the engines: the same weights give the same outputs, states and gradients.

For a recurrent layer, a CUDNN module (for MinGRU and MinLSTM: a SCAN module, the parallel scan;
for the sLSTM: a FUSED module; for the mLSTM: a CHUNK module, the chunkwise form) is built with
random weights, the weights are converted to the CAFFE (unrolled) module, both run forward and
backward on the same random input, continuation flags (with resets in the middle of the
sequence; none for a bidirectional layer, which takes no ``cont``), lengths (padded sequences,
when asked) and initial state, and every difference is measured. Relative
differences are ``max|a - b| / max|b|`` per tensor (an element-wise ratio would divide by
values that are zero by chance). With lengths, each engine's outputs and input gradients at
the padded steps are also measured against zero.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from designer.graph import registry

from designer.engines.convert import convert_layer, cudnn_to_caffe
from designer.engines.expansion import GATES
from designer.cells.minimal.engines.scan import ScanRecurrent
from designer.cells.mlstm.engines.chunk import ChunkMLSTM, UnrolledMLSTM
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.cells.slstm.engines.fused import FusedSLSTM
from designer.engines.unrolled import UnrolledRecurrent

TOLERANCE = 1e-5
STATE_NAMES = ("h_T", "c_T", "n_T", "m_T")  # the sLSTM's; an LSTM has the first two


@dataclass
class Diff:
    """Largest absolute and relative difference of one quantity."""

    name: str
    abs: float
    rel: float


def _diff(name: str, a: torch.Tensor, b: torch.Tensor) -> Diff:
    a, b = a.detach().double(), b.detach().double()
    if a.numel() == 0:
        return Diff(name, 0.0, 0.0)
    d = (a - b).abs().max().item()
    scale = b.abs().max().item()
    return Diff(name, d, d / scale if scale > 0 else d)


def _grads_as_caffe(kind: str, grads: dict, levels: int) -> dict:
    """torch parameter gradients in the Caffe layout.

    The weight conversion applies with one change: each torch bias gradient already equals
    db_c (b_c = b_ih + b_hh), so the b_hh gradients must not be added in again (except for the
    GRU, whose b_hc stays its own tensor).
    """
    if registry.cell(kind).fused:  # both engines hold the same tensors
        return dict(grads)
    zero = {k: torch.zeros_like(v) for k, v in grads.items() if k.startswith("bias_hh")}
    return cudnn_to_caffe(kind, grads if kind == "GRU" else {**grads, **zero}, levels)


def spread_lengths(steps: int, batch: int, seed: int = 0) -> list[int]:
    """Lengths from ``steps`` down to 1 over the batch, in a shuffled order (not sorted, as
    real batches are not)."""
    g = torch.Generator().manual_seed(seed)
    ordered = [steps - (i * (steps - 1)) // max(1, batch - 1) for i in range(batch)]
    return [ordered[i] for i in torch.randperm(batch, generator=g).tolist()]


def compare(kind: str, input_size: int, hidden: int, levels: int = 1, steps: int = 10,
            batch: int = 4, resets: bool = True, nonlinearity: str = "tanh",
            dtype=torch.float32, device: str = "cpu", seed: int = 0,
            fast: bool = True, bidirectional: bool = False,
            lengths: list[int] | None = None, scan_method: str | None = None,
            heads: int = 1, forget_gate: str = "sigmoid") -> list[Diff]:
    """Run both engines on the same random problem and list every difference.

    ``lengths`` (one per sequence, 0 to ``steps``) pads the sequences; a bidirectional layer
    gets no continuation flags (``resets`` is then ignored). ``scan_method`` picks how the
    SCAN engine scans its chunks (``log`` or ``linear``; None: by device). ``heads`` and
    ``forget_gate``: an sLSTM's (its starting normaliser is drawn positive, as any n the
    layer makes is).
    """
    g = torch.Generator().manual_seed(seed)
    ref, fused = fused_module(kind, input_size, hidden, levels, nonlinearity, bidirectional,
                              heads, forget_gate)
    if fused == "SCAN":
        ref.method = scan_method
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 0.2 - 0.1)
    unr = UnrolledRecurrent(kind, input_size, hidden, levels, nonlinearity=nonlinearity,
                            bidirectional=bidirectional, heads=heads, forget_gate=forget_gate)
    unr.load_state_dict(convert_layer(kind, ref.state_dict(), levels, fused, "CAFFE"))
    unr.fast = fast
    ref, unr = ref.to(device, dtype), unr.to(device, dtype)
    x = torch.randn(steps, batch, input_size, generator=g).to(device, dtype)
    cont = None
    if not bidirectional:
        cont = torch.ones(steps, batch)
        if resets and steps > 2:
            cont[steps // 2, 0] = 0
            cont[steps - 1, batch - 1] = 0
        cont = cont.to(device, dtype)
    lens = None if lengths is None else torch.tensor(lengths, dtype=torch.long, device=device)
    n_state = {"LSTM": 2, "sLSTM": 4}.get(kind, 1)
    dirs = 2 if bidirectional else 1
    state = [torch.randn(levels * dirs, batch, hidden, generator=g).to(device, dtype) * 0.5
             for _ in range(n_state)]
    if kind == "sLSTM":
        state[2] = state[2].abs() + 1.0
    weight = torch.randn(steps, batch, dirs * hidden, generator=g).to(device, dtype)
    results = []
    for m in (ref, unr):
        xi = x.clone().requires_grad_()
        si = tuple(s.clone().requires_grad_() for s in state)
        y, final = m(xi, cont, si, lens)
        loss = (y * weight).sum() + sum((f * f).sum() for f in final)
        loss.backward()
        grads = {k: p.grad for k, p in m.named_parameters()}
        results.append((y, final, xi.grad, [s.grad for s in si], grads))
    (ya, fa, dxa, dsa, ga), (yb, fb, dxb, dsb, gb) = results
    diffs = [_diff("output", yb, ya)]
    if lens is not None:
        padded = torch.arange(steps, device=device).unsqueeze(1) >= lens.unsqueeze(0)
        for engine, y, dx in (({"CUDNN": "cuDNN", "SCAN": "scan"}.get(fused, "fused"), ya, dxa),
                              ("unrolled", yb, dxb)):
            for what, t in (("output", y[padded]), ("grad input", dx[padded])):
                diffs.append(_diff(f"{engine} {what} at padding", t, torch.zeros_like(t)))
    names = STATE_NAMES
    diffs += [_diff(f"final {names[i]}", fb[i], fa[i]) for i in range(n_state)]
    diffs.append(_diff("grad input", dxb, dxa))
    diffs += [_diff(f"grad initial {names[i][0]}", dsb[i], dsa[i]) for i in range(n_state)]
    inner = {k.removeprefix("rnn."): v for k, v in ga.items()}
    for k, v in _grads_as_caffe(kind, inner, levels).items():
        diffs.append(_diff(f"grad {k}", gb[k], v))
    return diffs


def compare_mlstm(input_size: int, hidden: int, heads: int = 1, levels: int = 1,
                  steps: int = 10, batch: int = 4, resets: bool = True,
                  forget: str = "sigmoid", dtype=torch.float32, device: str = "cpu",
                  seed: int = 0, lengths: list[int] | None = None,
                  chunk: int | None = None, norm: str = "head") -> list[Diff]:
    """:func:`compare` for an mLSTM: the CHUNK engine (chunks of ``chunk`` steps; None: its
    own) against the unrolled net, on the same tensors, with a random carried state (C, n,
    m), resets and lengths."""
    g = torch.Generator().manual_seed(seed)
    ref = ChunkMLSTM(input_size, hidden, heads, levels, forget=forget, norm=norm)
    ref.chunk = chunk or ref.chunk
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 0.4 - 0.2)
    unr = UnrolledMLSTM(input_size, hidden, heads, levels, forget=forget, norm=norm)
    unr.load_state_dict(ref.state_dict())
    ref, unr = ref.to(device, dtype), unr.to(device, dtype)
    x = torch.randn(steps, batch, input_size, generator=g).to(device, dtype)
    cont = torch.ones(steps, batch)
    if resets and steps > 2:
        cont[steps // 2, 0] = 0
        cont[steps - 1, batch - 1] = 0
    cont = cont.to(device, dtype)
    lens = None if lengths is None else torch.tensor(lengths, dtype=torch.long, device=device)
    state = [torch.randn(s.shape, generator=g).to(device, dtype) * 0.5
             for s in ref.initial_state(batch)]
    weight = torch.randn(steps, batch, hidden, generator=g).to(device, dtype)
    results = []
    for m in (ref, unr):
        xi = x.clone().requires_grad_()
        si = tuple(s.clone().requires_grad_() for s in state)
        y, final = m(xi, cont, si, lens)
        loss = (y * weight).sum() + sum((f * f).sum() for f in final)
        loss.backward()
        results.append((y, final, xi.grad, [s.grad for s in si],
                        {k: p.grad for k, p in m.named_parameters()}))
    (ya, fa, dxa, dsa, ga), (yb, fb, dxb, dsb, gb) = results
    diffs = [_diff("output", yb, ya)]
    if lens is not None:
        padded = torch.arange(steps, device=device).unsqueeze(1) >= lens.unsqueeze(0)
        for engine, y, dx in (("chunkwise", ya, dxa), ("unrolled", yb, dxb)):
            for what, t in (("output", y[padded]), ("grad input", dx[padded])):
                diffs.append(_diff(f"{engine} {what} at padding", t, torch.zeros_like(t)))
    diffs += [_diff(f"final {s}_T", b, a) for s, a, b in zip("Cnm", fa, fb)]
    diffs.append(_diff("grad input", dxb, dxa))
    diffs += [_diff(f"grad initial {s}", b, a) for s, a, b in zip("Cnm", dsa, dsb)]
    diffs += [_diff(f"grad {k}", gb[k], v) for k, v in ga.items()]
    return diffs


def fused_module(kind: str, input_size: int, hidden: int, levels: int = 1,
                 nonlinearity: str = "tanh", bidirectional: bool = False, heads: int = 1,
                 forget_gate: str = "sigmoid"):
    """The fused engine's module of ``kind`` and that engine's name: ``CudnnRecurrent``
    (CUDNN), ``ScanRecurrent`` (SCAN) for MinGRU and MinLSTM, ``FusedSLSTM`` (FUSED) for the
    sLSTM."""
    if kind == "sLSTM":
        return FusedSLSTM(input_size, hidden, heads, levels, bidirectional=bidirectional,
                          forget_gate=forget_gate), "FUSED"
    if kind in ("MinGRU", "MinLSTM"):
        return ScanRecurrent(kind, input_size, hidden, levels,
                             bidirectional=bidirectional), "SCAN"
    return CudnnRecurrent(kind, input_size, hidden, levels, 0.0, False, nonlinearity,
                          bidirectional), "CUDNN"


def layer_parity(graph, name: str, steps: int | None = None, batch: int | None = None,
                 seed: int = 0) -> dict:
    """Parity of one recurrent layer of ``graph`` at its real sizes (steps capped at 20)."""
    layer = graph.layer(name)
    p = layer.effective_params()
    x = graph.info(name).inputs[0]
    first = p.get("batch_first", False)
    t_, n_, e = (x.shape[1], x.shape[0], x.shape[2]) if first else x.shape
    steps = steps or min(int(t_) if isinstance(t_, int) else 20, 20)
    batch = batch or min(int(n_) if isinstance(n_, int) else 4, 8)
    kind = layer.type
    bidirectional = p.get("bidirectional", False)
    padded = graph.link_into(name, "lengths") is not None
    lengths = spread_lengths(steps, batch, seed) if padded else None
    if kind == "mLSTM":
        diffs = compare_mlstm(int(e), p["num_output"], p["num_heads"], p.get("num_layers", 1),
                              steps, batch, forget=p["forget_gate"], seed=seed,
                              lengths=lengths, chunk=max(2, steps // 3),
                              norm=p.get("cell_norm", "head"))
    else:
        diffs = compare(kind, int(e), p["num_output"], p.get("num_layers", 1), steps, batch,
                        nonlinearity=p.get("nonlinearity", "tanh"), seed=seed,
                        bidirectional=bidirectional, lengths=lengths,
                        heads=p.get("num_heads", 1),
                        forget_gate=p.get("forget_gate", "sigmoid"))
    worst = max(d.rel for d in diffs)
    return {"layer": name, "type": kind, "steps": steps, "batch": batch,
            "levels": p.get("num_layers", 1), "bidirectional": bidirectional,
            "lengths": lengths, "max_abs": max(d.abs for d in diffs),
            "max_rel": worst, "ok": worst <= TOLERANCE, "diffs": [asdict(d) for d in diffs]}


def step_parity(kind: str, weights: dict, x: torch.Tensor, cont: torch.Tensor | None = None,
                state: tuple | None = None, nonlinearity: str = "tanh", seed: int = 0,
                heads: int = 1, forget_gate: str = "sigmoid", cell_norm: str = "head") -> dict:
    """Per time step, how far apart the two engines are for these weights and this input.

    The unrolled module takes ``weights`` (Caffe layout, e.g. a trained layer's) as they are
    and the CUDNN module takes them converted; both run forward and backward on the same input
    ``x`` (T, N, E), continuation flags and initial state, with a fixed random weighting of
    the outputs as the loss. LSTMSimple has no cuDNN form: its fused step executor is compared
    with the per-step nodes instead. An mLSTM's chunkwise form is compared with its unrolled
    net (``heads`` its heads, ``nonlinearity`` its forget gate).

    Returns
    -------
    dict
        ``pair`` (the two names compared), ``steps``, per step the largest absolute difference
        of the output (``output``) and of the gradient reaching the input (``grad_input``),
        the largest magnitudes they are measured against (``output_scale``, ``grad_scale``),
        and the differences of the final states (``final``).
    """
    levels = sum(1 for k in weights if k.startswith("W_xc_l"))
    hidden, input_size = weights["W_xc_l0"].shape[0] // GATES.get(kind, 1), \
        weights["W_xc_l0"].shape[1]
    sd = {k: v.detach() for k, v in weights.items()}
    if kind == "mLSTM":  # ``nonlinearity`` names its forget gate
        hidden = (weights["W_xc_l0"].shape[0] - 2 * heads) // 4
        ref, unr = (cls(input_size, hidden, heads, levels, forget=nonlinearity,
                        norm=cell_norm) for cls in (ChunkMLSTM, UnrolledMLSTM))
        pair = ("chunkwise", "unrolled")
        ref.load_state_dict(sd)
        unr.load_state_dict(sd)
    else:
        if kind == "sLSTM":  # its heads are its recurrent matrices'
            heads = weights["W_hc_l0"].shape[0]
        unr = UnrolledRecurrent(kind, input_size, hidden, levels, nonlinearity=nonlinearity,
                                heads=heads, forget_gate=forget_gate)
        unr.load_state_dict(sd)
    if kind == "LSTMSimple":
        ref = UnrolledRecurrent(kind, input_size, hidden, levels, nonlinearity=nonlinearity)
        ref.load_state_dict(sd)
        ref.fast, pair = False, ("per-step nodes", "fused steps")
    elif kind != "mLSTM":
        ref, fused = fused_module(kind, input_size, hidden, levels, nonlinearity,
                                  heads=heads, forget_gate=forget_gate)
        ref.load_state_dict(convert_layer(kind, sd, levels, "CAFFE", fused))
        pair = ({"SCAN": "parallel scan", "FUSED": "fused sLSTM"}.get(fused, "cuDNN"),
                "unrolled")
    ref, unr = ref.to(x.device, x.dtype).eval(), unr.to(x.device, x.dtype).eval()
    g = torch.Generator().manual_seed(seed)
    t_, n = x.shape[0], x.shape[1]
    weight = torch.randn(t_, n, hidden, generator=g).to(x.device, x.dtype)
    results = []
    for m in (ref, unr):
        xi = x.detach().clone().requires_grad_()
        si = None if state is None else tuple(s.detach().clone() for s in state)
        with torch.enable_grad():
            y, final = m(xi, cont, si)
            (y * weight).sum().backward()
        results.append((y.detach(), final, xi.grad))
    (ya, fa, da), (yb, fb, db) = results

    def per_step(a, b):
        return (a - b).abs().flatten(1).max(1).values.double().cpu().tolist()

    names = ("C_T", "n_T", "m_T") if kind == "mLSTM" else STATE_NAMES
    return {"pair": list(pair), "steps": t_, "output": per_step(ya, yb),
            "grad_input": per_step(da, db), "output_scale": float(ya.abs().max()),
            "grad_scale": float(da.abs().max()),
            "final": {names[i]: float((fa[i] - fb[i]).detach().abs().max())
                      for i in range(len(fa))},
            "tolerance": TOLERANCE}
