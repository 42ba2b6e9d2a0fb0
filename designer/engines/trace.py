"""A recurrent layer read step by step: the gates, cell and hidden state of every time step.

The layer runs as its unrolled net (:mod:`designer.engines.expansion`) through the node-by-node
reference executor (:func:`designer.engines.unrolled.run_reference`), and the per-step blobs are
read by name:

- LSTM and LSTMSimple: ``gate_input_t`` (the pre-activations [i, f, o, g] of step t), ``c_t``
  and ``h_t``;
- GRU: the step's input and recurrent transforms ``W_xc_x_t`` and ``W_hc_h_{t-1}``, from which
  r, z and n follow exactly as the GRU_UNIT computes them, and ``h_t``;
- RNN: ``h_t``;
- MinGRU: the step's input transform ``W_xc_x_t``, whose first block gives the update gate
  z = sigmoid(k), and ``h_t``; MinLSTM: the normalised forget and input gates f' and i' from
  its first two blocks, and ``h_t``;
- sLSTM: ``gate_input_t`` with the normaliser and stabiliser the step found, which give the
  stabilised gates i' and f' (each in [0, 1]), the cell input z = tanh(z~) (named ``g`` here,
  as the LSTM's candidate) and o, and ``c_t``, ``n_t`` (the normaliser) and ``h_t``;
- mLSTM: its own unrolled net (:mod:`designer.cells.mlstm.engines.unrolled`), read per step and
  head as the stabilised input and forget gates, o, and the norm of the matrix memory as c.

A layer on the CUDNN engine is read the same way after its weights are converted
(:func:`designer.engines.convert.cudnn_to_caffe`); the unrolled net with the converted weights
computes the same function as the fused call (``designer.engines.parity``), so the numbers are
the layer's own. The traced output is the executor's, kept in the autograd graph, so the
gradient of a loss reaches every step's ``h_t`` blob through the recurrence.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from designer.cells.classic.engines.convert import cudnn_to_caffe
from designer.engines.expansion import Expansion, expand_params
from designer.cells.minimal.engines.scan import ScanRecurrent
from designer.cells.mlstm.engines.chunk import MLSTMLayer
from designer.cells.mlstm.arithmetic import terms
from designer.cells.mlstm.engines.unrolled import STATES, expand_mlstm
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.engines.recurrent_state import zero_state
from designer.cells.slstm.engines.fused import FusedSLSTM
from designer.cells.slstm.arithmetic import gates as slstm_gates
from designer.engines.unrolled import UnrolledRecurrent, run_reference

GATE_NAMES = {"LSTM": ("i", "f", "o", "g"), "LSTMSimple": ("i", "f", "o", "g"),
              "GRU": ("r", "z", "n"), "RNN": (), "MinGRU": ("z",), "MinLSTM": ("f", "i"),
              "mLSTM": ("i", "f", "o"), "sLSTM": ("i", "f", "g", "o")}
STATE_NAMES = {"LSTM": ("h", "c"), "LSTMSimple": ("h", "c"), "sLSTM": ("h", "c", "n", "m")}
TANH_GATES = ("g", "n")  # candidate values in [-1, 1]; the others are sigmoids in [0, 1]


@dataclass
class LevelSteps:
    """One stacked level of a traced layer.

    Attributes
    ----------
    level : int
        0-based.
    gates : dict
        Gate name -> list over steps of (N, H) activations.
    c : list or None
        The cell state c_t of every step, (N, H) each (LSTM and sLSTM only).
    h : list
        The ``h_t`` blobs themselves, (1, N, H) each: differentiate a loss with respect to
        them for the gradient that reaches step t (through the output and the recurrence).
    n : list or None
        The normaliser n_t of every step, (N, H) each (sLSTM only).
    """

    level: int
    gates: dict
    c: list | None
    h: list
    n: list | None = None


@dataclass
class LayerSteps:
    """Everything one traced recurrent layer did, level by level."""

    kind: str
    engine: str            # CUDNN, CAFFE or PERSIST: the engine the layer trains on
    hidden: int
    levels: list


def caffe_weights(module) -> dict:
    """The layer's weights in the unrolled (Caffe) layout: ``W_xc_l0``, ``b_c_l0``, ..."""
    same = (UnrolledRecurrent, ScanRecurrent, FusedSLSTM, MLSTMLayer)  # the same tensors
    if isinstance(module, same):
        return dict(module.named_parameters())
        return dict(module.named_parameters())
    if isinstance(module, CudnnRecurrent):
        return cudnn_to_caffe(module.kind, dict(module.rnn.named_parameters()), module.levels)
    raise TypeError(f"{type(module).__name__} is not a recurrent layer of either engine")


