"""The NVML monitor against a fake pynvml: full boards, datacenter boards, and a GPU that is lost."""
import pickle
import threading

import pynvml
import pytest

from designer.monitor import GPU_FIELDS, NvmlMonitor, list_devices, open_monitor
from tests.monitor.fake_nvml import consumer_gpu, datacenter_gpu


def test_a_consumer_gpu_reports_every_field(fake_nvml):
    nvml = fake_nvml(consumer_gpu())
    with open_monitor(0) as monitor:
        assert isinstance(monitor, NvmlMonitor)
        assert (monitor.kind, monitor.device, monitor.index, monitor.reason) == (
            "nvml", "NVIDIA GeForce RTX 4090", 0, None)
        sample = monitor.poll()

    assert sample.source == "nvml" and sample.device == "NVIDIA GeForce RTX 4090"
    assert (sample.gpu_util_pct, sample.mem_util_pct) == (37, 12)
    assert (sample.mem_used_mib, sample.mem_total_mib) == (1234.0, 24564.0)  # v2: no reserved
    assert sample.temperature_c == 51
    assert (sample.power_w, sample.power_limit_w) == (312.5, 450.0)  # mW -> W
    assert (sample.fan_pct, sample.sm_clock_mhz) == (30, 1980)
    assert sample.ram_total_mib > 0  # host fields come along
    assert nvml.open_sessions == 0


def test_a_datacenter_gpu_leaves_fan_and_power_blank_and_is_not_asked_again(fake_nvml):
    nvml = fake_nvml(datacenter_gpu())
    with open_monitor(0) as monitor:
        first, second = monitor.poll(), monitor.poll()
        assert monitor.unsupported == {"fan", "power"}
        assert monitor.reason is None  # a missing fan is no news for the user

    for sample in (first, second):
        assert sample.fan_pct is None and sample.power_w is None
        assert sample.power_limit_w == 700.0 and sample.temperature_c == 51
        assert sample.mem_total_mib == 143771.0
    assert nvml.calls["nvmlDeviceGetFanSpeed"] == 1
    assert nvml.calls["nvmlDeviceGetPowerUsage"] == 1
    assert nvml.calls["nvmlDeviceGetTemperature"] == 2


def test_a_passing_error_blanks_only_that_field_only_that_once(fake_nvml):
    gpu = consumer_gpu()
    gpu.flaky = {"nvmlDeviceGetTemperature"}
    fake_nvml(gpu)
    with open_monitor(0) as monitor:
        first, second = monitor.poll(), monitor.poll()
    assert first.temperature_c is None and first.gpu_util_pct == 37
    assert second.temperature_c == 51


def test_a_lost_gpu_blanks_every_gpu_field_and_says_so(fake_nvml):
    gpu = consumer_gpu()
    nvml = fake_nvml(gpu)
    monitor = open_monitor(0)
    assert monitor.poll().gpu_util_pct == 37

    gpu.lost = True  # fell off the bus mid-run
    gone = monitor.poll()
    assert all(getattr(gone, f) is None for f in GPU_FIELDS)
    assert gone.source == "nvml" and gone.ram_total_mib > 0
    assert monitor.lost
    assert monitor.reason == ("NVIDIA GeForce RTX 4090 (GPU 0) stopped answering (NVML: GPU is "
                              "lost); its readings stay blank until the GPU is reset.")

    calls = sum(nvml.calls.values())
    assert monitor.poll().gpu_util_pct is None
    assert sum(nvml.calls.values()) == calls  # a lost GPU is not asked again
    monitor.close()
    assert nvml.open_sessions == 0


def test_the_gpu_lost_between_two_readings_of_one_poll_blanks_the_whole_sample(fake_nvml):
    gpu = consumer_gpu()
    gpu.unsupported = set()
    fake_nvml(gpu)
    with open_monitor(0) as monitor:
        real_read = monitor._read_temperature

        def lose_then_read():
            gpu.lost = True
            return real_read()
        monitor._read_temperature = lose_then_read  # utilisation and memory were read already
        sample = monitor.poll()
    assert all(getattr(sample, f) is None for f in GPU_FIELDS)


def test_older_pynvml_without_memory_v2_falls_back_to_v1(fake_nvml):
    nvml = fake_nvml(consumer_gpu())
    v1_only = nvml.nvmlDeviceGetMemoryInfo
    nvml.nvmlDeviceGetMemoryInfo = lambda gpu: v1_only(gpu)  # no `version` argument: TypeError
    with open_monitor(0) as monitor:
        assert monitor.poll().mem_used_mib == 1234.0 + 512.0  # v1 counts the reserved memory


