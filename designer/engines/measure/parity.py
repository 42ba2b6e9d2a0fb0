"""Parity between the engines: the same weights give the same outputs, states and gradients.

For a recurrent layer, the module of one of its engines (its pair, registered by its cell:
:mod:`designer.engines.measure.parity_pairs`; by default its own fused engine) is built with random
weights, the weights are converted to the CAFFE (unrolled) module, both run forward and
backward on the same random input, continuation flags (with resets in the middle of the
sequence; none for a bidirectional layer, which takes no ``cont``), lengths (padded sequences,
when asked) and initial state, and every difference is measured (with lengths, each engine's
outputs and input gradients at the padded steps also against zero). ``compared`` names what
ran on each side: two different computations, never the same code twice.

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
another computation than its float32 one (kernels that run fp32 and bf16 only), its rounding
is taken to be the unrolled net's.

Only a tensor summed from terms far larger than itself has a floor above the tolerance of its
largest value: a gradient that a normalisation all but cancels (some 1e-4 beside gradients
near 10, rounded at about 1e-6 by either engine), or what a normalisation divides by a small
spread. In float64 such engines agree within some 1e-11 of that gradient's largest value,
1e-13 elsewhere (``tests/engines/measure/test_parity_cells.py``).
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch

from designer.graph import registry

from designer.engines.net.convert import convert_layer
from designer.engines.measure.parity_pairs import ParityPair, build, pair_of

TOLERANCES = {torch.float32: 1e-5, torch.float64: 1e-10}
TOLERANCE = TOLERANCES[torch.float32]
DTYPES = {"float32": torch.float32, "float64": torch.float64}
FLOAT64_SHARE = 2.0 ** -29  # float64's unit roundoff over float32's


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


def _measure(engine, reference, problem, dtype, states: tuple, pair: ParityPair,
             grads_as=dict) -> Diffs:
    """Run the ``engine(type)`` of ``pair`` and the unrolled ``reference(type)`` in float32 and
    in float64 on ``problem`` (x, cont, state, lens, weight), and measure every difference of
    the ``dtype`` runs, each against its rounding floor (see the module's doc)."""
    types = (torch.float32, torch.float64)
    nets = {dt: reference(dt) for dt in types}
    engines = {dt: engine(dt) for dt in types}
    runs, e_ref = _rounding(nets, problem, lambda r: _named(r, states))
    ran, e_eng = _rounding(engines, problem, lambda r: _named(r, states, grads_as))
    if pair.says(engines[torch.float32]) != pair.says(engines[torch.float64]):
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
        for side, named in ((pair.padding, a), ("unrolled", b)):
            for what in ("output", "grad input"):
                t = named[what][padded]
                diffs.append(_diff(f"{side} {what} at padding", t, torch.zeros_like(t)))
    diffs += [diff(name) for name in b if name != "output"]
    diffs.compared = (pair.engine_words(engines[dtype]), unrolled_words(nets[dtype]))
    return diffs


def unrolled_words(m) -> str:
    """What computed the unrolled net's last call, in words."""
    return f"CAFFE: {m.ran}"



def compare(kind: str, input_size: int, hidden: int, levels: int = 1, steps: int = 10,
            batch: int = 4, resets: bool = True, nonlinearity: str = "tanh",
            dtype=torch.float32, device: str = "cpu", seed: int = 0,
            fast: bool = True, bidirectional: bool = False,
            lengths: list[int] | None = None, settings: dict | None = None,
            heads: int = 1, forget_gate: str = "sigmoid", params: dict | None = None) -> Diffs:
    """Run both sides of ``kind``'s parity pair on the same random problem and list every
    difference.

    The problem is drawn in float32 whatever ``dtype`` (so a float64 run measures the same
    problem) and each side's weights are converted in ``dtype``. ``fast``: the unrolled net
    runs its fused steps where it has them (and where its pair allows: where the fused steps
    are the other side, it always runs node by node). ``lengths`` (one per sequence, 0 to
    ``steps``) pads the sequences; a bidirectional layer gets no continuation flags
    (``resets`` is then ignored). ``settings`` are set on the engine's module (the scan's
    ``method``, the chunkwise form's ``chunk``; None leaves one as it is). ``nonlinearity``,
    ``heads`` and ``forget_gate`` are the layer's ``nonlinearity``, ``num_heads`` and
    ``forget_gate`` where it has them; ``params`` any other of its parameters.
    """
    pair, cell = pair_of(kind), registry.cell(kind)
    g = torch.Generator().manual_seed(seed)
    p = {"num_output": hidden, "num_layers": levels, "bidirectional": bidirectional,
         "nonlinearity": nonlinearity, "num_heads": heads, "forget_gate": forget_gate,
         **(params or {}), "dropout_ratio": 0.0, "batch_first": False}
    engine = build(kind, {**p, "engine": pair.engine}, input_size)
    for key, value in (settings or {}).items():
        if value is not None:
            setattr(engine, key, value)
    with torch.no_grad():
        for w in engine.parameters():
            w.copy_(torch.rand(w.shape, generator=g) * (2 * pair.spread) - pair.spread)
    weights = engine.state_dict()

    def unrolled(dt):
        unr = build(kind, {**p, "engine": "CAFFE"}, input_size).to(device, dt)
        unr.load_state_dict(convert_layer(kind, {k: v.to(device, dt) for k, v in
                                                 weights.items()}, levels, pair.engine,
                                          "CAFFE"))
        if hasattr(unr, "fast"):
            unr.fast = fast and pair.reference_steps
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
    dirs = 2 if bidirectional else 1
    state = [torch.randn(levels * dirs, batch, size, generator=g).to(device) * 0.5
             for size in cell.sizes({**registry.get(kind).defaults(), **p})]
    if pair.start is not None:
        state = pair.start(state)
    weight = torch.randn(steps, batch, dirs * hidden, generator=g).to(device)

    def grads_as(grads):
        return grads if pair.grads is None else pair.grads(kind, grads, levels)

    return _measure(lambda dt: copy.deepcopy(engine).to(device, dt), unrolled,
                    (x, cont, state, lens, weight), dtype, cell.states, pair, grads_as)


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
    pair = pair_of(kind)
    bidirectional = p.get("bidirectional", False)
    padded = graph.link_into(name, "lengths") is not None
    lengths = spread_lengths(steps, batch, seed) if padded else None
    diffs = compare(kind, int(e), p["num_output"], p.get("num_layers", 1), steps, batch,
                    dtype=dtype, seed=seed, bidirectional=bidirectional, lengths=lengths,
                    params={k: p[k] for k in pair.carries if k in p},
                    settings=pair.settings(steps) if pair.settings else None)
    worst = max(d.rel for d in diffs)
    tolerance = TOLERANCES[dtype]
    return {"layer": name, "type": kind, "steps": steps, "batch": batch,
            "levels": p.get("num_layers", 1), "bidirectional": bidirectional,
            "lengths": lengths, "dtype": str(dtype).removeprefix("torch."),
            "tolerance": tolerance, "compared": list(diffs.compared),
            "max_abs": max(d.abs for d in diffs), "max_rel": worst, "ok": worst <= tolerance,
            "diffs": [asdict(d) for d in diffs]}
