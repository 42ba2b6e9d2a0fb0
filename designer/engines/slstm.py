"""The FUSED engine of the sLSTM: the input transform of all steps as one GEMM, then the
recurrence: on a CUDA device with Triton, one launch of a persistent kernel per level and
direction (:mod:`designer.engines.slstm_kernel`; backward one launch and one GEMM), else a step
loop with the heads' recurrent blocks batched into one product a step, and the kernels' gradient
written out (:class:`designer.engines.slstm_cell.KernelGradUnit`; autograd does the rest). Both
compute the same numbers (within 1e-5 in fp32, tested); ``ran`` and ``fallback`` say which ran
the last call and why not the kernels, and a CUDA call that cannot run them warns once per
reason.

The layer holds what its unrolled net holds (``W_xc_l{k}``, ``b_c_l{k}`` and ``W_hc_l{k}`` per
level, the backward direction's suffixed ``_reverse``), so a checkpoint of either engine loads
into the other as it is. :func:`designer.engines.slstm_cell.slstm_layers` does the arithmetic;
this module adds what every recurrent layer here takes: batch-first input, a carried state
``(h, c, n, m)``, each ``(num_layers * directions, N, H)``, per-sequence ``lengths``, and
``cont`` (read on the device, step by step: nothing is found on the host, so a training step
with ``cont`` is captured in a CUDA graph like one without).
"""
from __future__ import annotations

import functools
import warnings

import torch
from torch import nn

from . import slstm_kernel
from .fillers import fill_bias, fill_weight
from .recurrent_state import check_lengths, time_major, zero_state
from .slstm_cell import kernel_grad_unit, slstm_direction, slstm_layers

SUFFIXES = ("", "_reverse")
GATES = 4
LOOP = functools.partial(slstm_direction, unit=kernel_grad_unit)  # where the kernels do not run


def add_slstm_weights(module: nn.Module, input_size: int, hidden: int, heads: int,
                      levels: int, directions: int) -> None:
    """Register ``W_xc_l{k}{s}`` (4H x E), ``b_c_l{k}{s}`` (4H) and ``W_hc_l{k}{s}``
    (heads x 4d x d) on ``module``."""
    d = hidden // heads
    for k in range(levels):
        e = input_size if k == 0 else directions * hidden
        for s in SUFFIXES[:directions]:
            module.register_parameter(f"W_xc_l{k}{s}",
                                      nn.Parameter(torch.empty(GATES * hidden, e)))
            module.register_parameter(f"b_c_l{k}{s}", nn.Parameter(torch.zeros(GATES * hidden)))
            module.register_parameter(f"W_hc_l{k}{s}",
                                      nn.Parameter(torch.empty(heads, GATES * d, d)))


def powerlaw_forget_bias(d: int, level: int, levels: int) -> torch.Tensor:
    """The forget gate's biases of one head of ``d`` units at ``level`` of ``levels``, as the
    xLSTM code starts them ("powerlaw_blockdependent"): from +5 (a memory of many steps) down
    to -7 (almost none) over the head's units, the lower levels' falling faster."""
    ratio = level / (levels - 1) if levels > 1 else 0.0
    j = torch.arange(d, dtype=torch.float64) / max(d - 1, 1)
    return -(-5.0 + 12.0 * j ** (0.3 + 1.3 * ratio))


def fill_slstm(module: nn.Module, filler: str, bias: float, forget: str = "constant") -> None:
    """Fill an sLSTM layer's tensors (either engine: the same draws in the same order); each
    head's recurrent block as a matrix of its own (``uniform``: +-1/sqrt(d)); the biases at
    ``bias``, but with ``forget`` "powerlaw" the forget gate's at `powerlaw_forget_bias`."""
    filler = "uniform" if filler == "torch_default" else filler
    h, heads = module.hidden, module.heads
    for k in range(module.levels):
        for s in SUFFIXES[:module.directions]:
            fill_weight(getattr(module, f"W_xc_l{k}{s}"), filler, module.hidden, GATES)
            w_hc = getattr(module, f"W_hc_l{k}{s}")
            for block in w_hc:
                fill_weight(block, filler, w_hc.shape[2], GATES)
            b = getattr(module, f"b_c_l{k}{s}")
            fill_bias(b, bias)
            if forget == "powerlaw":  # rows [i, f, z, o], the heads side by side in each
                with torch.no_grad():
                    b[h:2 * h] = powerlaw_forget_bias(h // heads, k, module.levels).repeat(heads)


class FusedSLSTM(nn.Module):
    """An sLSTM layer on the FUSED engine."""

    engine_name = "FUSED"
    kind = "sLSTM"

    def __init__(self, input_size: int, hidden: int, heads: int = 1, levels: int = 1,
                 dropout: float = 0.0, batch_first: bool = False, bidirectional: bool = False,
                 forget_gate: str = "sigmoid", name: str = "rnn"):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"{name}: {heads} heads do not divide its {hidden} hidden units")
        self.hidden, self.heads, self.levels, self.batch_first = hidden, heads, levels, \
            batch_first
        self.input_size, self.dropout, self.name = input_size, dropout, name
        self.forget_gate = forget_gate
        self.directions = 2 if bidirectional else 1
        self.state_layers = levels * self.directions
        add_slstm_weights(self, input_size, hidden, heads, levels, self.directions)
        self.kernels = True    # whether a call may run on the persistent kernels
        self.fallback = None   # why the last call ran on the step loop (None: the kernels)
        self.ran = None        # what ran the last call, in words
        self._warned = set()

    @classmethod
    def from_params(cls, input_size: int, p: dict, name: str = "rnn"):
        m = cls(input_size, p["num_output"], p.get("num_heads", 1), p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("bidirectional", False), p.get("forget_gate", "sigmoid"), name)
        fill_slstm(m, p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0),
                   p.get("forget_bias", "constant"))
        return m

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        if state is None:
            state = zero_state(self.kind, self.state_layers, n, self.hidden, x)
        lens = None
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            lens = lengths.to(x.device, torch.int64)
        y, final = slstm_layers(self._parameters, x, state, self.levels, self.directions,
                                cont, lens, self.dropout, self.training,
                                self.forget_gate == "exp", self._direction(x))
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, final

    def _direction(self, x):
        """What runs each direction of each level of this call: the kernels, or the loop
        (``fallback`` says why)."""
        reason = slstm_kernel.fallback_reason(x, self.hidden) if self.kernels else \
            "the kernels are switched off"
        self.fallback = reason
        if reason is None:
            self.ran = slstm_kernel.RAN
            return slstm_kernel.kernel_direction
        self.ran = f"the step loop ({reason})"
        if x.is_cuda and self.kernels and reason not in self._warned:
            self._warned.add(reason)
            warnings.warn(f"{self.name}: the sLSTM runs its step loop here, not the persistent "
                          f"kernels: {reason}.", RuntimeWarning, stacklevel=3)
        return LOOP

    def extra_repr(self) -> str:
        both = ", bidirectional" if self.directions == 2 else ""
        return (f"sLSTM, {self.input_size} -> {self.hidden} in {self.heads} heads, "
                f"levels={self.levels}{both}, forget={self.forget_gate}, engine=FUSED")
