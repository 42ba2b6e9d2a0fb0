"""How much memory a training device has: the GPU's through NVML, the CPU's through psutil.

>>> capacity("cpu")            # DeviceMemory(device="cpu", name="the CPU", total=25.1e9, ...)
>>> capacity("cuda:0")         # the GPU CUDA calls cuda:0, as NVML numbers it

For the CPU the figure is the smaller of the machine's memory and what a training process may
use: its address-space limit (``ulimit -v``) less what a trainer maps before its first tensor
(the same figure whichever command asks), and the memory limit of its control group (a
container's). Neither torch nor Qt is imported.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

try:
    import psutil
except ImportError:  # a declared dependency; without it the CPU's size is unknown
    psutil = None

from designer.monitor.nvml import NvmlUnavailable, _find, _session, _text
from designer.monitor.probe import training_gpu

CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
# What a training process has mapped when it checks that a net fits: Python, torch, numpy,
# pandas and rnn-designer (0.82 GiB with torch 2.x on Linux, `rnn-designer train` on the CPU),
# rounded up. Under `ulimit -v` the room left is the limit less this, or less what the asking
# process has mapped when that is more (the window): validate, which never loads torch, then
# gives the verdict train gives.
TRAINER_MAPPED = 1 << 30


@dataclass(frozen=True)
class DeviceMemory:
    """A device's memory, in bytes, and what it is called in a sentence.

    Attributes
    ----------
    device : str
        ``cpu`` or ``cuda:N``.
    name : str
        For a sentence: ``the CPU`` or ``NVIDIA H200 (GPU 0)``.
    total : int
        The bytes training may use at most.
    limit : str
        What sets ``total`` when it is not the installed memory (``ulimit -v``, the control
        group), else ``""``.
    free : int or None
        What is free now (the CPU's available memory, the GPU's unused memory), at most
        ``total``; ``None`` when unknown.
    """

    device: str
    name: str
    total: int
    limit: str = ""
    free: int | None = None

    @property
    def where(self) -> str:
        """The device in a sentence, with what limits it: ``the CPU (limited by ulimit -v)``."""
        return self.name + (f" (limited by {self.limit})" if self.limit else "")


def capacity(device: str) -> DeviceMemory | None:
    """The memory of ``cpu``, ``cuda`` or ``cuda:N``; ``None`` when it cannot be read
    (no psutil, no NVIDIA driver, no such GPU)."""
    if device.startswith("cuda"):
        index = int(device.split(":")[1]) if ":" in device else 0
        return gpu_capacity(index)
    return cpu_capacity()


def cpu_capacity() -> DeviceMemory | None:
    """The machine's memory, or less when this process is limited (``ulimit -v``, cgroup)."""
    if psutil is None:
        return None
    try:
        memory = psutil.virtual_memory()
    except (OSError, psutil.Error):
        return None
    total = int(memory.total)
    best, why = total, ""
    room = _address_space_left()
    if room is not None and room < best:
        best, why = room, "ulimit -v"
    group = _cgroup_limit()
    if group is not None and group < best:
        best, why = group, "its control group's memory limit"
    return DeviceMemory("cpu", "the CPU", best, why, min(best, int(memory.available)))


def gpu_capacity(cuda_index: int = 0) -> DeviceMemory | None:
    """The GPU CUDA numbers ``cuda_index``, through NVML (``None`` without NVML or GPU)."""
    target = _nvml_target(cuda_index)
    if target is None:
        return None
    try:
        with _session() as nvml:
            _, handle = _find(nvml, target)
            info = nvml.nvmlDeviceGetMemoryInfo(handle)
            name = _text(nvml.nvmlDeviceGetName(handle))
    except NvmlUnavailable:
        return None
    except Exception:  # noqa: BLE001 - any NVML error: the size is unknown, not fatal
        return None
    return DeviceMemory(f"cuda:{cuda_index}", f"{name} (GPU {cuda_index})", int(info.total),
                        "", int(info.free))


def _nvml_target(cuda_index: int):
    """The NVML index (or UUID) of the GPU CUDA calls ``cuda:cuda_index``."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return cuda_index
    entries = [e.strip() for e in visible.split(",")]
    if cuda_index >= len(entries):
        return None
    entry = entries[cuda_index]
    if cuda_index == 0:
        return training_gpu()
    if entry.isdigit():
        return int(entry)
    return entry if entry.startswith(("GPU-", "MIG-")) else None


def _address_space_left() -> int | None:
    """``ulimit -v`` less what a trainer has mapped (`TRAINER_MAPPED`, or this process's own
    mapping when larger), or ``None`` when there is no limit."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = 0
    if psutil is not None:
        try:
            mapped = int(psutil.Process().memory_info().vms)
        except (OSError, psutil.Error):
            mapped = 0
    return max(0, soft - max(mapped, TRAINER_MAPPED))


def _cgroup_limit() -> int | None:
    for path in CGROUP_LIMITS:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # "max", or a huge number: no limit
            return int(text)
    return None


def named_capacity(device: str) -> tuple[str, int] | None:
    """``(name, bytes)`` of ``cpu`` or ``cuda`` for a report, or ``None`` when unknown."""
    found = capacity(device)
    if found is None:
        return None
    return found.where, found.total
