"""Weight conversion between the CUDNN and CAFFE engines, both ways.

torch keeps, per stacked level, ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}`` and
``bias_hh_l{k}`` with the LSTM gates in the order [i, f, g, o]; the Caffe net keeps ``W_xc_l{k}``,
``W_hc_l{k}`` and one ``b_c_l{k}`` with the gates in the order [i, f, o, g].

- LSTM: gate blocks reordered; b_c = b_ih + b_hh (back: b_ih = b_c, b_hh = 0).
- RNN: b_c = b_ih + b_hh (back: b_hh = 0).
- GRU: the same order [r, z, n] in both; b_hc is kept apart (the reset gate multiplies it).

The backward direction of a bidirectional layer converts the same way, between torch's
``weight_ih_l{k}_reverse``... and the Caffe net's ``W_xc_l{k}_reverse``...; a layer's tensors
say whether it has one.

A model trained on one engine therefore loads and runs on the other, computing the same function.
"""
from __future__ import annotations

import torch

from designer.graph.registry import weight_layout

TORCH_TO_CAFFE_LSTM = (0, 1, 3, 2)  # torch blocks [i, f, g, o] -> caffe [i, f, o, g]
SUFFIXES = ("", "_reverse")  # the forward and the backward direction, as torch names them


def _reorder(t: torch.Tensor, order: tuple) -> torch.Tensor:
    blocks = t.chunk(4, 0)
    return torch.cat([blocks[j] for j in order], 0)


def _chains(sd: dict, levels: int):
    """``(k, suffix)`` for every level and direction the tensors hold."""
    both = any(key.endswith(SUFFIXES[1]) for key in sd)
    return [(k, s) for k in range(levels) for s in (SUFFIXES if both else SUFFIXES[:1])]


def cudnn_to_caffe(kind: str, sd: dict, levels: int) -> dict:
    """torch ``nn.LSTM/GRU/RNN`` tensors (no prefix) -> the unrolled layer's tensors."""
    out = {}
    for k, s in _chains(sd, levels):
        wi, wh = sd[f"weight_ih_l{k}{s}"], sd[f"weight_hh_l{k}{s}"]
        bi, bh = sd[f"bias_ih_l{k}{s}"], sd[f"bias_hh_l{k}{s}"]
        if kind == "LSTM":
            out[f"W_xc_l{k}{s}"] = _reorder(wi, TORCH_TO_CAFFE_LSTM)
            out[f"W_hc_l{k}{s}"] = _reorder(wh, TORCH_TO_CAFFE_LSTM)
            out[f"b_c_l{k}{s}"] = _reorder(bi + bh, TORCH_TO_CAFFE_LSTM)
        elif kind == "GRU":
            out[f"W_xc_l{k}{s}"], out[f"W_hc_l{k}{s}"] = wi.clone(), wh.clone()
            out[f"b_c_l{k}{s}"], out[f"b_hc_l{k}{s}"] = bi.clone(), bh.clone()
        elif kind == "RNN":
            out[f"W_xc_l{k}{s}"], out[f"W_hc_l{k}{s}"] = wi.clone(), wh.clone()
            out[f"b_c_l{k}{s}"] = bi + bh
        else:
            raise ValueError(f"{kind} layers have no cuDNN form")
    return out


def caffe_to_cudnn(kind: str, sd: dict, levels: int) -> dict:
    """The unrolled layer's tensors (no prefix) -> torch ``nn.LSTM/GRU/RNN`` tensors."""
    out = {}
    for k, s in _chains(sd, levels):
        wi, wh, b = sd[f"W_xc_l{k}{s}"], sd[f"W_hc_l{k}{s}"], sd[f"b_c_l{k}{s}"]
        if kind == "LSTM":
            # the reorder is its own inverse: it swaps blocks 2 and 3
            out[f"weight_ih_l{k}{s}"] = _reorder(wi, TORCH_TO_CAFFE_LSTM)
            out[f"weight_hh_l{k}{s}"] = _reorder(wh, TORCH_TO_CAFFE_LSTM)
            out[f"bias_ih_l{k}{s}"] = _reorder(b, TORCH_TO_CAFFE_LSTM)
            out[f"bias_hh_l{k}{s}"] = torch.zeros_like(b)
        elif kind == "GRU":
            out[f"weight_ih_l{k}{s}"], out[f"weight_hh_l{k}{s}"] = wi.clone(), wh.clone()
            out[f"bias_ih_l{k}{s}"] = b.clone()
            out[f"bias_hh_l{k}{s}"] = sd[f"b_hc_l{k}{s}"].clone()
        elif kind == "RNN":
            out[f"weight_ih_l{k}{s}"], out[f"weight_hh_l{k}{s}"] = wi.clone(), wh.clone()
            out[f"bias_ih_l{k}{s}"], out[f"bias_hh_l{k}{s}"] = b.clone(), torch.zeros_like(b)
        else:
            raise ValueError(f"{kind} layers have no cuDNN form")
    return out


def convert_layer(kind: str, sd: dict, levels: int, src: str, dst: str) -> dict:
    """Convert one recurrent layer's tensors (module-relative keys) from engine src to dst.

    Both directions of a bidirectional layer are converted (its tensors show it has two).
    """
    src, dst = weight_layout(src), weight_layout(dst)
    if src == dst:
        return dict(sd)
    if src == "CUDNN":
        inner = {k[len("rnn."):]: v for k, v in sd.items() if k.startswith("rnn.")}
        return cudnn_to_caffe(kind, inner, levels)
    return {f"rnn.{k}": v for k, v in caffe_to_cudnn(kind, sd, levels).items()}


def convert_state_dict(state: dict, layers: dict, src: dict, dst: dict) -> dict:
    """Convert a whole ``Net`` state dict between engine choices.

    Parameters
    ----------
    state
        ``Net.state_dict()`` keys (``layers.<name>.<param>``).
    layers
        Recurrent layer name -> ``(kind, num_layers)``.
    src, dst
        Recurrent layer name -> engine (``CUDNN``, ``CAFFE`` or ``PERSIST``, which holds
        the cuDNN engine's tensors) the state has / should have.
    """
    out = {}
    per_layer: dict[str, dict] = {}
    for key, value in state.items():
        _, name, rest = key.split(".", 2)
        if name in layers and _layout(src.get(name)) != _layout(dst.get(name)):
            per_layer.setdefault(name, {})[rest] = value
        else:
            out[key] = value
    for name, sd in per_layer.items():
        kind, levels = layers[name]
        for rest, value in convert_layer(kind, sd, levels, src[name], dst[name]).items():
            out[f"layers.{name}.{rest}"] = value
    return out


def _layout(engine: str | None) -> str | None:
    return None if engine is None else weight_layout(engine)
