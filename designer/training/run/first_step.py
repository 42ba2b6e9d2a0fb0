"""What the log says after a run's first step: which engine each AUTO layer chose and why,
which kernels run the PERSIST layers and the FUSED sLSTM layers, and why the first step took
long when it did (kernels compiled and tuned for the run's shapes, engines timed)."""
from __future__ import annotations

import torch

SLOW_FIRST_STEP_S = 5.0


def first_step_notes(net: torch.nn.Module, seconds: float, device: torch.device) -> list[str]:
    notes = [d for m in net.modules() if getattr(m, "engine_name", "") == "AUTO"
             for d in m.decisions]
    ran = sorted({m.ran for m in net.modules() if getattr(m, "engine_name", "") == "PERSIST"
                  and m.ran and not m.fallback})   # a fallback has already said why
    if ran:
        notes.append("PERSIST layers run on " + "; ".join(ran))
    slstm = sorted({m.ran for m in net.modules() if getattr(m, "kind", "") == "sLSTM"
                    and getattr(m, "engine_name", "") == "FUSED" and m.ran and not m.fallback})
    if slstm:   # a step loop on the GPU has warned why
        notes.append("sLSTM layers (FUSED) run on " + "; ".join(slstm))
    if device.type == "cuda" and seconds >= SLOW_FIRST_STEP_S:
        notes.append(f"the first step took {seconds:.1f} s: it compiled the GPU kernels for "
                     "these shapes and timed the fused steps' tile sizes; Triton keeps both on "
                     "disk, so the same shapes start faster in later runs on this machine")
    return notes
