"""Plans for the fast GRU and RNN executors: the expansion checked node by node, then run.

Like the LSTM's plan (``unrolled.compile_lstm_plan``), a plan is made only when the expansion
holds exactly the per-step pattern the fused executor reproduces; otherwise the layer runs on
the node-by-node reference executor.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from designer.engines.expansion import read_levels
from designer.cells.classic.engines.gru_steps import UnrolledGRUSteps, UnrolledRNNSteps


@dataclass
class StepChain:
    """One direction of one stacked GRU or RNN level, as the fast executor runs it."""

    kind: str        # GRU, TANH or RELU
    x: str           # bottom of x_transform
    w_xc: str
    b_c: str
    w_hc: str
    b_hc: str | None
    h0: str
    out: str         # the CONCAT top
    h_last: str
    reverse: bool


@dataclass
class StepLevel:
    chains: list     # StepChain per direction, forward first
    out: str         # the level's output (the chains' CONCAT along the features when two)
    dropout: float
    dropped: str


def compile_step_plan(exp) -> list[StepLevel] | None:
    """Check that ``exp`` is the expected GRU or RNN net and return the plan, else ``None``."""
    if exp.kind not in ("GRU", "RNN"):
        return None
    return read_levels(exp, lambda take, bottom, p, s, rev: _chain(take, exp, bottom, p, s, rev),
                       StepLevel)


def _chain(take, exp, bottom: str, p: str, s: str, reverse: bool) -> StepChain | None:
    xt = take("INNER_PRODUCT")
    wx, bx = xt.params["weights"]
    xs, cs = take("SLICE"), take("SLICE")
    if xt.bottoms != (bottom,) or xs.bottoms != xt.tops or cs.bottoms != ("cont",):
        return None
    t_ = exp.steps
    h_prev, weights, unit_kind, hs = f"{p}h_0{s}", None, None, {}
    for t in (range(t_ - 1, -1, -1) if reverse else range(t_)):
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
        hs[t] = h_prev
    cat = take("CONCAT")
    if cat.bottoms != tuple(hs[t] for t in range(t_)) or cat.params["axis"] != 0:
        return None
    b_hc = weights[1] if len(weights) > 1 else None
    return StepChain(unit_kind, bottom, wx, bx, weights[0], b_hc, f"{p}h_0{s}", cat.tops[0],
                     h_prev, reverse)


def run_step_plan(plans: list[StepLevel], weights: dict, blobs: dict, training: bool,
                  key) -> dict:
    """Run a GRU or RNN expansion level by level with the fused step executors.

    ``key`` maps an expansion weight name to the module's parameter name. A backward chain
    runs on the same kernels over the time-reversed input transform and continuation flags.
    """
    cont = blobs["cont"]
    for level in plans:
        for p in level.chains:
            x = blobs[p.x]
            t_, n = x.shape[0], x.shape[1]
            xw = F.linear(x.reshape(t_ * n, -1), weights[key(p.w_xc)],
                          weights[key(p.b_c)]).view(t_, n, -1)
            c = cont
            if p.reverse:
                xw, c = xw.flip(0), cont.flip(0)
            h0, w_hc = blobs[p.h0][0], weights[key(p.w_hc)]
            if p.kind == "GRU":
                hs = UnrolledGRUSteps.apply(xw, c, h0, w_hc, weights[key(p.b_hc)])
            else:
                hs = UnrolledRNNSteps.apply(xw, c, h0, w_hc, p.kind == "RELU")
            if p.reverse:
                hs = hs.flip(0)
            blobs[p.out] = hs
            blobs[p.h_last] = hs[:1] if p.reverse else hs[-1:]
        if len(level.chains) == 2:
            blobs[level.out] = torch.cat([blobs[p.out] for p in level.chains], 2)
        if level.dropout:
            blobs[level.dropped] = F.dropout(blobs[level.out], level.dropout, training)
    return blobs
