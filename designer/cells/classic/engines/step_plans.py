"""Plans for the fast executors of the classic cells' unrolled nets: the expansion checked node
by node, then run level by level on the fused steps (:mod:`.lstm_steps`, :mod:`.gru_steps`).

A plan is made only when the expansion holds exactly the per-step pattern the fused executor
reproduces (LSTM and LSTMSimple: SCALE -> INNER_PRODUCT -> ELTWISE -> LSTM_UNIT; GRU: SCALE ->
INNER_PRODUCT -> GRU_UNIT; RNN: SCALE -> INNER_PRODUCT -> ELTWISE -> TANH or RELU, with the
expected wiring); otherwise the layer runs on the node-by-node reference executor. A backward
chain runs on the same kernels over the time-reversed input transform and continuation flags:
its step t (from T down to 1) is then the forward pattern's step T-t+1.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from designer.engines.expansion.expand import read_levels
from designer.engines.unrolled import weight_key
from designer.cells.classic.engines.gru_steps import UnrolledGRUSteps, UnrolledRNNSteps
from designer.cells.classic.engines.lstm_steps import UnrolledLSTMSteps, infer_steps


@dataclass
class ChainPlan:
    """One chain of steps (one direction of one stacked LSTM level), as the fast executor
    runs it."""

    x: str           # bottom of x_transform
    w_xc: str
    b_c: str
    w_hc: str
    h0: str
    c0: str
    out: str         # the CONCAT over time
    h_last: str
    c_last: str
    reverse: bool    # the backward chain: steps from T down to 1


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
class LevelPlan:
    """One stacked level: its chains (forward first), its output and the dropout after it."""

    chains: list
    out: str         # the level's output (the directions' CONCAT when bidirectional)
    dropout: float   # dropout after this level (0: none)
    dropped: str     # the DROPOUT top


def _rails(take, bottom: str):
    """The chain's input transform and its SLICEs of it and of ``cont``, or ``None``."""
    xt = take("INNER_PRODUCT")
    xs, cs = take("SLICE"), take("SLICE")
    if xt.bottoms != (bottom,) or xs.bottoms != xt.tops or cs.bottoms != ("cont",):
        return None
    return xt, xs, cs


def _concat(take, hs: dict, t_: int):
    cat = take("CONCAT")
    if cat.bottoms != tuple(hs[t] for t in range(t_)) or cat.params["axis"] != 0:
        return None
    return cat


# -- LSTM and LSTMSimple --------------------------------------------------------------------
def compile_lstm_plan(exp) -> list[LevelPlan] | None:
    """Check that ``exp`` is the expected LSTM net and return the plan, else ``None``."""
    if exp.kind not in ("LSTM", "LSTMSimple"):
        return None
    return read_levels(
        exp, lambda take, bottom, p, s, rev: _lstm_chain(take, bottom, p, s, rev, exp.steps),
        LevelPlan)


def _lstm_chain(take, bottom: str, p: str, s: str, reverse: bool, t_: int):
    rails = _rails(take, bottom)
    if rails is None:
        return None
    xt, xs, cs = rails
    wx, bx = xt.params["weights"]
    h_prev, c_prev, wh, hs = f"{p}h_0{s}", f"{p}c_0{s}", None, {}
    for t in (range(t_ - 1, -1, -1) if reverse else range(t_)):
        sc, ip, el, un = take("SCALE"), take("INNER_PRODUCT"), take("ELTWISE"), \
            take("LSTM_UNIT")
        wh = wh or ip.params["weights"][0]
        ok = (sc.bottoms == (h_prev, cs.tops[t]) and ip.bottoms == sc.tops
              and ip.params["weights"] == (wh,) and el.bottoms == (ip.tops[0], xs.tops[t])
              and un.bottoms == (c_prev, el.tops[0], cs.tops[t]))
        if not ok:
            return None
        c_prev, h_prev = un.tops
        hs[t] = h_prev
    cat = _concat(take, hs, t_)
    if cat is None:
        return None
    return ChainPlan(bottom, wx, bx, wh, f"{p}h_0{s}", f"{p}c_0{s}", cat.tops[0], h_prev,
                     c_prev, reverse)


