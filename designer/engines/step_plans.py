"""Plans for the fast GRU and RNN executors: the expansion checked node by node, then run.

Like the LSTM's plan (``unrolled.compile_lstm_plan``), a plan is made only when the expansion
holds exactly the per-step pattern the fused executor reproduces; otherwise the layer runs on
the node-by-node reference executor.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .gru_steps import UnrolledGRUSteps, UnrolledRNNSteps


@dataclass
class StepPlan:
    """One stacked GRU or RNN level, as the fast executor runs it."""

    kind: str        # GRU, TANH or RELU
    x: str           # bottom of x_transform
    w_xc: str
    b_c: str
    w_hc: str
    b_hc: str | None
    h0: str
    out: str         # the CONCAT top
    h_last: str
    dropout: float
    dropped: str


def compile_step_plan(exp) -> list[StepPlan] | None:
    """Check that ``exp`` is the expected GRU or RNN net and return the plan, else ``None``."""
    if exp.kind not in ("GRU", "RNN"):
        return None
    nodes, i, plans = exp.nodes, 0, []

    def take(*kinds):
        nonlocal i
        if i >= len(nodes) or nodes[i].type not in kinds:
            raise LookupError
        i += 1
        return nodes[i - 1]

    try:
        bottom = "x"
        for lv in range(exp.levels):
            xt = take("INNER_PRODUCT")
            wx, bx = xt.params["weights"]
            xs, cs = take("SLICE"), take("SLICE")
            if xt.bottoms != (bottom,) or xs.bottoms != xt.tops or cs.bottoms != ("cont",):
                return None
            p = f"L{lv}/" if exp.levels > 1 else ""
            h_prev, weights, unit_kind, hs = f"{p}h_0", None, None, []
            for t in range(exp.steps):
                sc, ip = take("SCALE"), take("INNER_PRODUCT")
                weights = weights or ip.params["weights"]
                ok = (sc.bottoms == (h_prev, cs.tops[t]) and ip.bottoms == sc.tops
                      and ip.params["weights"] == weights)
                if exp.kind == "GRU":
                    un = take("GRU_UNIT")
                    ok = ok and un.bottoms == (sc.tops[0], ip.tops[0], xs.tops[t])
                    unit_kind = "GRU"
                else:
                    el, un = take("ELTWISE"), take("TANH", "RELU")
                    ok = ok and el.bottoms == (ip.tops[0], xs.tops[t]) and un.bottoms == el.tops
                    ok = ok and unit_kind in (None, un.type)
                    unit_kind = un.type
                if not ok:
                    return None
                h_prev = un.tops[0]
                hs.append(h_prev)
            cat = take("CONCAT")
            if cat.bottoms != tuple(hs):
                return None
            drop, dropped = 0.0, cat.tops[0]
            if i < len(nodes) and nodes[i].type == "DROPOUT":
                d = take("DROPOUT")
                drop, dropped = d.params["dropout_ratio"], d.tops[0]
            b_hc = weights[1] if len(weights) > 1 else None
            plans.append(StepPlan(unit_kind, bottom, wx, bx, weights[0], b_hc, f"{p}h_0",
                                  cat.tops[0], h_prev, drop, dropped))
            bottom = dropped
    except (LookupError, KeyError, ValueError, IndexError):
        return None
    return plans if i == len(nodes) else None


def run_step_plan(plans: list[StepPlan], weights: dict, blobs: dict, training: bool,
                  key) -> dict:
    """Run a GRU or RNN expansion level by level with the fused step executors.

    ``key`` maps an expansion weight name to the module's parameter name.
    """
    cont = blobs["cont"]
    for p in plans:
        x = blobs[p.x]
        t_, n = x.shape[0], x.shape[1]
        xw = F.linear(x.reshape(t_ * n, -1), weights[key(p.w_xc)],
                      weights[key(p.b_c)]).view(t_, n, -1)
        h0, w_hc = blobs[p.h0][0], weights[key(p.w_hc)]
        if p.kind == "GRU":
            hs = UnrolledGRUSteps.apply(xw, cont, h0, w_hc, weights[key(p.b_hc)])
        else:
            hs = UnrolledRNNSteps.apply(xw, cont, h0, w_hc, p.kind == "RELU")
        blobs[p.out] = hs
        blobs[p.h_last] = hs[-1:]
        if p.dropout:
            blobs[p.dropped] = F.dropout(hs, p.dropout, training)
    return blobs


def step_plan_ok_for(x: torch.Tensor) -> bool:
    """The fused executors handle every float type; kept for symmetry with the LSTM's."""
    return x.is_floating_point()
