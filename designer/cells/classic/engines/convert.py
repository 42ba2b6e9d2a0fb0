"""The classic cells' weights between torch.nn's layout (CUDNN, and AUTO and PERSIST, which
hold its tensors) and the unrolled net's (CAFFE), both ways.

torch keeps, per stacked level, ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}`` and
``bias_hh_l{k}`` with its own gate order (an LSTM's [i, f, g, o]); the Caffe net keeps
``W_xc_l{k}``, ``W_hc_l{k}`` and one ``b_c_l{k}`` with the gates in the cell's order
(:mod:`designer.cells.classic.spec`: an LSTM's [i, f, o, g]).

- LSTM: gate blocks reordered; b_c = b_ih + b_hh (back: b_ih = b_c, b_hh = 0).
- RNN: b_c = b_ih + b_hh (back: b_hh = 0).
- GRU: the same order [r, z, n] in both; b_hc is kept apart (the reset gate multiplies it).

The backward direction of a bidirectional layer converts the same way, between torch's
``weight_ih_l{k}_reverse``... and the Caffe net's ``W_xc_l{k}_reverse``...; a layer's tensors
say whether it has one. A model trained on one engine therefore loads and runs on the other,
computing the same function.
"""
from __future__ import annotations

import torch

from designer.cells.classic.spec import CELLS
from designer.engines.net.convert import converter

TORCH_GATES = {"LSTM": ("i", "f", "g", "o"), "GRU": ("r", "z", "n"), "RNN": ("h",)}
HC_BIAS = ("GRU",)  # the Caffe net keeps torch's b_hh apart, as b_hc
SUFFIXES = ("", "_reverse")  # the forward and the backward direction, as torch names them
PREFIX = "rnn."  # where the cuDNN engine's module keeps torch's tensors


def _orders(kind: str) -> tuple[tuple, tuple]:
    """``(torch -> Caffe, Caffe -> torch)``: the gate blocks' permutations for ``kind``."""
    if kind not in TORCH_GATES:
        raise ValueError(f"{kind} layers have no cuDNN form")
    torch_gates, caffe_gates = TORCH_GATES[kind], CELLS[kind].gates
    return (tuple(torch_gates.index(g) for g in caffe_gates),
            tuple(caffe_gates.index(g) for g in torch_gates))


def _reorder(t: torch.Tensor, order: tuple) -> torch.Tensor:
    blocks = t.chunk(len(order), 0)
    return torch.cat([blocks[j] for j in order], 0)


def _chains(sd: dict, levels: int):
    """``(k, suffix)`` for every level and direction the tensors hold."""
    both = any(key.endswith(SUFFIXES[1]) for key in sd)
    return [(k, s) for k in range(levels) for s in (SUFFIXES if both else SUFFIXES[:1])]


def cudnn_to_caffe(kind: str, sd: dict, levels: int) -> dict:
    """torch ``nn.LSTM/GRU/RNN`` tensors (no prefix) -> the unrolled layer's tensors."""
    order, _ = _orders(kind)
    out = {}
    for k, s in _chains(sd, levels):
        wi, wh = sd[f"weight_ih_l{k}{s}"], sd[f"weight_hh_l{k}{s}"]
        bi, bh = sd[f"bias_ih_l{k}{s}"], sd[f"bias_hh_l{k}{s}"]
        out[f"W_xc_l{k}{s}"], out[f"W_hc_l{k}{s}"] = _reorder(wi, order), _reorder(wh, order)
        if kind in HC_BIAS:
            out[f"b_c_l{k}{s}"], out[f"b_hc_l{k}{s}"] = _reorder(bi, order), _reorder(bh, order)
        else:
            out[f"b_c_l{k}{s}"] = _reorder(bi + bh, order)
    return out


def caffe_to_cudnn(kind: str, sd: dict, levels: int) -> dict:
    """The unrolled layer's tensors (no prefix) -> torch ``nn.LSTM/GRU/RNN`` tensors."""
    _, order = _orders(kind)
    out = {}
    for k, s in _chains(sd, levels):
        wi, wh, b = sd[f"W_xc_l{k}{s}"], sd[f"W_hc_l{k}{s}"], sd[f"b_c_l{k}{s}"]
        out[f"weight_ih_l{k}{s}"] = _reorder(wi, order)
        out[f"weight_hh_l{k}{s}"] = _reorder(wh, order)
        out[f"bias_ih_l{k}{s}"] = _reorder(b, order)
        out[f"bias_hh_l{k}{s}"] = (_reorder(sd[f"b_hc_l{k}{s}"], order) if kind in HC_BIAS
                                   else torch.zeros_like(b))
    return out


@converter(*TORCH_GATES)
def convert(kind: str, sd: dict, levels: int, src: str, dst: str) -> dict:
    """A layer's tensors (module-relative keys) from ``src``'s layout to ``dst``'s (CUDNN or
    CAFFE): the cuDNN engine's module keeps torch's tensors under ``rnn.``."""
    if src == "CUDNN":
        inner = {k[len(PREFIX):]: v for k, v in sd.items() if k.startswith(PREFIX)}
        return cudnn_to_caffe(kind, inner, levels)
    return {f"{PREFIX}{k}": v for k, v in caffe_to_cudnn(kind, sd, levels).items()}