def run_lstm_plan(plans: list[LevelPlan], weights: dict, blobs: dict, training: bool,
                  clip: float = 0.0) -> dict:
    """Run an LSTM expansion level by level with the fused step executor (``clip``: the
    gate-gradient clipping threshold, 0 for none)."""
    def chain(p, xw, c):
        h0, c0, w_hc = blobs[p.h0][0], blobs[p.c0][0], weights[weight_key(p.w_hc)]
        if torch.is_grad_enabled():
            hs, c_last = UnrolledLSTMSteps.apply(xw, c, h0, c0, w_hc, clip)
        else:
            hs, c_last = infer_steps(xw, c, h0, c0, w_hc)
        blobs[p.c_last] = c_last.unsqueeze(0)
        return hs
    return _run_levels(plans, weights, blobs, training, chain)


# -- GRU and RNN ----------------------------------------------------------------------------
def compile_step_plan(exp) -> list[LevelPlan] | None:
    """Check that ``exp`` is the expected GRU or RNN net and return the plan, else ``None``."""
    if exp.kind not in ("GRU", "RNN"):
        return None
    return read_levels(exp, lambda take, bottom, p, s, rev: _step_chain(take, exp, bottom, p, s,
                                                                        rev), LevelPlan)


def _step_chain(take, exp, bottom: str, p: str, s: str, reverse: bool) -> StepChain | None:
    rails = _rails(take, bottom)
    if rails is None:
        return None
    xt, xs, cs = rails
    wx, bx = xt.params["weights"]
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
    cat = _concat(take, hs, t_)
    if cat is None:
        return None
    b_hc = weights[1] if len(weights) > 1 else None
    return StepChain(unit_kind, bottom, wx, bx, weights[0], b_hc, f"{p}h_0{s}", cat.tops[0],
                     h_prev, reverse)


def run_step_plan(plans: list[LevelPlan], weights: dict, blobs: dict, training: bool,
                  clip: float = 0.0) -> dict:
    """Run a GRU or RNN expansion level by level with the fused step executors (they clip
    nothing: ``clip`` is the executors' common argument)."""
    def chain(p, xw, c):
        h0, w_hc = blobs[p.h0][0], weights[weight_key(p.w_hc)]
        if p.kind == "GRU":
            return UnrolledGRUSteps.apply(xw, c, h0, w_hc, weights[weight_key(p.b_hc)])
        return UnrolledRNNSteps.apply(xw, c, h0, w_hc, p.kind == "RELU")
    return _run_levels(plans, weights, blobs, training, chain)


def _run_levels(plans: list[LevelPlan], weights: dict, blobs: dict, training: bool,
                chain) -> dict:
    """Each level's chains (``chain(plan, xw, cont)`` -> the h of every step, after the
    input transform of all steps as one GEMM), their join and the dropout after them."""
    cont = blobs["cont"]
    for level in plans:
        for p in level.chains:
            x = blobs[p.x]
            t_, n = x.shape[0], x.shape[1]
            xw = F.linear(x.reshape(t_ * n, -1), weights[weight_key(p.w_xc)],
                          weights[weight_key(p.b_c)]).view(t_, n, -1)  # x_transform
            c = cont
            if p.reverse:
                xw, c = xw.flip(0), cont.flip(0)
            hs = chain(p, xw, c)
            if p.reverse:
                hs = hs.flip(0)
            blobs[p.out] = hs
            blobs[p.h_last] = hs[:1] if p.reverse else hs[-1:]
        if len(level.chains) == 2:
            blobs[level.out] = torch.cat([blobs[p.out] for p in level.chains], 2)
        if level.dropout:
            blobs[level.dropped] = F.dropout(blobs[level.out], level.dropout, training)
    return blobs
