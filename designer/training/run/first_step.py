"""What the log says after a run's first step: which engine each AUTO layer chose and why,
which kernels run the layers whose modules report them, and why the first step took long when
it did (kernels compiled and tuned for the run's shapes, engines timed).

A module reports its kernels as :func:`designer.engines.measure.bench.kernels_ran` says.
"""
from __future__ import annotations

import torch

from designer.engines.measure.bench import kernels_ran

SLOW_FIRST_STEP_S = 5.0


def first_step_notes(net: torch.nn.Module, seconds: float, device: torch.device) -> list[str]:
    notes = [d for m in net.modules() if getattr(m, "engine_name", "") == "AUTO"
             for d in m.decisions]
    for words, ran in kernels_ran(net, fallbacks=False).items():  # a fallback said why
        notes.append(f"{words} run on " + "; ".join(ran))
    if device.type == "cuda" and seconds >= SLOW_FIRST_STEP_S:
        notes.append(f"the first step took {seconds:.1f} s: it compiled the GPU kernels for "
                     "these shapes and timed the fused steps' tile sizes; Triton keeps both on "
                     "disk, so the same shapes start faster in later runs on this machine")
    return notes
