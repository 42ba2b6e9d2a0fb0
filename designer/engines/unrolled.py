"""The CAFFE engine: a recurrent layer run as its unrolled net, one small layer per time step.

The net that runs is the :mod:`designer.engines.expansion` of the layer (the same data the
``unroll`` command and the designer's unrolled view show). Two executors walk it:

- the **reference executor** runs every node as its own torch op (SCALE, INNER_PRODUCT,
  ELTWISE, LSTM_UNIT, GRU_UNIT, TANH/RELU, SLICE, CONCAT, DROPOUT) and lets autograd do the
  backward pass; it is the definition, and runs GRU and RNN;
- the **fast executor** (LSTM and LSTMSimple) first checks that the expansion has exactly the
  per-step pattern SCALE -> INNER_PRODUCT -> ELTWISE -> LSTM_UNIT with the expected wiring, then
  runs the input transform as one GEMM over all steps and the steps with fused kernels
  (:mod:`designer.engines.lstm_steps`). If the check fails it falls back to the reference.

Weights follow MyCaffe: per stacked level ``W_xc`` (G x E), ``b_c`` (G), ``W_hc`` (G x H), gates
in the order [i, f, o, g] for the LSTM ([r, z, n] for the GRU, which also has ``b_hc``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .expansion import GATES, Expansion, expand_params
from .fillers import fill_bias, fill_weight
from .lstm_steps import UnrolledLSTMSteps, infer_steps
from .recurrent import zero_state
from .step_plans import compile_step_plan, run_step_plan


def weight_key(blob_weight: str) -> str:
    """Expansion weight name (``L1/W_hc`` or ``W_hc``) -> parameter name (``W_hc_l1``)."""
    level, _, name = blob_weight.rpartition("/")
    k = int(level[1:]) if level else 0
    return f"{name}_l{k}"


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
        elif t == "SCALE":
            out = (b[0] * b[1].unsqueeze(-1),)
        elif t == "ELTWISE":
            out = (b[0] + b[1],)
        elif t == "LSTM_UNIT":
            gates = _ClipGrad.apply(b[1], clip) if clip > 0 else b[1]
            out = lstm_unit(b[0], gates, b[2])
        elif t == "GRU_UNIT":
            out = (_gru_unit(*b),)
        elif t == "TANH":
            out = (torch.tanh(b[0]),)
        elif t == "RELU":
            out = (torch.relu(b[0]),)
        elif t == "CONCAT":
            out = (torch.cat(b, 0),)
        elif t == "DROPOUT":
            out = (F.dropout(b[0], node.params["dropout_ratio"], training),)
        else:  # pragma: no cover - expansion only makes the types above
            raise ValueError(f"the unrolled executor cannot run a {t} node")
        for name, value in zip(node.tops, out):
            blobs[name] = value
    return blobs


@dataclass
class LevelPlan:
    """One stacked LSTM level, as the fast executor runs it."""

    x: str           # bottom of x_transform
    w_xc: str
    b_c: str
    w_hc: str
    h0: str
    c0: str
    out: str         # the CONCAT top
    h_last: str
    c_last: str
    dropout: float   # dropout after this level (0: none)
    dropped: str     # the DROPOUT top


def compile_lstm_plan(exp: Expansion) -> list[LevelPlan] | None:
    """Check that ``exp`` is the expected LSTM net and return the plan, else ``None``."""
    if exp.kind not in ("LSTM", "LSTMSimple"):
        return None
    nodes, i, plans, t_ = exp.nodes, 0, [], exp.steps

    def take(kind):
        nonlocal i
        if i >= len(nodes) or nodes[i].type != kind:
            raise LookupError
        i += 1
        return nodes[i - 1]

    try:
        bottom = "x"
        for lv in range(exp.levels):
            xt = take("INNER_PRODUCT")
            wx, bx = xt.params["weights"]
            xs = take("SLICE")
            cs = take("SLICE")
            if xt.bottoms != (bottom,) or xs.bottoms != xt.tops or cs.bottoms != ("cont",):
                return None
            p = f"L{lv}/" if exp.levels > 1 else ""
            h_prev, c_prev, wh, hs = f"{p}h_0", f"{p}c_0", None, []
            for t in range(t_):
                sc, ip, el, un = take("SCALE"), take("INNER_PRODUCT"), take("ELTWISE"), \
                    take("LSTM_UNIT")
                wh = wh or ip.params["weights"][0]
                ok = (sc.bottoms == (h_prev, cs.tops[t]) and ip.bottoms == sc.tops
                      and ip.params["weights"] == (wh,) and el.bottoms == (ip.tops[0], xs.tops[t])
                      and un.bottoms == (c_prev, el.tops[0], cs.tops[t]))
                if not ok:
                    return None
                c_prev, h_prev = un.tops
                hs.append(h_prev)
            cat = take("CONCAT")
            if cat.bottoms != tuple(hs):
                return None
            drop, dropped = 0.0, cat.tops[0]
            if i < len(nodes) and nodes[i].type == "DROPOUT":
                d = take("DROPOUT")
                drop, dropped = d.params["dropout_ratio"], d.tops[0]
            plans.append(LevelPlan(bottom, wx, bx, wh, f"{p}h_0", f"{p}c_0", cat.tops[0],
                                   h_prev, c_prev, drop, dropped))
            bottom = dropped
    except (LookupError, KeyError, ValueError):
        return None
    return plans if i == len(nodes) else None


def run_fast(plans: list[LevelPlan], weights: dict, blobs: dict, training: bool,
             clip: float = 0.0) -> dict:
    """Run an LSTM expansion level by level with the fused step executor."""
    cont = blobs["cont"]
    for p in plans:
        x = blobs[p.x]
        t_, n = x.shape[0], x.shape[1]
        w_xc, b_c = weights[weight_key(p.w_xc)], weights[weight_key(p.b_c)]
        xw = F.linear(x.reshape(t_ * n, -1), w_xc, b_c).view(t_, n, -1)  # x_transform
        h0, c0, w_hc = blobs[p.h0][0], blobs[p.c0][0], weights[weight_key(p.w_hc)]
        if torch.is_grad_enabled():
            hs, c_last = UnrolledLSTMSteps.apply(xw, cont, h0, c0, w_hc, clip)
        else:
            hs, c_last = infer_steps(xw, cont, h0, c0, w_hc)
        blobs[p.out] = hs
        blobs[p.h_last], blobs[p.c_last] = hs[-1:], c_last.unsqueeze(0)
        if p.dropout:
            blobs[p.dropped] = F.dropout(hs, p.dropout, training)
    return blobs


class UnrolledRecurrent(nn.Module):
    """An LSTM, GRU, RNN or LSTMSimple layer on the CAFFE engine (the unrolled net)."""

    def __init__(self, kind: str, input_size: int, hidden: int, levels: int = 1,
                 dropout: float = 0.0, batch_first: bool = False, nonlinearity: str = "tanh",
                 clip: float = 0.0, name: str = "rnn"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = kind, hidden, levels, batch_first
        self.dropout, self.nonlinearity, self.clip, self.name = dropout, nonlinearity, clip, name
        self.input_size = input_size
        self.fast = True  # use the fused executor where the expansion allows it
        g = GATES[kind] * hidden
        for k in range(levels):
            e = input_size if k == 0 else hidden
            self.register_parameter(f"W_xc_l{k}", nn.Parameter(torch.empty(g, e)))
            self.register_parameter(f"b_c_l{k}", nn.Parameter(torch.zeros(g)))
            self.register_parameter(f"W_hc_l{k}", nn.Parameter(torch.empty(g, hidden)))
            if kind == "GRU":
                self.register_parameter(f"b_hc_l{k}", nn.Parameter(torch.zeros(g)))
        self._plans: dict[int, tuple] = {}

    @classmethod
    def from_params(cls, kind: str, input_size: int, p: dict, name: str = "rnn"):
        m = cls(kind, input_size, p["num_output"], p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("nonlinearity", "tanh"), p.get("clipping_threshold", 0.0), name)
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0),
                           p.get("enable_clockwork_forgetgate_bias", False))
        return m

    def reset_parameters(self, filler: str, bias: float, forget_bias_5: bool = False) -> None:
        h, g = self.hidden, GATES[self.kind]
        if filler == "torch_default":
            filler = "uniform"  # what torch.nn.LSTM does: U(-1/sqrt(H), 1/sqrt(H))
        for k in range(self.levels):
            fill_weight(getattr(self, f"W_xc_l{k}"), filler, h, g)
            fill_weight(getattr(self, f"W_hc_l{k}"), filler, h, g)
            fill_bias(getattr(self, f"b_c_l{k}"), bias)
            if self.kind == "GRU":
                fill_bias(getattr(self, f"b_hc_l{k}"), 0.0)
            if forget_bias_5:
                with torch.no_grad():
                    getattr(self, f"b_c_l{k}")[h:2 * h].fill_(5.0)

    def expansion(self, steps: int, batch="N") -> Expansion:
        params = {"num_output": self.hidden, "num_layers": self.levels,
                  "dropout_ratio": self.dropout, "nonlinearity": self.nonlinearity}
        return expand_params(self.kind, params, steps, batch, self.input_size, self.name)

    def _plan(self, steps: int) -> tuple:
        if steps not in self._plans:
            exp = self.expansion(steps)
            self._plans[steps] = (exp, compile_lstm_plan(exp) or compile_step_plan(exp))
        return self._plans[steps]

    def forward(self, x, cont=None, state=None):
        if self.batch_first:
            x = x.transpose(0, 1)
            cont = None if cont is None else cont.transpose(0, 1)
        t_, n = x.shape[0], x.shape[1]
        if cont is None:
            cont = x.new_ones(t_, n)
        else:
            cont = cont.to(x.dtype)
        if state is None:
            state = zero_state(self.kind, self.levels, n, self.hidden, x)
        exp, plan = self._plan(t_)
        blobs = {"x": x, "cont": cont}
        lstm = self.kind in ("LSTM", "LSTMSimple")
        for k in range(self.levels):
            p = f"L{k}/" if self.levels > 1 else ""
            blobs[f"{p}h_0"] = state[0][k:k + 1]
            if lstm:
                blobs[f"{p}c_0"] = state[1][k:k + 1]
        weights = self._parameters  # this module holds its weights itself (no children)
        if self.fast and plan is not None and isinstance(plan[0], LevelPlan):
            run_fast(plan, weights, blobs, self.training, self.clip)
        elif self.fast and plan is not None:
            run_step_plan(plan, weights, blobs, self.training, weight_key)
        else:
            run_reference(exp, weights, blobs, self.training, self.clip)
        y = blobs[exp.outputs[0]]
        finals = exp.outputs[1:]
        per = 2 if lstm else 1
        hs = torch.cat([blobs[finals[per * k]] for k in range(self.levels)], 0)
        new_state = (hs,)
        if lstm:
            new_state = (hs, torch.cat([blobs[finals[per * k + 1]] for k in range(self.levels)]))
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, new_state

    def extra_repr(self) -> str:
        return (f"{self.kind}, {self.input_size} -> {self.hidden}, levels={self.levels}, "
                f"engine=CAFFE (unrolled)")
