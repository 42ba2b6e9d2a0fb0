"""The classic cells' unrolled nets on torch: the units' ops, how the layers' tensors are
filled and their fast executors (:mod:`.step_plans`); the nodes of a step are
:mod:`designer.cells.classic.expansion`'s, which also says what each chain holds.
"""
from __future__ import annotations

import torch

from designer.engines.unrolled import fast_steps, fill_chains, fills, unit_op
from designer.cells.classic.spec import CELLS
from designer.cells.classic.engines.step_plans import (compile_lstm_plan, compile_step_plan,
                                                       run_lstm_plan, run_step_plan)


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
    """Caffe's LSTM_UNIT: gates [i, f, o, g]; c = cont * f * c_prev + i * g; h = o * tanh(c).
    The LSTM's and LSTMSimple's steps run it, and the LSTMUnit building block as it is."""
    h = c_prev.shape[-1]
    i, f, o = torch.sigmoid(gates[..., :3 * h]).split(h, -1)
    g = torch.tanh(gates[..., 3 * h:])
    c = f * (cont.unsqueeze(-1) * c_prev) + i * g
    return c, o * torch.tanh(c)


@unit_op(CELLS["LSTM"].unit)
def _lstm_unit(node, b: list, run) -> tuple:
    gates = _ClipGrad.apply(b[1], run.clip) if run.clip > 0 else b[1]
    return lstm_unit(b[0], gates, b[2])


def gru_unit(h_conted, h_lin, x_lin):
    """GRU_UNIT: r and z from both transforms, n = tanh(x_n + r * h_n), h = (1 - z) n + z
    h_conted (torch.nn.GRU's equations)."""
    h = h_conted.shape[-1]
    xr, xz, xn = x_lin.split(h, -1)
    hr, hz, hn = h_lin.split(h, -1)
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return (1 - z) * n + z * h_conted


@unit_op(CELLS["GRU"].unit)
def _gru_unit(node, b: list, run) -> tuple:
    return (gru_unit(*b),)


@fills("LSTM", "LSTMSimple", "GRU", "RNN")
def _fill(module, params: dict) -> None:
    """Chain by chain (:func:`fill_chains`); LSTMSimple's clockwork forget-gate bias starts
    the forget gates' biases at 5."""
    fill_chains(module, params)
    if params.get("enable_clockwork_forgetgate_bias", False):
        h = module.hidden
        with torch.no_grad():
            for name, b in module.named_parameters():
                if name.startswith("b_c_l"):
                    b[h:2 * h].fill_(5.0)


fast_steps("LSTM", "LSTMSimple", compile=compile_lstm_plan, run=run_lstm_plan)
fast_steps("GRU", "RNN", compile=compile_step_plan, run=run_step_plan)
