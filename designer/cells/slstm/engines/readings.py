"""How an sLSTM is read step by step (inspect) and what ``parity`` compares for it.

A level is read from ``gate_input_t`` with the normaliser and stabiliser the step found, which
give the stabilised gates i' and f' (each in [0, 1]), the cell input z = tanh(z~) (named ``g``
here, as a long short-term memory names its candidate) and o, and ``c_t``, ``n_t`` (the
normaliser) and ``h_t``. Parity compares the FUSED engine with the unrolled net, from a starting
normaliser drawn positive, as any n the layer makes is.
"""
from __future__ import annotations

from designer.cells.slstm.arithmetic import gates as slstm_gates
from designer.engines.measure.parity_pairs import parity_pair
from designer.engines.measure.readings import Level, LevelSteps, reading

GATES = ("i", "f", "g", "o")


def _params(module) -> dict:
    return {"num_heads": module.heads, "forget_gate": module.forget_gate}


@reading("sLSTM", gates=GATES, tanh=("g",), params=_params)
def _slstm(level: Level) -> LevelSteps:
    """Its stabilised gates from each step's pre-activations and the normaliser and
    stabiliser it found (zeroed where 'cont' restarts), c and n."""
    exp_forget = level.params.get("forget_gate") == "exp"
    gates: dict = {g: [] for g in GATES}
    for t in range(1, level.steps + 1):
        keep = level.cont(t)
        n_prev, m_prev = (level.blob(s, t - 1) * keep for s in ("n", "m"))
        for name, value in zip(GATES, slstm_gates(level.blob("gate_input", t), n_prev,
                                                  m_prev, exp_forget)):
            gates[name].append(value)
    return LevelSteps(level.level, gates, level.each("c"), level.hs(), level.each("n"))


def _positive_normaliser(state: list) -> list:
    h, c, n, m = state
    return [h, c, n.abs() + 1.0, m]


parity_pair("sLSTM", engine="FUSED", label="fused sLSTM", carries=("num_heads", "forget_gate"),
            start=_positive_normaliser)
