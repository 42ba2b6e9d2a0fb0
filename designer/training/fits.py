"""Whether a net fits the device it is about to train on, asked before anything is built.

The estimate is pure arithmetic over the graph's shapes (``designer.graph.memory``); the device's
memory comes from NVML or psutil (``designer.monitor.capacity``), or from torch when NVML cannot
tell. A net that cannot fit is refused in one sentence with both figures.
"""
from __future__ import annotations

import torch

from designer.graph.memory import MemoryEstimate, Setup, estimate, refusal
from designer.monitor.capacity import DeviceMemory, capacity

from .errors import TrainingError


def setup_for(device: torch.device, engine: str | None, solver: dict, cfg: dict) -> Setup:
    """What a run on ``device`` trains with, as the estimate needs it."""
    gpu = device.type == "cuda"
    return Setup("cuda" if gpu else "cpu", engine, cfg["precision"] if gpu else "fp32", solver,
                 bool(cfg["cuda_graphs"]))


def device_memory(device: torch.device) -> DeviceMemory | None:
    """The memory of the device a run trains on (NVML, psutil, else torch's own figure)."""
    if device.type != "cuda":
        return capacity("cpu")
    index = device.index if device.index is not None else torch.cuda.current_device()
    found = capacity(f"cuda:{index}")
    if found is None:
        try:
            total = torch.cuda.mem_get_info(index)[1]
        except (RuntimeError, AssertionError):
            return None
        found = DeviceMemory(f"cuda:{index}", f"{torch.cuda.get_device_name(index)} "
                             f"(GPU {index})", int(total))
    return found


def check_fits(graph, device: torch.device, engine: str | None, solver: dict,
               cfg: dict) -> MemoryEstimate | None:
    """The estimate for this run; raises ``TrainingError`` (exit 2) when it cannot fit.

    ``None`` when the estimate cannot be made (a shape still unknown): the run goes on and
    torch says what it says.
    """
    est = estimate(graph, setup_for(device, engine, solver, cfg))
    if est is None:
        return None
    room = device_memory(device)
    if room is None:
        return est
    where = room.name + (f" (limited by {room.limit})" if room.limit else "")
    sentence = refusal(est, room.total, where)
    if sentence:
        raise TrainingError(sentence, 2)
    return est
