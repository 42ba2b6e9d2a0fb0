"""Choosing what to watch: the training GPU through NVML when there is one, else the CPU."""
from __future__ import annotations

import os
from typing import Mapping

from designer.monitor.base import Monitor
from designer.monitor.cpu import CpuMonitor
from designer.monitor.nvml import NvmlUnavailable, open_nvml

INSTEAD = "; showing CPU utilisation and memory instead."


def open_monitor(device_index: int | None = None, *, uuid: str | None = None) -> Monitor:
    """A monitor for the training GPU, or for the CPU when NVML cannot watch it.

    Parameters
    ----------
    device_index : int, optional
        The NVML index of the GPU (``nvidia-smi`` order). By default the GPU that CUDA calls
        ``cuda:0``: the first one named in ``CUDA_VISIBLE_DEVICES``, else GPU 0.
    uuid : str, optional
        Pick the GPU by UUID instead (``"GPU-..."`` or a prefix; ``torch`` prints it without
        ``GPU-``), which is exact even when CUDA and NVML order the GPUs differently.

    Returns
    -------
    Monitor
        ``kind == "nvml"`` when NVML initialised and the GPU exists; otherwise a CPU monitor
        whose ``reason`` says why in one sentence, e.g. "No NVIDIA driver found (NVML library
        not found); showing CPU utilisation and memory instead." Never raises for a missing
        driver or GPU. Close it (or use ``with``) to balance NVML's init.
    """
    if device_index is not None and uuid is not None:
        raise ValueError("open_monitor() takes a device index or a UUID, not both")
    target = uuid if uuid is not None else device_index
    if target is None:
        target = training_gpu()
        if target is None:
            return CpuMonitor("CUDA_VISIBLE_DEVICES hides every GPU, so training runs on the CPU"
                              + INSTEAD)
    try:
        return open_nvml(target)
    except NvmlUnavailable as e:
        return CpuMonitor(f"{e}{INSTEAD}")


def training_gpu(environ: Mapping[str, str] | None = None) -> int | str | None:
    """The GPU CUDA will call ``cuda:0``, read from ``CUDA_VISIBLE_DEVICES``.

    Returns
    -------
    int | str | None
        An index (``"3,1"`` gives 3; unset gives 0), a UUID such as ``"GPU-5c1e..."``, or
        ``None`` when the variable hides every GPU (``""``, ``"-1"``, or a first entry CUDA
        would reject). The index is CUDA's; it matches NVML's when ``CUDA_DEVICE_ORDER`` is
        ``PCI_BUS_ID`` or the GPUs are alike.
    """
    environ = os.environ if environ is None else environ
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return 0
    first = visible.split(",")[0].strip()
    if first.isdigit():
        return int(first)
    if first.startswith(("GPU-", "MIG-")):
        return first
    return None