def test_an_older_driver_without_memory_v2_falls_back_to_v1_once(fake_nvml):
    nvml = fake_nvml(consumer_gpu())
    both = nvml.nvmlDeviceGetMemoryInfo
    asked = []

    def old_driver(gpu, version=None):
        asked.append(version)
        if version is not None:
            raise pynvml.NVMLError_FunctionNotFound()
        return both(gpu)
    nvml.nvmlDeviceGetMemoryInfo = old_driver
    with open_monitor(0) as monitor:
        assert monitor.poll().mem_used_mib == monitor.poll().mem_used_mib == 1234.0 + 512.0
    assert asked == [pynvml.nvmlMemory_v2, None, None]


def test_the_gpu_is_chosen_by_index_uuid_or_cuda_visible_devices(fake_nvml, monkeypatch):
    fake_nvml(consumer_gpu(), datacenter_gpu())
    with open_monitor(1) as monitor:
        assert monitor.device == "NVIDIA H200"
    with open_monitor(uuid="h200bbbb") as monitor:  # torch prints UUIDs without "GPU-"
        assert monitor.index == 1
    with open_monitor() as monitor:
        assert monitor.index == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    with open_monitor() as monitor:
        assert monitor.index == 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-4090aaaa")
    with open_monitor() as monitor:
        assert monitor.index == 0
    with pytest.raises(ValueError):
        open_monitor(0, uuid="GPU-4090aaaa")


@pytest.mark.parametrize("ask, reason", [
    (dict(device_index=2), "There is no GPU 2 (NVML sees GPUs 0 to 1); showing CPU utilisation "
                           "and memory instead."),
    (dict(uuid="GPU-ffff"), "No NVIDIA GPU has the UUID GPU-ffff; showing CPU utilisation and "
                            "memory instead."),
])
def test_a_gpu_that_is_not_there_falls_back_to_the_cpu(fake_nvml, ask, reason):
    nvml = fake_nvml(consumer_gpu(), datacenter_gpu())
    with open_monitor(**ask) as monitor:
        assert (monitor.kind, monitor.reason) == ("cpu", reason)
    assert nvml.inits == nvml.shutdowns == 1


def test_a_machine_with_a_driver_but_no_gpu_falls_back(fake_nvml):
    nvml = fake_nvml()
    monitor = open_monitor()
    assert monitor.reason == "NVML sees no NVIDIA GPU; showing CPU utilisation and memory instead."
    assert nvml.open_sessions == 0


def test_a_driver_that_is_not_loaded_is_named(fake_nvml):
    fake_nvml(consumer_gpu(), init_error=pynvml.NVMLError_DriverNotLoaded)
    assert open_monitor().reason == ("The NVIDIA driver is not loaded (NVML: Driver Not Loaded); "
                                     "showing CPU utilisation and memory instead.")


def test_init_and_shutdown_stay_balanced(fake_nvml):
    nvml = fake_nvml(consumer_gpu(), datacenter_gpu())
    a, b = open_monitor(0), open_monitor(1)
    list_devices()
    assert nvml.open_sessions == 2  # one per open monitor; list_devices closed its own
    a.close()
    a.close()  # a second close does nothing
    assert nvml.open_sessions == 1
    b.close()
    assert nvml.inits == nvml.shutdowns == 3
    with pytest.raises(ValueError, match="closed"):
        a.poll()


def test_list_devices_names_every_gpu(fake_nvml):
    nvml = fake_nvml(consumer_gpu(), datacenter_gpu())
    devices = list_devices()
    assert [(d.index, d.name, d.memory_total_mib) for d in devices] == [
        (0, "NVIDIA GeForce RTX 4090", 24564.0), (1, "NVIDIA H200", 143771.0)]
    assert devices[1].uuid == "GPU-h200bbbb-1111-1111-1111-111111111111"
    assert str(devices[1]) == "1: NVIDIA H200 (140 GiB)"
    assert nvml.open_sessions == 0


def test_list_devices_skips_a_lost_gpu(fake_nvml):
    lost = consumer_gpu()
    lost.lost = True
    fake_nvml(lost, datacenter_gpu())
    assert [d.index for d in list_devices()] == [1]


def test_samples_cross_threads_and_pickle(fake_nvml):
    fake_nvml(datacenter_gpu())
    samples = []
    with open_monitor(0) as monitor:
        threads = [threading.Thread(target=lambda: samples.append(monitor.poll()))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(samples) == 8
    assert pickle.loads(pickle.dumps(samples[0])) == samples[0]
