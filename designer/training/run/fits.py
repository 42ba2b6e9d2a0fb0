"""Whether a net fits the device it is about to train on, asked before anything is built.

The estimate is pure arithmetic over the graph's shapes (``designer.graph.memory``); the device's
memory comes from NVML or psutil (``designer.monitor.capacity``), or from torch when NVML cannot
tell. A net that cannot fit is refused in one sentence with both figures.
"""
from __future__ import annotations

from dataclasses import replace

import torch

from designer.graph.memory import MemoryEstimate, Setup, estimate, parts_text, refusal, size_text
from designer.monitor.capacity import DeviceMemory, capacity

from designer.training.run.errors import TrainingError


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


def check_fits(graph, device: torch.device, engine: str | None, solver: dict, cfg: dict,
               processes: int = 1, on_this_machine: int = 1) -> MemoryEstimate | None:
    """The estimate for this run (for one process of it); raises ``TrainingError`` (exit 2)
    when it cannot fit.

    ``None`` when the estimate cannot be made (a shape still unknown): the run goes on and
    torch says what it says.

    Parameters
    ----------
    processes
        The processes of a data-parallel run. With several, each one also holds DDP's
        gradient buckets (the gradients once more, all along), and each checks its own
        device (a GPU each).
    on_this_machine
        How many of them share this machine: on the CPU they share its memory, so the net
        must fit that many times (a ``ulimit -v``, which holds for each process alone, is
        checked once).
    """
    est = estimate(graph, setup_for(device, engine, solver, cfg))
    if est is None:
        return None
    if processes > 1:
        est = replace(est, buckets=est.gradients)
    room = device_memory(device)
    if room is None:
        return est
    where = room.where
    sharing = on_this_machine if device.type == "cpu" and room.limit != "ulimit -v" else 1
    if sharing > 1:
        if est.needed * sharing > room.total:
            raise TrainingError(
                f"training this net on {sharing} processes needs about "
                f"{size_text(est.needed)} in each ({parts_text(est)}), "
                f"{size_text(est.needed * sharing)} in all, but {where} has "
                f"{size_text(room.total)}; train on fewer processes or make the net smaller "
                "(fewer units or layers, a smaller batch_size or seq_len)", 2)
        return est
    sentence = refusal(est, room.total, where)
    if sentence:
        raise TrainingError(sentence, 2)
    return est
