"""The RG-LRU's unit on torch, for the reference executor (its node:
:mod:`designer.cells.rglru.expansion`), and how its tensors are filled on either engine."""
from __future__ import annotations

import torch
from torch import nn

from designer.cells.rglru.arithmetic import initial_lambda, rglru_unit
from designer.cells.rglru.spec import CELL, KIND
from designer.engines.tensors.fillers import fill_bias, fill_weight
from designer.engines.unrolled import fills, unit_op

SUFFIXES = ("", "_reverse")


@unit_op(CELL.unit)
def _rglru_unit(node, b: list, run) -> tuple:
    return (rglru_unit(*b, run.weight(node.params["weights"][0])),)


@fills(KIND)
def fill(module: nn.Module, params: dict) -> None:
    """Chain by chain, level by level: ``W_xc`` by ``weight_filler`` (H units, 3 blocks),
    ``b_c`` at ``bias_filler`` and ``Lambda`` as the paper draws it (a^c uniform in
    [0.9, 0.999]); both engines fill theirs here, the same draws in the same order."""
    filler = params.get("weight_filler", "uniform")
    filler = "uniform" if filler == "torch_default" else filler
    for k in range(module.levels):
        for s in SUFFIXES[:module.directions]:
            fill_weight(getattr(module, f"W_xc_l{k}{s}"), filler, module.hidden,
                        len(CELL.gates))
            fill_bias(getattr(module, f"b_c_l{k}{s}"), params.get("bias_filler", 0.0))
            lam = getattr(module, f"Lambda_l{k}{s}")
            with torch.no_grad():
                lam.copy_(initial_lambda(lam.shape))
