"""Parity step by step, for the weights a layer holds now and the input it reads: how far apart
the two sides of its parity pair (:mod:`designer.engines.measure.parity_pairs`) are at every time step,
as inspection shows it."""
from __future__ import annotations

import torch

from designer.graph import registry

from designer.engines.net.convert import convert_layer
from designer.engines.measure.parity import TOLERANCE
from designer.engines.measure.parity_pairs import build, pair_of


def step_parity(kind: str, weights: dict, x: torch.Tensor, cont: torch.Tensor | None = None,
                state: tuple | None = None, params: dict | None = None,
                seed: int = 0) -> dict:
    """Per time step, how far apart the two engines are for these weights and this input.

    Both sides are built from the layer's ``params`` (``num_output``, ``num_layers`` and the
    parameters that shape its function, as the trace describes a module); the unrolled module
    takes ``weights`` (the unrolled net's layout, e.g. a trained layer's) as they are and the
    other side takes them converted; both run forward and backward on the same input ``x``
    (T, N, E), continuation flags and initial state, with a fixed random weighting of the
    outputs as the loss.

    Returns
    -------
    dict
        ``pair`` (the two names compared), ``steps``, per step the largest absolute difference
        of the output (``output``) and of the gradient reaching the input (``grad_input``),
        the largest magnitudes they are measured against (``output_scale``, ``grad_scale``),
        and the differences of the final states (``final``).
    """
    pair = pair_of(kind)
    params = dict(params or {})
    levels, hidden = params.get("num_layers", 1), params["num_output"]
    sd = {k: v.detach() for k, v in weights.items()}
    engine = build(kind, {**params, "engine": pair.engine}, x.shape[-1])
    engine.load_state_dict(convert_layer(kind, sd, levels, "CAFFE", pair.engine))
    unrolled = build(kind, {**params, "engine": "CAFFE"}, x.shape[-1])
    unrolled.load_state_dict(sd)
    if hasattr(unrolled, "fast"):
        unrolled.fast = pair.reference_steps
    sides = [(engine, pair.label or pair.engine), (unrolled, pair.reference_label)]
    if pair.reference_first:
        sides.reverse()
    (ref, first), (unr, second) = sides
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

    names = [f"{s}_T" for s in registry.cell(kind).states]
    return {"pair": [first, second], "steps": t_, "output": per_step(ya, yb),
            "grad_input": per_step(da, db), "output_scale": float(ya.abs().max()),
            "grad_scale": float(da.abs().max()),
            "final": {names[i]: float((fa[i] - fb[i]).detach().abs().max())
                      for i in range(len(fa))},
            "tolerance": TOLERANCE}