def describe(module) -> dict:
    """Kind, sizes and settings of a recurrent module of either engine (an mLSTM's forget
    gate as its ``nonlinearity``, and its ``heads``)."""
    if isinstance(module, MLSTMLayer):
        return {"kind": "mLSTM", "engine": module.engine_name, "input_size": module.input_size,
                "hidden": module.hidden, "levels": module.levels, "heads": module.heads,
                "nonlinearity": module.forget, "clip": 0.0, "batch_first": module.batch_first,
                "cell_norm": module.norm}
    if isinstance(module, FusedSLSTM):
        return {"kind": "sLSTM", "engine": "FUSED", "input_size": module.input_size,
                "hidden": module.hidden, "levels": module.levels, "nonlinearity": "tanh",
                "clip": 0.0, "batch_first": module.batch_first, "heads": module.heads,
                "forget_gate": module.forget_gate}
    if isinstance(module, (UnrolledRecurrent, ScanRecurrent)):
        scan = isinstance(module, ScanRecurrent)
        return {"kind": module.kind, "engine": "SCAN" if scan else "CAFFE",
                "input_size": module.input_size, "hidden": module.hidden,
                "levels": module.levels,
                "nonlinearity": "tanh" if scan else module.nonlinearity,
                "clip": 0.0 if scan else module.clip, "batch_first": module.batch_first,
                "heads": getattr(module, "heads", 1),
                "forget_gate": getattr(module, "forget_gate", "sigmoid")}
    rnn = module.rnn
    engine = getattr(module, "engine_name", "CUDNN")  # PERSIST holds the same tensors
    return {"kind": module.kind, "engine": engine, "input_size": rnn.input_size,
            "hidden": module.hidden, "levels": module.levels,
            "nonlinearity": getattr(rnn, "nonlinearity", "tanh"), "clip": 0.0,
            "batch_first": module.batch_first}


def expansion_of(info: dict, steps: int, batch: int) -> Expansion:
    """The unrolled net of a module described by :func:`describe` (no dropout: inspection
    runs the net as it predicts)."""
    params = {"num_output": info["hidden"], "num_layers": info["levels"], "dropout_ratio": 0.0,
              "nonlinearity": info["nonlinearity"], "num_heads": info.get("heads", 1),
              "forget_gate": info.get("forget_gate", "sigmoid"),
              "cell_norm": info.get("cell_norm", "head")}
    return expand_params(info["kind"], params, steps, batch, info["input_size"])


def trace_recurrent(module, x: torch.Tensor, cont: torch.Tensor | None = None,
                    state: tuple | None = None) -> tuple[torch.Tensor, tuple, LayerSteps]:
    """Run a recurrent layer through its per-step nodes and read every step.

    Parameters
    ----------
    module
        A `CudnnRecurrent` or `UnrolledRecurrent`.
    x, cont, state
        As the layer's ``forward`` takes them (``batch_first`` honoured).

    Returns
    -------
    y, new_state, steps
        The layer's output and final state (as ``forward`` returns them, computed by the
        per-step nodes) and the `LayerSteps`.
    """
    info = describe(module)
    kind, levels = info["kind"], info["levels"]
    if info["batch_first"]:
        x = x.transpose(0, 1)
        cont = None if cont is None else cont.transpose(0, 1)
    t_, n = x.shape[0], x.shape[1]
    cont = x.new_ones(t_, n) if cont is None else cont.to(x.dtype)
    if kind == "mLSTM":
        return _trace_mlstm(module, info, x, cont, state)
    if state is None:
        state = zero_state(kind, levels, n, info["hidden"], x)
    names = STATE_NAMES.get(kind, ("h",))
    exp = expansion_of(info, t_, n)
    blobs = {"x": x, "cont": cont}
    for k in range(levels):
        p = f"L{k}/" if levels > 1 else ""
        for j, x0 in enumerate(names):
            blobs[f"{p}{x0}_0"] = state[j][k:k + 1]
    run_reference(exp, caffe_weights(module), blobs, training=False, clip=info["clip"])
    traced = [_read_level(kind, blobs, k, levels, t_, info["hidden"],
                          info.get("forget_gate") == "exp") for k in range(levels)]
    y = blobs[exp.outputs[0]]
    finals = exp.outputs[1:]
    per = len(names)
    new_state = tuple(torch.cat([blobs[finals[per * k + j]] for k in range(levels)], 0)
                      for j in range(per))
    if info["batch_first"]:
        y = y.transpose(0, 1)
    return y, new_state, LayerSteps(kind, info["engine"], info["hidden"], traced)


