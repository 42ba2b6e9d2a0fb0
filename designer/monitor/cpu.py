"""Host readings through psutil: CPU utilisation, memory in use, and this process's RSS.

`HostReader` fills the host fields of every sample; `CpuMonitor` is the whole monitor when there
is no NVIDIA GPU to watch.
"""
from __future__ import annotations

import os
import sys
import time

try:
    import psutil
except ImportError:  # a declared dependency, but the panel should still open without it
    psutil = None

from designer.monitor.base import Monitor
from designer.monitor.sample import CPU, Sample

MIB = 1024 * 1024


class HostReader:
    """Reads the host fields (``cpu_util_pct``, ``ram_*_mib``, ``process_rss_mib``).

    CPU utilisation is the busy share of all cores between two reads. The reader keeps its own
    baseline from ``psutil.cpu_times()`` instead of calling ``psutil.cpu_percent(interval=None)``,
    whose baseline is kept per thread (per process before psutil 5.9.6): the panel may open the
    monitor on one thread and poll it from another, and other code may call ``cpu_percent`` too.
    The baseline is primed here, so the first read covers the time since opening; a read less
    than one kernel tick (about 10 ms) after the last has nothing to measure and repeats the last
    value (``None`` at first).
    """

    def __init__(self) -> None:
        self._process = _quietly(psutil.Process) if psutil else None
        self._last = _busy_and_total()
        self._percent: float | None = None

    def read(self) -> dict:
        """The host fields as a dict; a field psutil cannot read is ``None``."""
        fields = {"cpu_util_pct": self.cpu_percent(),
                  "ram_used_mib": None, "ram_total_mib": None, "process_rss_mib": None}
        memory = _quietly(psutil.virtual_memory) if psutil else None
        if memory is not None:
            fields["ram_used_mib"] = _mib(memory.total - memory.available)
            fields["ram_total_mib"] = _mib(memory.total)
        info = _quietly(self._process.memory_info) if self._process is not None else None
        if info is not None:
            fields["process_rss_mib"] = _mib(info.rss)
        return fields

    def cpu_percent(self) -> float | None:
        """Busy percent of all cores since the last call (the last value if no tick passed)."""
        now = _busy_and_total()
        if now is None or self._last is None:
            self._last = now
            return None
        busy = now[0] - self._last[0]
        total = now[1] - self._last[1]
        if total > 0:  # the kernel counts in ticks; two quick reads may see none pass
            self._percent = round(min(100.0, max(0.0, 100.0 * busy / total)), 1)
            self._last = now
        return self._percent


class CpuMonitor(Monitor):
    """The fallback monitor: host CPU and memory only, every GPU field ``None``.

    Parameters
    ----------
    reason : str | None
        Why there is no GPU monitor, for the panel to show.
    """

    kind = CPU

    def __init__(self, reason: str | None = None) -> None:
        if psutil is None:
            missing = "The psutil package is not installed, so there are no CPU readings either."
            reason = f"{reason} {missing}" if reason else missing
        super().__init__(cpu_name(), None, reason)
        self._host = HostReader()

    def _poll(self) -> Sample:
        return Sample(time.monotonic(), CPU, self.device, None, **self._host.read())


def cpu_name() -> str:
    """``"CPU (16 cores)"``: logical cores, as utilisation is measured over them."""
    count = (psutil.cpu_count(logical=True) if psutil else None) or os.cpu_count()
    return f"CPU ({count} cores)" if count else "CPU"


def _busy_and_total() -> tuple[float, float] | None:
    """Busy and total CPU seconds over all cores, counted as psutil's own cpu_percent does."""
    t = _quietly(psutil.cpu_times) if psutil else None
    if t is None:
        return None
    total = sum(t)
    if sys.platform.startswith("linux"):  # guest time is already inside user and nice
        total -= getattr(t, "guest", 0.0) + getattr(t, "guest_nice", 0.0)
    idle = t.idle + getattr(t, "iowait", 0.0)
    return total - idle, total


def _quietly(read):
    """``read()``, or ``None`` when psutil cannot (a sandbox, a vanished /proc entry)."""
    try:
        return read()
    except (OSError, psutil.Error):
        return None


def _mib(n_bytes: float) -> float:
    return round(n_bytes / MIB, 1)
