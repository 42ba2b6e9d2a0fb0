"""The plain records the monitor hands out: one ``Sample`` per poll, one ``DeviceInfo`` per GPU.

Both are frozen dataclasses of numbers and strings, so they pickle, compare, turn into JSON and
can be passed between threads (the Qt panel polls on its own timer) without copying or locking.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

NVML, CPU = "nvml", "cpu"

GPU_FIELDS = ("gpu_util_pct", "mem_util_pct", "mem_used_mib", "mem_total_mib", "temperature_c",
              "power_w", "power_limit_w", "fan_pct", "sm_clock_mhz")
HOST_FIELDS = ("cpu_util_pct", "ram_used_mib", "ram_total_mib", "process_rss_mib")


@dataclass(frozen=True)
class Sample:
    """One reading of one device.

    Every reading is optional: ``None`` means the device does not report it (fan speed on
    datacenter GPUs, power on some boards), the GPU stopped answering, or the source has no such
    thing (a CPU sample has no GPU fields). The host fields are filled for both sources.

    Attributes
    ----------
    time : float
        ``time.monotonic()`` seconds when the sample was taken.
    source : str
        ``"nvml"`` (an NVIDIA GPU) or ``"cpu"`` (the psutil fallback).
    device : str
        What was measured, for a label: ``"NVIDIA H200"`` or ``"CPU (16 cores)"``.
    index : int | None
        The NVML device index (as in ``nvidia-smi``); ``None`` for the CPU.
    gpu_util_pct, mem_util_pct : float | None
        Percent of the last sample period in which a kernel ran / device memory was read or
        written (NVML utilisation rates; ``mem_util_pct`` is memory *bandwidth*, not capacity).
    mem_used_mib, mem_total_mib : float | None
        Device memory in MiB (used excludes memory the driver reserves, where NVML tells).
    temperature_c : float | None
        GPU core temperature in degrees Celsius.
    power_w, power_limit_w : float | None
        Board power draw and the enforced power limit, in watts.
    fan_pct : float | None
        Fan speed in percent of its maximum.
    sm_clock_mhz : float | None
        Streaming multiprocessor clock in MHz.
    cpu_util_pct : float | None
        Utilisation of all CPU cores together, 0-100, since the previous poll.
    ram_used_mib, ram_total_mib : float | None
        Host memory in use (total minus available) and installed, in MiB.
    process_rss_mib : float | None
        Resident memory of this process, in MiB.
    """

    time: float
    source: str
    device: str
    index: int | None = None
    gpu_util_pct: float | None = None
    mem_util_pct: float | None = None
    mem_used_mib: float | None = None
    mem_total_mib: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    fan_pct: float | None = None
    sm_clock_mhz: float | None = None
    cpu_util_pct: float | None = None
    ram_used_mib: float | None = None
    ram_total_mib: float | None = None
    process_rss_mib: float | None = None

    def to_dict(self) -> dict:
        """Every field by name, in declaration order (``None`` stays ``None``; JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Sample":
        """The inverse of `to_dict`; unknown keys are ignored so older readers accept newer data."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def readings(self) -> dict:
        """Only the measured fields (no time, source, device or index) that are not ``None``."""
        return {k: v for k, v in self.to_dict().items()
                if k in GPU_FIELDS + HOST_FIELDS and v is not None}

    def summary(self) -> str:
        """One line for a status bar or a terminal; readings that are ``None`` are left out.

        Examples
        --------
        >>> Sample(0.0, "nvml", "NVIDIA H200", 0, gpu_util_pct=37, temperature_c=51).summary()
        'NVIDIA H200 [0]: GPU 37%, 51 C'
        """
        parts = []
        if self.gpu_util_pct is not None:
            parts.append(f"GPU {self.gpu_util_pct:.0f}%")
        if self.mem_used_mib is not None:
            parts.append(_of(self.mem_used_mib, self.mem_total_mib, "MiB"))
        if self.temperature_c is not None:
            parts.append(f"{self.temperature_c:.0f} C")
        if self.power_w is not None:
            parts.append(_of(self.power_w, self.power_limit_w, "W"))
        if self.fan_pct is not None:
            parts.append(f"fan {self.fan_pct:.0f}%")
        if self.sm_clock_mhz is not None:
            parts.append(f"SM {self.sm_clock_mhz:.0f} MHz")
        if self.cpu_util_pct is not None:
            parts.append(f"CPU {self.cpu_util_pct:.0f}%")
        if self.ram_used_mib is not None:
            parts.append("RAM " + _of(self.ram_used_mib, self.ram_total_mib, "MiB"))
        if self.process_rss_mib is not None:
            parts.append(f"this process {self.process_rss_mib:,.0f} MiB")
        where = self.device if self.index is None else f"{self.device} [{self.index}]"
        return f"{where}: {', '.join(parts) or 'no readings'}"


@dataclass(frozen=True)
class DeviceInfo:
    """One NVIDIA GPU as NVML lists it, for a device picker.

    Attributes
    ----------
    index : int
        The NVML index (``nvidia-smi`` order); pass it to `open_monitor`.
    name : str
        The product name, e.g. ``"NVIDIA H200"``.
    uuid : str | None
        ``"GPU-..."``, stable across reboots and re-orderings.
    memory_total_mib : float | None
        Installed device memory in MiB.
    """

    index: int
    name: str
    uuid: str | None = None
    memory_total_mib: float | None = None

    def __str__(self) -> str:
        size = "" if self.memory_total_mib is None else f" ({self.memory_total_mib / 1024:.0f} GiB)"
        return f"{self.index}: {self.name}{size}"


def _of(used: float, total: float | None, unit: str) -> str:
    return f"{used:,.0f} {unit}" if total is None else f"{used:,.0f} / {total:,.0f} {unit}"