def _read_level(kind: str, blobs: dict, k: int, levels: int, t_: int, h: int,
                exp_forget: bool = False) -> LevelSteps:
    p = f"L{k}/" if levels > 1 else ""
    steps = range(1, t_ + 1)
    hs = [blobs[f"{p}h_{t}"] for t in steps]
    names = GATE_NAMES[kind]
    gates: dict = {g: [] for g in names}
    c = None
    if kind == "sLSTM":
        return _read_slstm(blobs, p, k, t_, hs, exp_forget)
    if kind in ("LSTM", "LSTMSimple"):
        c = [blobs[f"{p}c_{t}"][0] for t in steps]
        for t in steps:
            pre = blobs[f"{p}gate_input_{t}"][0]
            i, f, o = torch.sigmoid(pre[:, :3 * h]).split(h, -1)
            for name, value in zip(names, (i, f, o, torch.tanh(pre[:, 3 * h:]))):
                gates[name].append(value)
    elif kind == "GRU":
        for t in steps:
            xr, xz, xn = blobs[f"{p}W_xc_x_{t}"][0].split(h, -1)
            hr, hz, hn = blobs[f"{p}W_hc_h_{t - 1}"][0].split(h, -1)
            r = torch.sigmoid(xr + hr)
            gates["r"].append(r)
            gates["z"].append(torch.sigmoid(xz + hz))
            gates["n"].append(torch.tanh(xn + r * hn))
    elif kind == "MinGRU":
        for t in steps:
            gates["z"].append(torch.sigmoid(blobs[f"{p}W_xc_x_{t}"][0][:, :h]))
    elif kind == "MinLSTM":
        for t in steps:
            f, i = torch.sigmoid(blobs[f"{p}W_xc_x_{t}"][0][:, :2 * h]).split(h, -1)
            gates["f"].append(f / (f + i))
            gates["i"].append(i / (f + i))
    return LevelSteps(k, gates, c, hs)


def _read_slstm(blobs: dict, p: str, k: int, t_: int, hs: list, exp_forget: bool) -> LevelSteps:
    """An sLSTM level: its stabilised gates from each step's pre-activations and the
    normaliser and stabiliser it found (zeroed where 'cont' restarts), c and n."""
    gates: dict = {g: [] for g in GATE_NAMES["sLSTM"]}
    for t in range(1, t_ + 1):
        keep = blobs["cont"][t - 1].unsqueeze(-1)
        n_prev, m_prev = (blobs[f"{p}{s}_{t - 1}"][0] * keep for s in ("n", "m"))
        for name, value in zip(GATE_NAMES["sLSTM"],
                               slstm_gates(blobs[f"{p}gate_input_{t}"][0], n_prev, m_prev,
                                           exp_forget)):
            gates[name].append(value)
    steps = range(1, t_ + 1)
    return LevelSteps(k, gates, [blobs[f"{p}c_{t}"][0] for t in steps], hs,
                      [blobs[f"{p}n_{t}"][0] for t in steps])


def _trace_mlstm(module, info: dict, x, cont, state) -> tuple:
    """An mLSTM through its unrolled net: per step and head the stabilised input and forget
    gates exp(i~ - m_t) and exp(log f + m_{t-1} - m_t) (both in [0, 1]), the output gate o,
    and as ``c`` the norm of each head's matrix memory as stored (divided by exp(m_t))."""
    levels, heads, t_ = info["levels"], info["heads"], x.shape[0]
    params = {"num_output": info["hidden"], "num_heads": heads, "num_layers": levels,
              "forget_gate": info["nonlinearity"],
              "cell_norm": info.get("cell_norm", "head")}  # no dropout: as it predicts
    exp = expand_mlstm(params, t_, x.shape[1], info["input_size"])
    if state is None:
        state = module.initial_state(x.shape[1], x.device, x.dtype)
    blobs = {"x": x, "cont": cont}
    for k in range(levels):
        p = f"L{k}/" if levels > 1 else ""
        for s, tensor in zip(STATES, state):
            blobs[f"{p}{s}_0"] = tensor[k:k + 1]
    run_reference(exp, caffe_weights(module), blobs, training=False)
    traced = []
    for k in range(levels):
        p = f"L{k}/" if levels > 1 else ""
        gates: dict = {"i": [], "f": [], "o": []}
        norms, hs = [], []
        for t in range(1, t_ + 1):
            _, _, _, o, ig, log_f = terms(blobs[f"{p}W_xc_x_{t}"][0], heads, info["nonlinearity"])
            m_prev, m = blobs[f"{p}m_{t - 1}"][0], blobs[f"{p}m_{t}"][0]
            gates["i"].append(torch.exp(ig - m))
            gates["f"].append(torch.exp(log_f + m_prev - m))
            gates["o"].append(o)
            c = blobs[f"{p}C_{t}"][0]
            norms.append(c.reshape(c.shape[0], heads, -1).norm(dim=-1))
            hs.append(blobs[f"{p}h_{t}"])
        traced.append(LevelSteps(k, gates, norms, hs))
    y = blobs[exp.outputs[0]]
    finals = exp.outputs[1:]
    new_state = tuple(torch.cat([blobs[finals[3 * k + i]] for k in range(levels)], 0)
                      for i in range(3))
    if info["batch_first"]:
        y = y.transpose(0, 1)
    return y, new_state, LayerSteps("mLSTM", info["engine"], info["hidden"], traced)
