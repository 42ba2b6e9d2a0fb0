"""A fake ``pynvml`` module: the few NVML functions the monitor calls, over made-up GPUs.

It raises the REAL pynvml error classes (``pynvml.NVMLError_NotSupported``,
``pynvml.NVMLError_GpuIsLost`` ...), so the monitor is tested against the exceptions it will meet. It counts ``nvmlInit``/``nvmlShutdown`` and every
call, and a GPU can be "lost" mid-run.
"""
from __future__ import annotations

import types
from collections import Counter
from dataclasses import dataclass, field

import pynvml as real

MIB = 1024 * 1024


@dataclass
class FakeGpu:
    name: str
    uuid: str
    total_mib: int = 81559
    used_mib: int = 1234
    reserved_mib: int = 512  # counted as used by the v1 memory query only
    util: tuple = (37, 12)  # gpu, memory
    temperature: int = 51
    power_mw: int = 312_500
    limit_mw: int = 700_000
    fan: int = 30
    sm_clock: int = 1980
    unsupported: set = field(default_factory=set)  # function names raising NotSupported
    flaky: set = field(default_factory=set)  # function names raising Timeout once
    lost: bool = False


def consumer_gpu() -> FakeGpu:
    return FakeGpu("NVIDIA GeForce RTX 4090", "GPU-4090aaaa-0000-0000-0000-000000000000",
                   total_mib=24564, limit_mw=450_000)


def datacenter_gpu() -> FakeGpu:
    """No fan (passively cooled) and no power reading, as on some datacenter boards."""
    return FakeGpu("NVIDIA H200", "GPU-h200bbbb-1111-1111-1111-111111111111", total_mib=143771,
                   unsupported={"nvmlDeviceGetFanSpeed", "nvmlDeviceGetPowerUsage"})


class FakeNvml(types.ModuleType):
    """Put it in ``sys.modules["pynvml"]``; see the ``fake_nvml`` fixture in conftest.py."""

    NVML_TEMPERATURE_GPU = real.NVML_TEMPERATURE_GPU
    NVML_CLOCK_SM = real.NVML_CLOCK_SM
    nvmlMemory_v2 = real.nvmlMemory_v2

    def __init__(self, *gpus: FakeGpu, init_error: type | None = None) -> None:
        super().__init__("pynvml")
        for name in dir(real):  # the real NVMLError classes and NVML_ERROR_* codes
            if name.startswith(("NVMLError", "NVML_ERROR_")):
                setattr(self, name, getattr(real, name))
        self.gpus = list(gpus)
        self.init_error = init_error
        self.inits = 0
        self.shutdowns = 0
        self.calls: Counter = Counter()

    @property
    def open_sessions(self) -> int:
        return self.inits - self.shutdowns

    # -- library -------------------------------------------------------------------------------

    def nvmlInit(self):
        self.calls["nvmlInit"] += 1
        if self.init_error is not None:
            raise self.init_error()
        self.inits += 1

    def nvmlShutdown(self):
        self.calls["nvmlShutdown"] += 1
        if self.open_sessions <= 0:
            raise real.NVMLError_Uninitialized()
        self.shutdowns += 1

    def nvmlDeviceGetCount(self):
        self._check_init("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._check_init("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise real.NVMLError_InvalidArgument()
        return self.gpus[index]  # the handle is the fake GPU itself

    # -- per device ----------------------------------------------------------------------------

    def nvmlDeviceGetName(self, gpu):
        return self._on(gpu, "nvmlDeviceGetName", gpu.name)

    def nvmlDeviceGetUUID(self, gpu):
        return self._on(gpu, "nvmlDeviceGetUUID", gpu.uuid)

    def nvmlDeviceGetUtilizationRates(self, gpu):
        rates = types.SimpleNamespace(gpu=gpu.util[0], memory=gpu.util[1])
        return self._on(gpu, "nvmlDeviceGetUtilizationRates", rates)

    def nvmlDeviceGetMemoryInfo(self, gpu, version=None):
        used = gpu.used_mib if version == real.nvmlMemory_v2 else gpu.used_mib + gpu.reserved_mib
        info = types.SimpleNamespace(total=gpu.total_mib * MIB, used=used * MIB,
                                     free=(gpu.total_mib - used) * MIB)
        return self._on(gpu, "nvmlDeviceGetMemoryInfo", info)

    def nvmlDeviceGetTemperature(self, gpu, sensor):
        assert sensor == real.NVML_TEMPERATURE_GPU
        return self._on(gpu, "nvmlDeviceGetTemperature", gpu.temperature)

    def nvmlDeviceGetPowerUsage(self, gpu):
        return self._on(gpu, "nvmlDeviceGetPowerUsage", gpu.power_mw)

    def nvmlDeviceGetEnforcedPowerLimit(self, gpu):
        return self._on(gpu, "nvmlDeviceGetEnforcedPowerLimit", gpu.limit_mw)

    def nvmlDeviceGetFanSpeed(self, gpu):
        return self._on(gpu, "nvmlDeviceGetFanSpeed", gpu.fan)

    def nvmlDeviceGetClockInfo(self, gpu, clock):
        assert clock == real.NVML_CLOCK_SM
        return self._on(gpu, "nvmlDeviceGetClockInfo", gpu.sm_clock)

    # -- helpers -------------------------------------------------------------------------------

    def _check_init(self, function: str) -> None:
        self.calls[function] += 1
        if self.open_sessions <= 0:
            raise real.NVMLError_Uninitialized()

    def _on(self, gpu: FakeGpu, function: str, value):
        self._check_init(function)
        if gpu.lost:
            raise real.NVMLError_GpuIsLost()
        if function in gpu.unsupported:
            raise real.NVMLError_NotSupported()
        if function in gpu.flaky:
            gpu.flaky.discard(function)
            raise real.NVMLError_Timeout()
        return value
