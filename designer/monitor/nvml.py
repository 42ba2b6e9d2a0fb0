"""NVIDIA GPU readings through NVML (the ``nvidia-ml-py`` package, imported as ``pynvml``).

Every ``nvmlInit`` here is matched by one ``nvmlShutdown`` (NVML counts them, so other users of
NVML in the process are not disturbed). Each reading is taken in its own ``try``: a reading the
board does not support (``NVML_ERROR_NOT_SUPPORTED``: fan speed on datacenter GPUs, power on some
boards) stays ``None`` and is not asked for again; a GPU that stops answering
(``NVML_ERROR_GPU_IS_LOST``) blanks every GPU field and sets the monitor's ``reason``.

Errors are told apart by their NVML code (``error.value``), not by pynvml's generated class
names, which are easy to get wrong (``NVMLError_GpuIsLost``, not ``..._GPUIsLost``).

``pynvml`` is imported when first needed, so tests can put a fake one in ``sys.modules``.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

from designer.monitor.base import Monitor
from designer.monitor.cpu import HostReader
from designer.monitor.sample import NVML, DeviceInfo, Sample

MIB = 1024 * 1024

# One entry per NVML query; a query may fill several Sample fields.
READINGS = ("utilization", "memory", "temperature", "power", "power_limit", "fan", "sm_clock")


class NvmlUnavailable(Exception):
    """NVML cannot watch the GPU asked for; the message is a phrase to show the user."""


def _codes(nvml, *names: str) -> frozenset:
    """The values of these ``NVML_ERROR_*`` constants (those this pynvml defines)."""
    return frozenset(getattr(nvml, "NVML_ERROR_" + n) for n in names
                     if hasattr(nvml, "NVML_ERROR_" + n))


def _is(error, nvml, *names: str) -> bool:
    """Whether an ``NVMLError`` carries one of these codes: ``_is(e, nvml, "NOT_SUPPORTED")``."""
    return getattr(error, "value", None) in _codes(nvml, *names)


def _import_pynvml():
    try:
        import pynvml
    except ImportError as e:
        raise NvmlUnavailable("The nvidia-ml-py package is not installed") from e
    return pynvml


def _start(nvml) -> None:
    """``nvmlInit``, with its failure turned into a sentence for the user."""
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as e:
        if _is(e, nvml, "LIBRARY_NOT_FOUND"):
            why = "No NVIDIA driver found (NVML library not found)"
        elif _is(e, nvml, "DRIVER_NOT_LOADED"):
            why = f"The NVIDIA driver is not loaded (NVML: {e})"
        elif _is(e, nvml, "NO_PERMISSION"):
            why = f"No permission to read the NVIDIA GPU (NVML: {e})"
        elif _is(e, nvml, "LIB_RM_VERSION_MISMATCH"):
            why = "The NVIDIA driver and its NVML library differ (reboot after a driver update)"
        else:
            why = f"NVML failed to start ({e})"
        raise NvmlUnavailable(why) from e


def _stop(nvml) -> None:
    try:
        nvml.nvmlShutdown()
    except nvml.NVMLError:
        pass


@contextmanager
def _session():
    """NVML initialised for the ``with`` block: yields the pynvml module."""
    nvml = _import_pynvml()
    _start(nvml)
    try:
        yield nvml
    finally:
        _stop(nvml)


def list_devices() -> list[DeviceInfo]:
    """The NVIDIA GPUs NVML sees, in ``nvidia-smi`` order, for a device picker.

    Returns
    -------
    list of DeviceInfo
        Empty when there is no driver, no ``pynvml`` or no GPU. A GPU whose name cannot be read
        (it fell off the bus) is left out; a UUID or memory size that cannot be read is ``None``.
    """
    try:
        with _session() as nvml:
            devices = []
            for index in range(_count(nvml)):
                try:
                    handle = nvml.nvmlDeviceGetHandleByIndex(index)
                    name = _text(nvml.nvmlDeviceGetName(handle))
                except nvml.NVMLError:
                    continue
                memory = _try(nvml, lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
                devices.append(DeviceInfo(
                    index, name, _try(nvml, lambda: _text(nvml.nvmlDeviceGetUUID(handle))),
                    None if memory is None else round(memory.total / MIB, 1)))
            return devices
    except NvmlUnavailable:
        return []


def open_nvml(target: int | str) -> "NvmlMonitor":
    """An `NvmlMonitor` for the GPU with this NVML index, or whose UUID starts with ``target``.

    A UUID may be given with or without its ``GPU-`` prefix (``torch`` prints it without).

    Raises
    ------
    NvmlUnavailable
        With a phrase for the user: no driver, no such GPU, ... NVML is shut down again then.
    """
    nvml = _import_pynvml()
    _start(nvml)
    try:
        index, handle = _find(nvml, target)
        return NvmlMonitor(nvml, index, handle)
    except BaseException:
        _stop(nvml)
        raise


def _find(nvml, target: int | str):
    count = _count(nvml)
    if count == 0:
        raise NvmlUnavailable("NVML sees no NVIDIA GPU")
    try:
        if isinstance(target, str):
            wanted = _bare_uuid(target)
            for index in range(count):
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                if _bare_uuid(_text(nvml.nvmlDeviceGetUUID(handle))).startswith(wanted):
                    return index, handle
            raise NvmlUnavailable(f"No NVIDIA GPU has the UUID {target}")
        if not 0 <= target < count:
            seen = "GPU 0" if count == 1 else f"GPUs 0 to {count - 1}"
            raise NvmlUnavailable(f"There is no GPU {target} (NVML sees {seen})")
        return target, nvml.nvmlDeviceGetHandleByIndex(target)
    except nvml.NVMLError as e:
        raise NvmlUnavailable(f"NVML could not open GPU {target} ({e})") from e


def _count(nvml) -> int:
    try:
        return nvml.nvmlDeviceGetCount()
    except nvml.NVMLError as e:
        raise NvmlUnavailable(f"NVML could not count the GPUs ({e})") from e


class NvmlMonitor(Monitor):
    """Watches one NVIDIA GPU; made by `open_nvml`, which has initialised NVML for it.

    ``close()`` shuts NVML down once. Host fields (CPU, RAM, this process) are filled too.
    """

    kind = NVML

    def __init__(self, nvml, index: int, handle) -> None:
        name = _try(nvml, lambda: _text(nvml.nvmlDeviceGetName(handle))) or f"GPU {index}"
        super().__init__(name, index)
        self._nvml = nvml
        self._handle = handle
        self._host = HostReader()
        self._unsupported: set[str] = set()
        self._lost = False
        self._memory_v2 = hasattr(nvml, "nvmlMemory_v2")
        self._lost_codes = _codes(nvml, "GPU_IS_LOST", "RESET_REQUIRED")
        self._unsupported_codes = _codes(nvml, "NOT_SUPPORTED", "FUNCTION_NOT_FOUND")

    @property
    def lost(self) -> bool:
        """True once the GPU stopped answering; it stays so until the GPU is reset."""
        return self._lost

    @property
    def unsupported(self) -> frozenset:
        """The readings (names from ``READINGS``) this GPU said it does not support."""
        return frozenset(self._unsupported)

    def _poll(self) -> Sample:
        now = time.monotonic()
        gpu = {} if self._lost else self._read_gpu()
        return Sample(now, NVML, self.device, self.index, **gpu, **self._host.read())

    def _read_gpu(self) -> dict:
        values: dict = {}
        for reading in READINGS:
            if reading in self._unsupported:
                continue
            try:
                values.update(getattr(self, "_read_" + reading)())
            except self._nvml.NVMLError as e:
                code = getattr(e, "value", None)
                if code in self._lost_codes:
                    self._lost = True
                    self.reason = (f"{self.device} (GPU {self.index}) stopped answering "
                                   f"(NVML: {e}); its readings stay blank until the GPU is reset.")
                    return {}
                if code in self._unsupported_codes:
                    self._unsupported.add(reading)
                # anything else (a timeout, a busy driver) blanks just this field, just this once
        return values

    def _close(self) -> None:
        _stop(self._nvml)

    # One method per reading; each returns the Sample fields it fills.

    def _read_utilization(self) -> dict:
        rates = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
        return {"gpu_util_pct": rates.gpu, "mem_util_pct": rates.memory}

    def _read_memory(self) -> dict:
        nvml, info = self._nvml, None
        if self._memory_v2:  # v2 leaves out what the driver reserves, as nvidia-smi does
            try:
                info = nvml.nvmlDeviceGetMemoryInfo(self._handle, version=nvml.nvmlMemory_v2)
            except TypeError:  # a pynvml without the `version` argument
                self._memory_v2 = False
            except nvml.NVMLError as e:  # a driver without the v2 query
                if not _is(e, nvml, "FUNCTION_NOT_FOUND", "NOT_SUPPORTED",
                           "ARGUMENT_VERSION_MISMATCH"):
                    raise
                self._memory_v2 = False
        if info is None:
            info = nvml.nvmlDeviceGetMemoryInfo(self._handle)
        return {"mem_used_mib": round(info.used / MIB, 1),
                "mem_total_mib": round(info.total / MIB, 1)}

    def _read_temperature(self) -> dict:
        nvml = self._nvml
        read = getattr(nvml, "nvmlDeviceGetTemperature", None) or nvml.nvmlDeviceGetTemperatureV
        return {"temperature_c": read(self._handle, nvml.NVML_TEMPERATURE_GPU)}

    def _read_power(self) -> dict:
        return {"power_w": self._nvml.nvmlDeviceGetPowerUsage(self._handle) / 1000.0}

    def _read_power_limit(self) -> dict:
        return {"power_limit_w": self._nvml.nvmlDeviceGetEnforcedPowerLimit(self._handle) / 1000.0}

    def _read_fan(self) -> dict:
        return {"fan_pct": self._nvml.nvmlDeviceGetFanSpeed(self._handle)}

    def _read_sm_clock(self) -> dict:
        nvml = self._nvml
        return {"sm_clock_mhz": nvml.nvmlDeviceGetClockInfo(self._handle, nvml.NVML_CLOCK_SM)}


def _try(nvml, read):
    """``read()``, or ``None`` when NVML raises."""
    try:
        return read()
    except nvml.NVMLError:
        return None


def _text(value) -> str:
    """NVML strings come as ``bytes`` from older pynvml versions."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _bare_uuid(uuid: str) -> str:
    uuid = uuid.strip().lower()
    return uuid[4:] if uuid.startswith("gpu-") else uuid
