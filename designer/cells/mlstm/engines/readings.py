"""How an mLSTM is read step by step (inspect) and what ``parity`` compares for it.

A level is read from its unrolled net per step and head: the stabilised input and forget gates
exp(i~ - m_t) and exp(log f + m_{t-1} - m_t) (both in [0, 1]), the output gate o, and as ``c``
the norm of each head's matrix memory as stored (divided by exp(m_t)). Parity compares the
CHUNK engine (chunks of a third of the steps, so that the check crosses chunks) with the
unrolled net, its weights drawn from [-0.2, 0.2).

Two of its tensors have a rounding floor above the tolerance of their largest value (parity's
measure, :mod:`designer.engines.measure.parity`): the gradient of the starting normaliser, which the
per-head norm all but cancels (some 1e-4 beside gradients near 10, rounded at about 1e-6 by
either engine), and, where a head's read-out is nearly uniform, what the norm divides by its
small spread (the chunkwise form then rounds several times more than the step-by-step one). In
float64 the two agree within some 1e-11 of the normaliser's gradient's largest value, 1e-13
elsewhere.
"""
from __future__ import annotations

import torch

from designer.cells.mlstm.arithmetic import terms
from designer.engines.measure.parity_pairs import parity_pair
from designer.engines.measure.readings import Level, LevelSteps, reading


def _params(module) -> dict:
    return {"num_heads": module.heads, "forget_gate": module.forget, "cell_norm": module.norm}


@reading("mLSTM", gates=("i", "f", "o"), params=_params)
def _mlstm(level: Level) -> LevelSteps:
    heads, forget = level.params["num_heads"], level.params["forget_gate"]
    gates: dict = {"i": [], "f": [], "o": []}
    norms = []
    for t in range(1, level.steps + 1):
        _, _, _, o, ig, log_f = terms(level.blob("W_xc_x", t), heads, forget)
        m_prev, m = level.blob("m", t - 1), level.blob("m", t)
        gates["i"].append(torch.exp(ig - m))
        gates["f"].append(torch.exp(log_f + m_prev - m))
        gates["o"].append(o)
        c = level.blob("C", t)
        norms.append(c.reshape(c.shape[0], heads, -1).norm(dim=-1))
    return LevelSteps(level.level, gates, norms, level.hs())


parity_pair("mLSTM", engine="CHUNK",
            says=lambda m: f"the chunkwise form, chunks of {m.chunk} steps",
            padding="chunkwise", label="chunkwise",
            carries=("num_heads", "forget_gate", "cell_norm"), spread=0.2,
            settings=lambda steps: {"chunk": max(2, steps // 3)})
