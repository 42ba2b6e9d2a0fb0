"""The mLSTM layer on its two engines: CHUNK (the chunkwise-parallel form) and CAFFE (the
unrolled net, one MLSTM_UNIT per step).

Both hold the same tensors, ``W_xc_l{k}`` ((4H + 2NH) x E) and ``b_c_l{k}`` per level, filled
alike, so a checkpoint of one loads into the other as it is. Both take what every recurrent
layer here takes: batch-first input, a carried state (C, n, m) of shapes ``(levels, N,
H*H/NH)``, ``(levels, N, H)`` and ``(levels, N, NH)``, per-sequence ``lengths`` and ``cont``.

On CHUNK, ``cont`` (0: the sequence restarts at this step) zeroes the state, which the parallel
form cannot do inside a chunk: as on the cuDNN engine, the call is split at the steps where some
sequence restarts (found on the host) and the state is multiplied by ``cont`` between the
pieces; a restart at a padded step changes nothing. The unrolled net reads ``cont`` in each
MLSTM_UNIT.
"""
from __future__ import annotations

import torch
from torch import nn

from designer.graph.layers.mlstm import rows, state_sizes

from .fillers import fill_bias, fill_weight
from .mlstm_cell import CHUNK, mlstm_layers
from .mlstm_expansion import STATES, expand_mlstm
from .recurrent import reset_points
from .recurrent_state import check_lengths, time_major
from .unrolled import REFERENCE, run_reference

FORGET_BIAS = (3.0, 6.0)  # the forget gates' biases start spread over this range (xLSTM's)


class MLSTMLayer(nn.Module):
    """What both engines share: the weights, their filling, the state and ``forward``'s
    preamble. Subclasses run the levels (``_run``)."""

    kind = "mLSTM"
    engine_name = ""

    def __init__(self, input_size: int, hidden: int, heads: int = 1, levels: int = 1,
                 dropout: float = 0.0, batch_first: bool = False, forget: str = "sigmoid",
                 name: str = "rnn", norm: str = "head"):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"{name}: {heads} heads do not divide its {hidden} hidden units")
        self.input_size, self.hidden, self.heads, self.levels = input_size, hidden, heads, levels
        self.dropout, self.batch_first, self.forget, self.name = dropout, batch_first, forget, name
        self.directions, self.state_layers = 1, levels
        self.norm = norm  # the cell_norm: "head" or "none"
        for k in range(levels):
            e = input_size if k == 0 else hidden
            g = rows(hidden, heads)
            self.register_parameter(f"W_xc_l{k}", nn.Parameter(torch.empty(g, e)))
            self.register_parameter(f"b_c_l{k}", nn.Parameter(torch.zeros(g)))

    @classmethod
    def from_params(cls, input_size: int, p: dict, name: str = "rnn"):
        m = cls(input_size, p["num_output"], p.get("num_heads", 1), p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("forget_gate", "sigmoid"), name, p.get("cell_norm", "head"))
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0))
        return m

    def reset_parameters(self, filler: str, bias: float) -> None:
        """The same draws on both engines: W_xc by ``filler``, the biases at ``bias`` but for
        the forget gates', spread from 3 to 6 over the heads (the memory keeps from the start,
        as in xLSTM)."""
        filler = "uniform" if filler == "torch_default" else filler
        for k in range(self.levels):
            fill_weight(getattr(self, f"W_xc_l{k}"), filler, self.hidden, 4)
            b = getattr(self, f"b_c_l{k}")
            fill_bias(b, bias)
            with torch.no_grad():
                b[-self.heads:] = torch.linspace(*FORGET_BIAS, self.heads)

    def initial_state(self, batch: int, device=None, dtype=None) -> tuple:
        """A zero state (C, n, m), each ``(levels, batch, values)``."""
        p = next(self.parameters())
        return tuple(torch.zeros(self.levels, batch, size, device=device or p.device,
                                 dtype=dtype or p.dtype)
                     for size in state_sizes(self.hidden, self.heads))

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        if state is None:
            state = self.initial_state(n, x.device, x.dtype)
        lens = None
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            lens = lengths.to(x.device, torch.int64)
        y, state = self._run(x, cont, tuple(state), lens)
        return (y.transpose(0, 1) if self.batch_first else y), state

    def extra_repr(self) -> str:
        return (f"mLSTM, {self.input_size} -> {self.hidden} in {self.heads} heads, "
                f"levels={self.levels}, forget={self.forget}, norm={self.norm}, "
                f"engine={self.engine_name}")


class ChunkMLSTM(MLSTMLayer):
    """An mLSTM layer on the CHUNK engine (the chunkwise-parallel form)."""

    engine_name = "CHUNK"
    chunk = CHUNK

    def _levels(self, x, state, lengths):
        return mlstm_layers(self._parameters, x, state, self.levels, self.heads, self.forget,
                            lengths, self.dropout, self.training, self.chunk, self.norm)

    def _run(self, x, cont, state, lens):
        t_, n = x.shape[0], x.shape[1]
        points = [] if cont is None else reset_points(cont, True)
        ys, start = [], 0
        for p in points + [t_]:
            if p > start:
                piece = None if lens is None else (lens - start).clamp(0, p - start)
                y, state = self._levels(x[start:p], state, piece)
                ys.append(y)
            if p < t_:
                keep = cont[p].to(x.dtype)
                if lens is not None:  # a restart at a padded step changes nothing
                    keep = torch.where(lens > p, keep, 1.0)
                state = tuple(s * keep.view(1, n, 1) for s in state)
            start = p
        return (ys[0] if len(ys) == 1 else torch.cat(ys, 0)), state


class UnrolledMLSTM(MLSTMLayer):
    """An mLSTM layer on the CAFFE engine: its unrolled net, node by node."""

    engine_name = "CAFFE"
    ran = REFERENCE

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._expansions: dict = {}

    def expansion(self, steps: int, batch="N", lengths: bool = False):
        params = {"num_output": self.hidden, "num_heads": self.heads,
                  "num_layers": self.levels, "dropout_ratio": self.dropout,
                  "forget_gate": self.forget, "cell_norm": self.norm}
        return expand_mlstm(params, steps, batch, self.input_size, self.name, lengths)

    def _run(self, x, cont, state, lens):
        t_, n = x.shape[0], x.shape[1]
        key = (t_, lens is not None)
        if key not in self._expansions:
            self._expansions[key] = self.expansion(t_, lengths=lens is not None)
        exp = self._expansions[key]
        blobs = {"x": x, "cont": x.new_ones(t_, n) if cont is None else cont.to(x.dtype)}
        if lens is not None:
            blobs["lengths"] = lens
        for k in range(self.levels):
            p = f"L{k}/" if self.levels > 1 else ""
            for s, tensor in zip(STATES, state):
                blobs[f"{p}{s}_0"] = tensor[k:k + 1]
        run_reference(exp, self._parameters, blobs, self.training)
        finals = exp.outputs[1:]
        new = tuple(torch.cat([blobs[finals[3 * k + i]] for k in range(self.levels)], 0)
                    for i in range(3))
        return blobs[exp.outputs[0]], new
