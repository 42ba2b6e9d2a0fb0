"""Without an NVIDIA driver (this machine, CI) the monitor falls back to the CPU and says why."""
import pickle
import sys
import time

import pynvml
import pytest

from designer.monitor import cpu as cpu_module
from designer.monitor import GPU_FIELDS, CpuMonitor, list_devices, open_monitor, training_gpu


def _nvml_works() -> bool:
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True


needs_no_driver = pytest.mark.skipif(_nvml_works(), reason="this machine has an NVIDIA driver")


@needs_no_driver
def test_without_a_driver_the_monitor_watches_the_cpu_and_says_why():
    with open_monitor() as monitor:
        assert isinstance(monitor, CpuMonitor)
        assert monitor.kind == "cpu" and monitor.index is None
        assert monitor.device.startswith("CPU (") and monitor.device.endswith(" cores)")
        assert monitor.reason == ("No NVIDIA driver found (NVML library not found); "
                                  "showing CPU utilisation and memory instead.")
        sample = monitor.poll()
    assert sample.source == "cpu" and sample.device == monitor.device
    assert all(getattr(sample, f) is None for f in GPU_FIELDS)
    assert 0 < sample.ram_used_mib < sample.ram_total_mib
    assert sample.process_rss_mib > 0


@needs_no_driver
def test_without_a_driver_there_is_no_gpu_to_pick():
    assert list_devices() == []


def test_cpu_utilisation_is_measured_from_opening_and_between_polls():
    with CpuMonitor() as monitor:
        time.sleep(0.05)  # a few kernel ticks
        first = monitor.poll()
        sum(range(200_000))
        time.sleep(0.05)
        second = monitor.poll()
    for sample in (first, second):
        assert 0.0 <= sample.cpu_util_pct <= 100.0
    assert second.time > first.time


def test_two_polls_within_one_tick_repeat_the_last_value_instead_of_inventing_one(monkeypatch):
    # The kernel's counters, as psutil would give them: 4 CPU-seconds pass (1 busy) before the
    # first poll, then none before the second, as when two polls land inside one kernel tick.
    # (Timing two real polls cannot promise that: on a loaded machine a tick may fall between.)
    readings = iter([(10.0, 40.0), (11.0, 44.0), (11.0, 44.0)])
    monkeypatch.setattr(cpu_module, "_busy_and_total", lambda: next(readings))
    with CpuMonitor() as monitor:
        first = monitor.poll()
        again = monitor.poll()
    assert first.cpu_util_pct == 25.0
    assert again.cpu_util_pct == first.cpu_util_pct


def test_a_cpu_sample_pickles_and_round_trips_through_a_dict():
    with CpuMonitor() as monitor:
        sample = monitor.poll()
    assert pickle.loads(pickle.dumps(sample)) == sample
    assert type(sample).from_dict(sample.to_dict()) == sample


def test_without_the_nvml_package_the_reason_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    monitor = open_monitor()
    assert monitor.kind == "cpu"
    assert monitor.reason == ("The nvidia-ml-py package is not installed; showing CPU "
                              "utilisation and memory instead.")
    assert list_devices() == []


def test_cuda_visible_devices_that_hides_every_gpu_means_the_cpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monitor = open_monitor()
    assert monitor.reason == ("CUDA_VISIBLE_DEVICES hides every GPU, so training runs on the "
                              "CPU; showing CPU utilisation and memory instead.")


@pytest.mark.parametrize("value, gpu", [
    (None, 0), ("2", 2), ("3,1", 3), (" 1 , 0", 1), ("GPU-5c1e", "GPU-5c1e"),
    ("", None), ("-1", None), ("0x1", None),
])
def test_the_training_gpu_is_the_first_that_cuda_visible_devices_names(value, gpu):
    environ = {} if value is None else {"CUDA_VISIBLE_DEVICES": value}
    assert training_gpu(environ) == gpu
