"""The CAFFE engine: a recurrent layer run as its unrolled net, one small layer per time step.

The net that runs is the :mod:`designer.engines.expansion` of the layer (the same data the
``unroll`` command and the designer's unrolled view show). Two executors walk it:

- the **reference executor** runs every node as its own torch op (SCALE, INNER_PRODUCT,
  ELTWISE, LSTM_UNIT, GRU_UNIT, MLSTM_UNIT, TANH/RELU, SLICE, CONCAT, DROPOUT) and lets
  autograd do the backward pass; it is the definition, and runs GRU, RNN and the mLSTM;
- the **fast executor** (LSTM and LSTMSimple) first checks that the expansion has exactly the
  per-step pattern SCALE -> INNER_PRODUCT -> ELTWISE -> LSTM_UNIT with the expected wiring, then
  runs the input transform as one GEMM over all steps and the steps with fused kernels
  (:mod:`designer.engines.lstm_steps`). A backward chain runs on the same kernels over the
  steps in reverse order (its per-step net is the forward one's, read from T down to 1). If the
  check fails it falls back to the reference: so does a layer given ``lengths``, whose HOLD
  nodes the fused kernels do not implement.

Weights follow MyCaffe: per stacked level ``W_xc`` (G x E), ``b_c`` (G), ``W_hc`` (G x H), gates
in the order [i, f, o, g] for the LSTM ([r, z, n] for the GRU, which also has ``b_hc``); the
backward chain of a bidirectional layer has its own, suffixed ``_reverse`` (``W_xc_l0_reverse``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .expansion import GATES, MIN_UNITS, STATES, SUFFIXES, Expansion, expand_params, \
    read_levels
from .fillers import fill_bias, fill_weight
from .lstm_steps import UnrolledLSTMSteps, infer_steps
from .min_recurrent import add_min_weights
from .min_rnn import min_unit
from .mlstm_cell import mlstm_unit
from .recurrent_state import check_lengths, time_major, zero_state
from .slstm import add_slstm_weights, fill_slstm
from .slstm_cell import head_matmul, slstm_unit
from .step_plans import compile_step_plan, run_step_plan


def weight_key(blob_weight: str) -> str:
    """Expansion weight name (``L1/W_hc``, ``W_hc_reverse``) -> parameter name (``W_hc_l1``,
    ``W_hc_l0_reverse``)."""
    level, _, name = blob_weight.rpartition("/")
    k = int(level[1:]) if level else 0
    name, reverse, _ = name.partition(SUFFIXES[1])
    return f"{name}_l{k}{reverse}"


REFERENCE = "the reference executor, node by node"  # what ran, in words (``ran``)


class _ClipGrad(torch.autograd.Function):
    """Identity forward; clamps the gradient to +/- threshold (LSTMSimple's gate clipping)."""

    @staticmethod
    def forward(ctx, x, threshold):
        ctx.threshold = threshold
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g.clamp(-ctx.threshold, ctx.threshold), None


def lstm_unit(c_prev, gates, cont):
    """Caffe's LSTM_UNIT: gates [i, f, o, g]; c = cont * f * c_prev + i * g; h = o * tanh(c)."""
    h = c_prev.shape[-1]
    i, f, o = torch.sigmoid(gates[..., :3 * h]).split(h, -1)
    g = torch.tanh(gates[..., 3 * h:])
    c = f * (cont.unsqueeze(-1) * c_prev) + i * g
    return c, o * torch.tanh(c)


def _gru_unit(h_conted, h_lin, x_lin):
    h = h_conted.shape[-1]
    xr, xz, xn = x_lin.split(h, -1)
    hr, hz, hn = h_lin.split(h, -1)
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return (1 - z) * n + z * h_conted


def run_reference(exp: Expansion, weights: dict, blobs: dict, training: bool,
                  clip: float = 0.0) -> dict:
    """Run every node of ``exp`` as its own op; ``blobs`` holds the inputs and gets the rest."""
    for node in exp.nodes:
        b = [blobs[x] for x in node.bottoms]
        t = node.type
        if t == "INNER_PRODUCT":
            w = [weights[weight_key(k)] for k in node.params["weights"]]
            out = (F.linear(b[0], w[0], w[1] if len(w) > 1 else None),)
        elif t == "SLICE":
            out = b[0].split(1, dim=0)
        elif t == "SEQUENCE_MASK":
            steps = torch.arange(node.params["steps"], device=b[0].device)
            out = ((steps.unsqueeze(1) < b[0].unsqueeze(0)).to(blobs["cont"].dtype),)
        elif t == "HOLD":  # new state where the step is valid, else the state it found
            keep = b[-1].unsqueeze(-1) > 0
            half = (len(b) - 1) // 2
            out = tuple(torch.where(keep, new, old) for new, old in zip(b[:half], b[half:-1]))
        elif t == "SCALE":
            out = (b[0] * b[1].unsqueeze(-1),)
        elif t == "ELTWISE":
            out = (b[0] + b[1],)
        elif t == "LSTM_UNIT":
            gates = _ClipGrad.apply(b[1], clip) if clip > 0 else b[1]
            out = lstm_unit(b[0], gates, b[2])
        elif t == "GRU_UNIT":
            out = (_gru_unit(*b),)
        elif t == "HEAD_INNER_PRODUCT":
            out = (head_matmul(b[0], weights[weight_key(node.params["weights"][0])]),)
        elif t == "SLSTM_UNIT":  # (c, n, m, gates, cont) -> (c, n, m, h)
            keep = b[4].unsqueeze(-1)
            h_t, c_t, n_t, m_t = slstm_unit(b[3], b[0] * keep, b[1] * keep, b[2] * keep,
                                            node.params["forget_gate"] == "exp")
            out = (c_t, n_t, m_t, h_t)
        elif t in ("MIN_GRU_UNIT", "MIN_LSTM_UNIT"):
            out = (min_unit("MinGRU" if t == "MIN_GRU_UNIT" else "MinLSTM", *b),)
        elif t == "MLSTM_UNIT":
            out = mlstm_unit(*b, **node.params)
        elif t == "TANH":
            out = (torch.tanh(b[0]),)
        elif t == "RELU":
            out = (torch.relu(b[0]),)
        elif t == "CONCAT":
            out = (torch.cat(b, node.params["axis"]),)
        elif t == "DROPOUT":
            out = (F.dropout(b[0], node.params["dropout_ratio"], training),)
        else:  # pragma: no cover - expansion only makes the types above
            raise ValueError(f"the unrolled executor cannot run a {t} node")
        for name, value in zip(node.tops, out):
            blobs[name] = value
    return blobs


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
class LevelPlan:
    """One stacked LSTM level: its chains, its output and the dropout after it."""

    chains: list
    out: str         # the level's output (the directions' CONCAT when bidirectional)
    dropout: float   # dropout after this level (0: none)
    dropped: str     # the DROPOUT top


def compile_lstm_plan(exp: Expansion) -> list[LevelPlan] | None:
    """Check that ``exp`` is the expected LSTM net and return the plan, else ``None``."""
    if exp.kind not in ("LSTM", "LSTMSimple"):
        return None
    return read_levels(
        exp, lambda take, bottom, p, s, rev: _compile_chain(take, bottom, p, s, rev, exp.steps),
        LevelPlan)


def _compile_chain(take, bottom: str, p: str, s: str, reverse: bool, t_: int):
    xt = take("INNER_PRODUCT")
    wx, bx = xt.params["weights"]
    xs = take("SLICE")
    cs = take("SLICE")
    if xt.bottoms != (bottom,) or xs.bottoms != xt.tops or cs.bottoms != ("cont",):
        return None
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
    cat = take("CONCAT")
    if cat.bottoms != tuple(hs[t] for t in range(t_)) or cat.params["axis"] != 0:
        return None
    return ChainPlan(bottom, wx, bx, wh, f"{p}h_0{s}", f"{p}c_0{s}", cat.tops[0], h_prev,
                     c_prev, reverse)


def run_fast(plans: list[LevelPlan], weights: dict, blobs: dict, training: bool,
             clip: float = 0.0) -> dict:
    """Run an LSTM expansion level by level with the fused step executor.

    A backward chain runs on the same kernels over the time-reversed input transform and
    continuation flags: its step t (from T down to 1) is then the forward pattern's step T-t+1.
    """
    cont = blobs["cont"]
    for level in plans:
        for p in level.chains:
            x = blobs[p.x]
            t_, n = x.shape[0], x.shape[1]
            w_xc, b_c = weights[weight_key(p.w_xc)], weights[weight_key(p.b_c)]
            xw = F.linear(x.reshape(t_ * n, -1), w_xc, b_c).view(t_, n, -1)  # x_transform
            c = cont
            if p.reverse:
                xw, c = xw.flip(0), cont.flip(0)
            h0, c0, w_hc = blobs[p.h0][0], blobs[p.c0][0], weights[weight_key(p.w_hc)]
            if torch.is_grad_enabled():
                hs, c_last = UnrolledLSTMSteps.apply(xw, c, h0, c0, w_hc, clip)
            else:
                hs, c_last = infer_steps(xw, c, h0, c0, w_hc)
            if p.reverse:
                hs = hs.flip(0)
            blobs[p.out] = hs
            blobs[p.h_last] = hs[:1] if p.reverse else hs[-1:]
            blobs[p.c_last] = c_last.unsqueeze(0)
        if len(level.chains) == 2:
            blobs[level.out] = torch.cat([blobs[p.out] for p in level.chains], 2)
        if level.dropout:
            blobs[level.dropped] = F.dropout(blobs[level.out], level.dropout, training)
    return blobs


def _unit_of(kind: str) -> str:
    """The unit whose extra states (``STATES``) a ``kind`` chain carries."""
    return {"LSTM": "LSTM_UNIT", "LSTMSimple": "LSTM_UNIT", "sLSTM": "SLSTM_UNIT"}.get(kind, "")


class UnrolledRecurrent(nn.Module):
    """An LSTM, GRU, RNN, LSTMSimple, MinGRU or MinLSTM layer on the CAFFE engine (the
    unrolled net; MinGRU and MinLSTM hold no W_hc)."""

    def __init__(self, kind: str, input_size: int, hidden: int, levels: int = 1,
                 dropout: float = 0.0, batch_first: bool = False, nonlinearity: str = "tanh",
                 clip: float = 0.0, name: str = "rnn", bidirectional: bool = False,
                 heads: int = 1, forget_gate: str = "sigmoid"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = kind, hidden, levels, batch_first
        self.dropout, self.nonlinearity, self.clip, self.name = dropout, nonlinearity, clip, name
        self.input_size = input_size
        self.directions = 2 if bidirectional else 1
        self.state_layers = levels * self.directions
        self.fast = True  # use the fused executor where the expansion allows it
        self.ran = REFERENCE  # which executor ran the last call, in words
        self._plans: dict[tuple, tuple] = {}
        self.heads, self.forget_gate = heads, forget_gate
        if kind == "sLSTM":  # W_hc: one (4d x d) block per head
            add_slstm_weights(self, input_size, hidden, heads, levels, self.directions)
            return
        if kind in MIN_UNITS:  # W_xc and b_c only: the gates read the input alone
            add_min_weights(self, GATES[kind], input_size, hidden, levels, self.directions)
            return
        g = GATES[kind] * hidden
        for k in range(levels):
            e = input_size if k == 0 else self.directions * hidden
            for s in SUFFIXES[:self.directions]:
                self.register_parameter(f"W_xc_l{k}{s}", nn.Parameter(torch.empty(g, e)))
                self.register_parameter(f"b_c_l{k}{s}", nn.Parameter(torch.zeros(g)))
                self.register_parameter(f"W_hc_l{k}{s}", nn.Parameter(torch.empty(g, hidden)))
                if kind == "GRU":
                    self.register_parameter(f"b_hc_l{k}{s}", nn.Parameter(torch.zeros(g)))

    @classmethod
    def from_params(cls, kind: str, input_size: int, p: dict, name: str = "rnn"):
        m = cls(kind, input_size, p["num_output"], p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("nonlinearity", "tanh"), p.get("clipping_threshold", 0.0), name,
                p.get("bidirectional", False), p.get("num_heads", 1),
                p.get("forget_gate", "sigmoid"))
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0),
                           p.get("enable_clockwork_forgetgate_bias", False),
                           p.get("forget_bias", "constant"))
        return m

    def reset_parameters(self, filler: str, bias: float, forget_bias_5: bool = False,
                         slstm_forget: str = "constant") -> None:
        h, g = self.hidden, GATES[self.kind]
        if self.kind == "sLSTM":
            fill_slstm(self, filler, bias, slstm_forget)
            return
        if filler == "torch_default":
            filler = "uniform"  # what torch.nn.LSTM does: U(-1/sqrt(H), 1/sqrt(H))
        for k in range(self.levels):
            for s in SUFFIXES[:self.directions]:
                fill_weight(getattr(self, f"W_xc_l{k}{s}"), filler, h, g)
                if self.kind not in MIN_UNITS:
                    fill_weight(getattr(self, f"W_hc_l{k}{s}"), filler, h, g)
                fill_bias(getattr(self, f"b_c_l{k}{s}"), bias)
                if self.kind == "GRU":
                    fill_bias(getattr(self, f"b_hc_l{k}{s}"), 0.0)
                if forget_bias_5:
                    with torch.no_grad():
                        getattr(self, f"b_c_l{k}{s}")[h:2 * h].fill_(5.0)

    def expansion(self, steps: int, batch="N", lengths: bool = False) -> Expansion:
        params = {"num_output": self.hidden, "num_layers": self.levels,
                  "dropout_ratio": self.dropout, "nonlinearity": self.nonlinearity,
                  "bidirectional": self.directions == 2, "num_heads": self.heads,
                  "forget_gate": self.forget_gate}
        return expand_params(self.kind, params, steps, batch, self.input_size, self.name,
                             lengths)

    def _plan(self, steps: int, lengths: bool) -> tuple:
        key = (steps, lengths)
        if key not in self._plans:
            exp = self.expansion(steps, lengths=lengths)
            self._plans[key] = (exp, compile_lstm_plan(exp) or compile_step_plan(exp))
        return self._plans[key]

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        if cont is None:
            cont = x.new_ones(t_, n)
        else:
            cont = cont.to(x.dtype)
        if state is None:
            state = zero_state(self.kind, self.state_layers, n, self.hidden, x)
        exp, plan = self._plan(t_, lengths is not None)
        blobs = {"x": x, "cont": cont}
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            blobs["lengths"] = lengths.to(x.device)
        names = ("h",) + STATES.get(_unit_of(self.kind), ())
        for k in range(self.levels):
            p = f"L{k}/" if self.levels > 1 else ""
            for d, s in enumerate(SUFFIXES[:self.directions]):
                i = k * self.directions + d
                for j, x0 in enumerate(names):
                    blobs[f"{p}{x0}_0{s}"] = state[j][i:i + 1]
        weights = self._parameters  # this module holds its weights itself (no children)
        if self.fast and plan is not None and isinstance(plan[0], LevelPlan):
            run_fast(plan, weights, blobs, self.training, self.clip)
            self.ran = f"the fused {self.kind} steps"
        elif self.fast and plan is not None:
            run_step_plan(plan, weights, blobs, self.training, weight_key)
            self.ran = f"the fused {self.kind} steps"
        else:
            run_reference(exp, weights, blobs, self.training, self.clip)
            self.ran = REFERENCE
        y = blobs[exp.outputs[0]]
        finals = exp.outputs[1:]
        per = len(names)
        new_state = tuple(torch.cat([blobs[finals[per * i + j]] for i in range(self.state_layers)],
                                    0) for j in range(per))
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, new_state

    def extra_repr(self) -> str:
        both = ", bidirectional" if self.directions == 2 else ""
        return (f"{self.kind}, {self.input_size} -> {self.hidden}, levels={self.levels}{both}, "
                f"engine=CAFFE (unrolled)")
