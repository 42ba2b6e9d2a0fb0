"""Parity between the engines: the same weights give the same outputs, states and gradients.

For a recurrent layer, a CUDNN module (for MinGRU and MinLSTM: a SCAN module, the parallel scan;
for the sLSTM: a FUSED module; for the mLSTM: a CHUNK module, the chunkwise form; for
LSTMSimple, which has no such engine: its fused steps) is built with random weights, the
weights are converted to the CAFFE (unrolled) module, both run forward and backward on the
same random input, continuation flags (with resets in the middle of the sequence; none for a
bidirectional layer, which takes no ``cont``), lengths (padded sequences, when asked) and
initial state, and every difference is measured (with lengths, each engine's outputs and
input gradients at the padded steps also against zero). ``compared`` names what ran on each
side: two different computations, never the same code twice.

The measure. A tensor's difference ``max|a - b|`` passes when it is within the tolerance (1e-5
in float32, 1e-10 in float64) of the tensor's largest value ``max|b|`` (an element-wise ratio
would divide by values that are zero by chance), or within the tensor's rounding floor:
``rel`` is the difference over the larger of ``max|b|`` and ``floor / tolerance``. The floor is
the most that rounding alone can put between the two: each engine also runs the same problem
in the other type, and the largest difference between its float32 and its float64 result is
its own float32 rounding of that tensor, ``e``; since ``|a - b| <= e_a + e_b + |a64 - b64|``
element by element, and ``|a64 - b64|`` is float64's rounding where the functions are one,
the floor is ``(e_a + e_b)(1 + 2^-29)`` (2^-29: float64's unit roundoff over float32's), and
a difference beyond it is, at least in part, a difference of the functions, which float64
shows at once. In float64 the floor is ``(e_a + e_b) 2^-29``. Where an engine's float64 run is
another computation than its float32 one (the sLSTM's kernels run fp32 and bf16 only), its
rounding is taken to be the unrolled net's.

Only a tensor summed from terms far larger than itself has a floor above the tolerance of its
largest value: the mLSTM's gradient of its starting normaliser, which its per-head norm all but
cancels (some 1e-4 beside gradients near 10, rounded at about 1e-6 by either engine), and where
a head's read-out is nearly uniform, what the norm divides by its small spread (the chunkwise
form then rounds several times more than the step-by-step one). In float64 they agree within
some 1e-11 of the normaliser's gradient's largest value, 1e-13 elsewhere.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch

from designer.graph.layers.recurrent import ENGINE_KINDS, MIN_KINDS

from .convert import convert_layer, cudnn_to_caffe
from .expansion import GATES
from .min_recurrent import ScanRecurrent
from .mlstm import ChunkMLSTM, UnrolledMLSTM
from .recurrent import CudnnRecurrent
from .slstm import FusedSLSTM
from .unrolled import UnrolledRecurrent

TOLERANCES = {torch.float32: 1e-5, torch.float64: 1e-10}
TOLERANCE = TOLERANCES[torch.float32]
DTYPES = {"float32": torch.float32, "float64": torch.float64}
FLOAT64_SHARE = 2.0 ** -29  # float64's unit roundoff over float32's
KINDS = ENGINE_KINDS + ("LSTMSimple",)  # the layers parity compares
STATE_NAMES = ("h_T", "c_T", "n_T", "m_T")  # the sLSTM's; an LSTM has the first two
PADDING_LABELS = {"CUDNN": "cuDNN", "SCAN": "scan", "FUSED": "fused", "CHUNK": "chunkwise"}


@dataclass
class Diff:
    """Largest absolute difference of one quantity, and that relative to its scale: its
    largest value (``scale``) or, where more, its rounding ``floor`` over the tolerance."""

    name: str
    abs: float
    rel: float
    scale: float = 0.0
    floor: float = 0.0


class Diffs(list):
    """The :class:`Diff` of every quantity, and ``compared``: what ran on each side."""

    compared: tuple = ()


def _diff(name: str, a: torch.Tensor, b: torch.Tensor, floor: float = 0.0,
          tolerance: float = TOLERANCE) -> Diff:
    a, b = a.detach().double(), b.detach().double()
    if a.numel() == 0:
        return Diff(name, 0.0, 0.0)
    d = (a - b).abs().max().item()
    scale = b.abs().max().item()
    against = max(scale, floor / tolerance)
    return Diff(name, d, d / against if against > 0 else d, scale, floor)


def _grads_as_caffe(kind: str, grads: dict, levels: int) -> dict:
    """torch parameter gradients in the Caffe layout.

    The weight conversion applies with one change: each torch bias gradient already equals
    db_c (b_c = b_ih + b_hh), so the b_hh gradients must not be added in again (except for the
    GRU, whose b_hc stays its own tensor).
    """
    zero = {k: torch.zeros_like(v) for k, v in grads.items() if k.startswith("bias_hh")}
    return cudnn_to_caffe(kind, grads if kind == "GRU" else {**grads, **zero}, levels)


def spread_lengths(steps: int, batch: int, seed: int = 0) -> list[int]:
    """Lengths from ``steps`` down to 1 over the batch, in a shuffled order (not sorted, as
    real batches are not)."""
    g = torch.Generator().manual_seed(seed)
    ordered = [steps - (i * (steps - 1)) // max(1, batch - 1) for i in range(batch)]
    return [ordered[i] for i in torch.randperm(batch, generator=g).tolist()]


def _run(m, x, cont, state, lens, weight) -> tuple:
    """Forward and backward of ``m`` on the problem, cast to ``m``'s type: the output, the
    final state, and the gradients of the input, of the initial state and of each parameter."""
    dtype = next(m.parameters()).dtype
    xi = x.to(dtype, copy=True).requires_grad_()
    si = tuple(s.to(dtype, copy=True).requires_grad_() for s in state)
    y, final = m(xi, None if cont is None else cont.to(dtype), si, lens)
    loss = (y * weight.to(dtype)).sum() + sum((f * f).sum() for f in final)
    loss.backward()
    return y, final, xi.grad, [s.grad for s in si], {k: p.grad for k, p in m.named_parameters()}


def _named(run, states: str, grads_as=dict) -> dict:
    """The tensors of a run by the names they are reported under."""
    y, final, dx, ds, grads = run
    named = {"output": y}
    named.update({f"final {s}_T": f for s, f in zip(states, final)})
    named["grad input"] = dx
    named.update({f"grad initial {s}": g for s, g in zip(states, ds)})
    named.update({f"grad {k}": v for k, v in grads_as(grads).items()})
    return named


def _rounding(nets: dict, problem, named) -> tuple[dict, dict]:
    """Each net's runs by type, and its rounding of each tensor: the largest difference
    between its float32 and its float64 run."""
    runs = {dt: named(_run(net, *problem)) for dt, net in nets.items()}
    low, high = runs[torch.float32], runs[torch.float64]
    return runs, {k: (low[k].detach().double() - high[k].detach().double()).abs().max().item()
                  if low[k].numel() else 0.0 for k in low}


def _measure(engine, reference, problem, dtype, states: str, grads_as=dict,
             padding: str = "fused") -> Diffs:
    """Run the fused ``engine(type)`` and the unrolled ``reference(type)`` in float32 and in
    float64 on ``problem`` (x, cont, state, lens, weight), and measure every difference of
    the ``dtype`` runs, each against its rounding floor (see the module's doc)."""
    types = (torch.float32, torch.float64)
    nets = {dt: reference(dt) for dt in types}
    engines = {dt: engine(dt) for dt in types}
    runs, e_ref = _rounding(nets, problem, lambda r: _named(r, states))
    ran, e_eng = _rounding(engines, problem, lambda r: _named(r, states, grads_as))
    if describe(engines[torch.float32]) != describe(engines[torch.float64]):
        e_eng = e_ref  # its float64 is another computation (no fp64 kernels): not its rounding
    scale = FLOAT64_SHARE if dtype == torch.float64 else 1.0 + FLOAT64_SHARE
    a, b = ran[dtype], runs[dtype]

    def diff(name):
        return _diff(name, a[name], b[name], scale * (e_eng[name] + e_ref[name]),
                     TOLERANCES[dtype])

    diffs = Diffs([diff("output")])
    lens = problem[3]
    if lens is not None:
        padded = torch.arange(problem[0].shape[0], device=lens.device).unsqueeze(1) >= \
            lens.unsqueeze(0)
        for side, named in ((padding, a), ("unrolled", b)):
            for what in ("output", "grad input"):
                t = named[what][padded]
                diffs.append(_diff(f"{side} {what} at padding", t, torch.zeros_like(t)))
    diffs += [diff(name) for name in b if name != "output"]
    diffs.compared = (describe(engines[dtype]), describe(nets[dtype]))
    return diffs


def describe(m) -> str:
    """What computed a module's last call (or computes its next one), in words."""
    engine = getattr(m, "engine_name", "CUDNN" if isinstance(m, CudnnRecurrent) else "CAFFE")
    what = {"CUDNN": lambda: f"torch.nn.{getattr(m, 'kind', '')}",
            "SCAN": lambda: "the parallel scan",
            "CHUNK": lambda: f"the chunkwise form, chunks of {m.chunk} steps"}.get(
                engine, lambda: m.ran)
    return f"{engine}: {what()}"


def compare(kind: str, input_size: int, hidden: int, levels: int = 1, steps: int = 10,
            batch: int = 4, resets: bool = True, nonlinearity: str = "tanh",
            dtype=torch.float32, device: str = "cpu", seed: int = 0,
            fast: bool = True, bidirectional: bool = False,
            lengths: list[int] | None = None, scan_method: str | None = None,
            heads: int = 1, forget_gate: str = "sigmoid") -> Diffs:
    """Run both engines on the same random problem and list every difference.

    The problem is drawn in float32 whatever ``dtype`` (so a float64 run measures the same
    problem) and each engine's weights are converted in ``dtype``. ``fast``: the unrolled net
    runs its fused steps where it has them (LSTMSimple's are its fused side: its unrolled side
    is always the reference executor). ``lengths`` (one per sequence, 0 to ``steps``) pads the
    sequences; a bidirectional layer gets no continuation flags (``resets`` is then ignored).
    ``scan_method`` picks how the SCAN engine scans its chunks (``log`` or ``linear``; None: by
    device). ``heads`` and ``forget_gate``: an sLSTM's (its starting normaliser is drawn
    positive, as any n the layer makes is).
    """
    g = torch.Generator().manual_seed(seed)
    engine, fused = fused_module(kind, input_size, hidden, levels, nonlinearity, bidirectional,
                                 heads, forget_gate)
    if fused == "SCAN":
        engine.method = scan_method
    with torch.no_grad():
        for p in engine.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 0.2 - 0.1)
    weights = engine.state_dict()

    def unrolled(dt):
        unr = UnrolledRecurrent(kind, input_size, hidden, levels, nonlinearity=nonlinearity,
                                bidirectional=bidirectional, heads=heads,
                                forget_gate=forget_gate).to(device, dt)
        unr.load_state_dict(convert_layer(kind, {k: v.to(device, dt) for k, v in
                                                 weights.items()}, levels, fused, "CAFFE"))
        unr.fast = fast and kind != "LSTMSimple"
        return unr

    x = torch.randn(steps, batch, input_size, generator=g).to(device)
    cont = None
    if not bidirectional:
        cont = torch.ones(steps, batch)
        if resets and steps > 2:
            cont[steps // 2, 0] = 0
            cont[steps - 1, batch - 1] = 0
        cont = cont.to(device)
    lens = None if lengths is None else torch.tensor(lengths, dtype=torch.long, device=device)
    n_state = {"LSTM": 2, "LSTMSimple": 2, "sLSTM": 4}.get(kind, 1)
    dirs = 2 if bidirectional else 1
    state = [torch.randn(levels * dirs, batch, hidden, generator=g).to(device) * 0.5
             for _ in range(n_state)]
    if kind == "sLSTM":
        state[2] = state[2].abs() + 1.0
    weight = torch.randn(steps, batch, dirs * hidden, generator=g).to(device)

    def grads_as(grads):
        if fused != "CUDNN":  # both engines hold the same tensors
            return grads
        return _grads_as_caffe(kind, {k.removeprefix("rnn."): v for k, v in grads.items()},
                               levels)

    return _measure(lambda dt: copy.deepcopy(engine).to(device, dt), unrolled,
                    (x, cont, state, lens, weight), dtype, "hcnm"[:n_state], grads_as,
                    PADDING_LABELS.get(fused, "fused"))


def compare_mlstm(input_size: int, hidden: int, heads: int = 1, levels: int = 1,
                  steps: int = 10, batch: int = 4, resets: bool = True,
                  forget: str = "sigmoid", dtype=torch.float32, device: str = "cpu",
                  seed: int = 0, lengths: list[int] | None = None,
                  chunk: int | None = None, norm: str = "head") -> Diffs:
    """:func:`compare` for an mLSTM: the CHUNK engine (chunks of ``chunk`` steps; None: its
    own) against the unrolled net, on the same tensors, with a random carried state (C, n,
    m), resets and lengths."""
    g = torch.Generator().manual_seed(seed)
    engine = ChunkMLSTM(input_size, hidden, heads, levels, forget=forget, norm=norm)
    engine.chunk = chunk or engine.chunk
    with torch.no_grad():
        for p in engine.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 0.4 - 0.2)
    weights = engine.state_dict()

    def unrolled(dt):
        unr = UnrolledMLSTM(input_size, hidden, heads, levels, forget=forget,
                            norm=norm).to(device, dt)
        unr.load_state_dict({k: v.to(device, dt) for k, v in weights.items()})
        return unr

    x = torch.randn(steps, batch, input_size, generator=g).to(device)
    cont = torch.ones(steps, batch)
    if resets and steps > 2:
        cont[steps // 2, 0] = 0
        cont[steps - 1, batch - 1] = 0
    cont = cont.to(device)
    lens = None if lengths is None else torch.tensor(lengths, dtype=torch.long, device=device)
    state = [torch.randn(s.shape, generator=g).to(device) * 0.5
             for s in engine.initial_state(batch, device, torch.float32)]
    weight = torch.randn(steps, batch, hidden, generator=g).to(device)
    return _measure(lambda dt: copy.deepcopy(engine).to(device, dt), unrolled,
                    (x, cont, state, lens, weight), dtype, "Cnm", padding="chunkwise")


def fused_module(kind: str, input_size: int, hidden: int, levels: int = 1,
                 nonlinearity: str = "tanh", bidirectional: bool = False, heads: int = 1,
                 forget_gate: str = "sigmoid"):
    """The fused engine's module of ``kind`` and that engine's name: ``CudnnRecurrent``
    (CUDNN), ``ScanRecurrent`` (SCAN) for MinGRU and MinLSTM, ``FusedSLSTM`` (FUSED) for the
    sLSTM; for LSTMSimple, which has no other engine, the unrolled net on its fused steps
    (CAFFE)."""
    if kind == "LSTMSimple":
        return UnrolledRecurrent(kind, input_size, hidden, levels,
                                 nonlinearity=nonlinearity), "CAFFE"
    if kind == "sLSTM":
        return FusedSLSTM(input_size, hidden, heads, levels, bidirectional=bidirectional,
                          forget_gate=forget_gate), "FUSED"
    if kind in MIN_KINDS:
        return ScanRecurrent(kind, input_size, hidden, levels,
                             bidirectional=bidirectional), "SCAN"
    return CudnnRecurrent(kind, input_size, hidden, levels, 0.0, False, nonlinearity,
                          bidirectional), "CUDNN"


def layer_parity(graph, name: str, steps: int | None = None, batch: int | None = None,
                 seed: int = 0, dtype=torch.float32) -> dict:
    """Parity of one recurrent layer of ``graph`` at its real sizes (steps capped at 20), in
    ``dtype`` (float32 or float64) on the CPU."""
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
                              steps, batch, forget=p["forget_gate"], dtype=dtype, seed=seed,
                              lengths=lengths, chunk=max(2, steps // 3),
                              norm=p.get("cell_norm", "head"))
    else:
        diffs = compare(kind, int(e), p["num_output"], p.get("num_layers", 1), steps, batch,
                        nonlinearity=p.get("nonlinearity", "tanh"), dtype=dtype, seed=seed,
                        bidirectional=bidirectional, lengths=lengths,
                        heads=p.get("num_heads", 1),
                        forget_gate=p.get("forget_gate", "sigmoid"))
    worst = max(d.rel for d in diffs)
    tolerance = TOLERANCES[dtype]
    return {"layer": name, "type": kind, "steps": steps, "batch": batch,
            "levels": p.get("num_layers", 1), "bidirectional": bidirectional,
            "lengths": lengths, "dtype": str(dtype).removeprefix("torch."),
            "tolerance": tolerance, "compared": list(diffs.compared),
            "max_abs": max(d.abs for d in diffs), "max_rel": worst, "ok": worst <= tolerance,
            "diffs": [asdict(d) for d in diffs]}


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
