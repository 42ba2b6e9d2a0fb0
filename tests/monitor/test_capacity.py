"""How much memory a device has: the GPU through NVML (numbered as CUDA numbers it), the CPU
through psutil, less when ``ulimit -v`` or a control group limits the process."""
import resource

import pynvml

from designer.monitor import capacity as C
from tests.monitor.fake_nvml import consumer_gpu as rtx4090, datacenter_gpu as h200

MIB = 1 << 20


def test_a_gpu_is_measured_through_nvml_and_the_session_closed(fake_nvml):
    nvml = fake_nvml(rtx4090(), h200())
    room = C.capacity("cuda:1")
    assert room.device == "cuda:1" and room.name == "NVIDIA H200 (GPU 1)"
    assert room.total == 143771 * MIB and 0 < room.free <= room.total
    assert nvml.open_sessions == 0


def test_cuda_visible_devices_renumbers_the_gpus(fake_nvml, monkeypatch):
    fake_nvml(rtx4090(), h200())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert C.capacity("cuda:0").name == "NVIDIA H200 (GPU 0)"
    assert C.capacity("cuda").total == 143771 * MIB
    assert C.capacity("cuda:1").total == C.gpu_capacity(1).total != 143771 * MIB
    assert C.capacity("cuda:2") is None


def test_no_driver_means_unknown_not_an_error(fake_nvml):
    fake_nvml(rtx4090(), init_error=pynvml.NVMLError_LibraryNotFound)
    assert C.capacity("cuda:0") is None
    assert C.named_capacity("cuda") is None


def test_the_cpu_is_the_machine_unless_the_process_is_limited(monkeypatch, tmp_path):
    monkeypatch.setattr(C, "CGROUP_LIMITS", (str(tmp_path / "none"),))
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    room = C.capacity("cpu")
    assert room.name == "the CPU" and room.limit == "" and room.total > 256 * MIB
    assert 0 < room.free <= room.total
    # ulimit -v: what is left of the address space past what a trainer maps (or this
    # process, when it maps more)
    import psutil
    mapped = max(psutil.Process().memory_info().vms, C.TRAINER_MAPPED)
    soft = mapped + 2**30
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, soft))
    limited = C.capacity("cpu")
    assert limited.limit == "ulimit -v" and 0.9 * 2**30 < limited.total <= 2**30
    # a control group's limit
    group = tmp_path / "memory.max"
    group.write_text(f"{512 * MIB}\n")
    monkeypatch.setattr(C, "CGROUP_LIMITS", (str(group),))
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    contained = C.capacity("cpu")
    assert contained.total == 512 * MIB and "control group" in contained.limit
    assert C.named_capacity("cpu") == ("the CPU (limited by its control group's memory limit)",
                                       512 * MIB)
    group.write_text("max\n")
    assert C.capacity("cpu").total == room.total
