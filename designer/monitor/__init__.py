"""Live device telemetry for the training panel: NVML for NVIDIA GPUs, psutil for the CPU.

Imports neither torch nor Qt (a test checks ``sys.modules``); the Qt panel polls a monitor from
its own timer at 1-2 Hz and plots the fields of the plain `Sample` records it gets.

Examples
--------
>>> from designer.monitor import open_monitor
>>> with open_monitor() as monitor:      # the training GPU, or the CPU with monitor.reason set
...     sample = monitor.poll()
>>> sample.source in ("nvml", "cpu")
True
"""
from designer.monitor.base import Monitor
from designer.monitor.cpu import CpuMonitor
from designer.monitor.nvml import READINGS, NvmlMonitor, list_devices
from designer.monitor.probe import open_monitor, training_gpu
from designer.monitor.sample import CPU, GPU_FIELDS, HOST_FIELDS, NVML, DeviceInfo, Sample

__all__ = [
    "CPU", "CpuMonitor", "DeviceInfo", "GPU_FIELDS", "HOST_FIELDS", "Monitor", "NVML",
    "NvmlMonitor", "READINGS", "Sample", "list_devices", "open_monitor", "training_gpu",
]
