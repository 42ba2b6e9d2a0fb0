"""How the classic cells are read step by step (inspect) and what ``parity`` compares for them.

Read from their unrolled nets' blobs: an LSTM or LSTMSimple level from ``gate_input_t`` (the
pre-activations [i, f, o, g] of step t), ``c_t`` and ``h_t``; a GRU level from the step's input
and recurrent transforms ``W_xc_x_t`` and ``W_hc_h_{t-1}``, from which r, z and n follow
exactly as the GRU_UNIT computes them, and ``h_t``; an RNN level from ``h_t`` alone.

Parity compares torch.nn's module (the CUDNN engine) with the unrolled net for an LSTM, GRU or
RNN; LSTMSimple has no other engine, so its unrolled net's fused steps are compared with its
node-by-node executor.
"""
from __future__ import annotations

import torch

from designer.cells.classic.engines.convert import cudnn_to_caffe
from designer.engines.measure.parity_pairs import parity_pair
from designer.engines.measure.readings import Level, LevelSteps, reading


def _nonlinearity(module) -> dict:
    """The RNN's activation, as either engine's module holds it."""
    held = getattr(module, "nonlinearity", None) or getattr(module.rnn, "nonlinearity", "tanh")
    return {"nonlinearity": held}


@reading("LSTM", "LSTMSimple", gates=("i", "f", "o", "g"), tanh=("g",), params=_nonlinearity)
def _lstm(level: Level) -> LevelSteps:
    h = level.hidden
    gates: dict = {g: [] for g in ("i", "f", "o", "g")}
    for pre in level.each("gate_input"):
        i, f, o = torch.sigmoid(pre[:, :3 * h]).split(h, -1)
        for name, value in zip(gates, (i, f, o, torch.tanh(pre[:, 3 * h:]))):
            gates[name].append(value)
    return LevelSteps(level.level, gates, level.each("c"), level.hs())


@reading("GRU", gates=("r", "z", "n"), tanh=("n",), params=_nonlinearity)
def _gru(level: Level) -> LevelSteps:
    h = level.hidden
    gates: dict = {g: [] for g in ("r", "z", "n")}
    for t in range(1, level.steps + 1):
        xr, xz, xn = level.blob("W_xc_x", t).split(h, -1)
        hr, hz, hn = level.blob("W_hc_h", t - 1).split(h, -1)
        r = torch.sigmoid(xr + hr)
        gates["r"].append(r)
        gates["z"].append(torch.sigmoid(xz + hz))
        gates["n"].append(torch.tanh(xn + r * hn))
    return LevelSteps(level.level, gates, None, level.hs())


@reading("RNN", gates=(), params=_nonlinearity)
def _rnn(level: Level) -> LevelSteps:
    return LevelSteps(level.level, {}, None, level.hs())


def _grads_as_caffe(kind: str, grads: dict, levels: int) -> dict:
    """torch's parameter gradients in the Caffe layout.

    The weight conversion applies with one change: each torch bias gradient already equals
    db_c (b_c = b_ih + b_hh), so the b_hh gradients must not be added in again (except for the
    GRU, whose b_hc stays its own tensor).
    """
    grads = {k.removeprefix("rnn."): v for k, v in grads.items()}
    zero = {k: torch.zeros_like(v) for k, v in grads.items() if k.startswith("bias_hh")}
    return cudnn_to_caffe(kind, grads if kind == "GRU" else {**grads, **zero}, levels)


parity_pair("LSTM", "GRU", "RNN", engine="CUDNN", says=lambda m: f"torch.nn.{m.kind}",
            padding="cuDNN", label="cuDNN", carries=("nonlinearity",), grads=_grads_as_caffe)
parity_pair("LSTMSimple", engine="CAFFE", label="fused steps",
            reference_label="per-step nodes", reference_first=True, reference_steps=False)
