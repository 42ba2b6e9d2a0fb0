"""A recurrent layer on the CAFFE engine: the module that holds its unrolled net's weights and
runs the net, on the reference executor or on its cell's fast executor.

Its tensors are the expansion's weights (:mod:`designer.engines.expansion.expand`), one parameter per
weight of each chain (``W_xc_l0``, ``b_c_l0``, ``W_hc_l0_reverse``...: :func:`weight_key`),
filled as the layer's cell says (:func:`fills`; by default :func:`fill_chains`). The state it
carries is the cell's ``states``, each ``(levels x directions, N, H)``.

A cell may register a fast executor (:func:`fast_steps`): ``compile`` checks that the
expansion holds exactly the per-step pattern it reproduces and returns its plan, else
``None``; then ``run`` runs the plan (a layer given ``lengths`` gets HOLD nodes, which a plan
may refuse: it then runs on the reference executor, as does a module whose ``fast`` is off).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from designer.graph import parts, registry
from designer.graph.once import put

from designer.engines.expansion.expand import SUFFIXES, Expansion, expand_params
from designer.engines.tensors.fillers import fill_bias, fill_weight
from designer.engines.tensors.recurrent_state import check_lengths, time_major
from designer.engines.unrolled.ops import REFERENCE, run_reference, weight_key

Fill = Callable[[nn.Module, dict], None]
FILLS: dict[str, Fill] = {}  # layer type -> how its unrolled module's tensors are filled


@dataclass(frozen=True)
class FastSteps:
    """A cell's fast executor of its unrolled net: ``compile(expansion)`` -> a plan, or
    ``None`` when the nodes are not the pattern it runs; ``run(plan, weights, blobs,
    training, clip)`` fills ``blobs`` as the reference executor would."""

    compile: Callable[[Expansion], object]
    run: Callable[[object, dict, dict, bool, float], dict]


FAST_STEPS: dict[str, FastSteps] = {}  # layer type -> its fast executor


def fills(*kinds: str):
    """Decorator: ``fill(module, params)`` fills a ``kinds`` layer's unrolled module
    (``params``: the layer's parameters, ``weight_filler`` and ``bias_filler`` among them)."""
    def register(fill: Fill) -> Fill:
        for kind in kinds:
            put(FILLS, kind, fill, "the unrolled fill")
        return fill
    return register


def fast_steps(*kinds: str, compile: Callable, run: Callable) -> None:
    """Register the fast executor of the ``kinds`` layers' unrolled nets (:class:`FastSteps`)."""
    for kind in kinds:
        FAST_STEPS[kind] = FastSteps(compile, run)


def fill_chains(module: nn.Module, params: dict) -> None:
    """The default filling, chain by chain: every matrix by ``weight_filler`` (H units, a
    block per gate), ``b_c`` at ``bias_filler``, every other bias at zero."""
    filler = params.get("weight_filler", "uniform")
    if filler == "torch_default":
        filler = "uniform"  # what torch.nn's recurrent layers do: U(-1/sqrt(H), 1/sqrt(H))
    gates = len(registry.cell(module.kind).gates)
    for blob_weight in module.expansion(1).weights:
        tensor = getattr(module, weight_key(blob_weight))
        if tensor.dim() > 1:
            fill_weight(tensor, filler, module.hidden, gates)
        else:
            stem = blob_weight.rpartition("/")[2]
            fill_bias(tensor, params.get("bias_filler", 0.0) if stem.startswith("b_c") else 0.0)


class UnrolledRecurrent(nn.Module):
    """A recurrent layer on the CAFFE engine (its unrolled net), of any cell whose chains
    unroll (:func:`designer.engines.expansion.expand.chain`)."""

    engine_name = "CAFFE"

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
        self.fast = True  # use the cell's fast executor where the expansion allows it
        self.ran = REFERENCE  # which executor ran the last call, in words
        self._plans: dict[tuple, tuple] = {}
        self.heads, self.forget_gate = heads, forget_gate
        for blob_weight, shape in self.expansion(1).weights.items():
            tensor = torch.zeros(shape) if len(shape) == 1 else torch.empty(shape)
            self.register_parameter(weight_key(blob_weight), nn.Parameter(tensor))

    @classmethod
    def from_params(cls, kind: str, input_size: int, p: dict, name: str = "rnn"):
        m = cls(kind, input_size, p["num_output"], p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("nonlinearity", "tanh"), p.get("clipping_threshold", 0.0), name,
                p.get("bidirectional", False), p.get("num_heads", 1),
                p.get("forget_gate", "sigmoid"))
        more = {k: v for k, v in p.items() if k not in ("weight_filler", "bias_filler")}
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0), **more)
        return m

    def reset_parameters(self, filler: str, bias: float, **params) -> None:
        """Fill the tensors as the layer's cell does (:func:`fills`): the weights by
        ``filler``, the biases at ``bias``; ``params``: the layer's other parameters its
        filling may read."""
        parts.need(parts.ENGINES)
        fill = FILLS.get(self.kind, fill_chains)
        fill(self, {**params, "weight_filler": filler, "bias_filler": bias})

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
            fast = FAST_STEPS.get(self.kind)
            self._plans[key] = (exp, fast.compile(exp) if fast is not None else None)
        return self._plans[key]

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        if cont is None:
            cont = x.new_ones(t_, n)
        else:
            cont = cont.to(x.dtype)
        names = registry.cell(self.kind).states
        if state is None:
            state = tuple(x.new_zeros(self.state_layers, n, self.hidden) for _ in names)
        exp, plan = self._plan(t_, lengths is not None)
        blobs = {"x": x, "cont": cont}
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            blobs["lengths"] = lengths.to(x.device)
        for k in range(self.levels):
            p = f"L{k}/" if self.levels > 1 else ""
            for d, s in enumerate(SUFFIXES[:self.directions]):
                i = k * self.directions + d
                for j, x0 in enumerate(names):
                    blobs[f"{p}{x0}_0{s}"] = state[j][i:i + 1]
        weights = self._parameters  # this module holds its weights itself (no children)
        if self.fast and plan is not None:
            FAST_STEPS[self.kind].run(plan, weights, blobs, self.training, self.clip)
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
