"""A Sample is a plain frozen record: it cannot change, and it reads out in one line."""
import dataclasses
import json

import pytest

from designer.monitor import DeviceInfo, Sample


def gpu_sample(**fields) -> Sample:
    return Sample(12.5, "nvml", "NVIDIA H200", 0, **fields)


def test_a_sample_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        gpu_sample().power_w = 1.0


def test_to_dict_keeps_every_field_and_missing_readings_are_none():
    data = gpu_sample(gpu_util_pct=37, power_w=312.5).to_dict()
    assert list(data)[:4] == ["time", "source", "device", "index"]
    assert data["gpu_util_pct"] == 37 and data["fan_pct"] is None
    assert json.loads(json.dumps(data)) == data


def test_from_dict_ignores_fields_it_does_not_know():
    data = gpu_sample(temperature_c=51).to_dict() | {"added_in_a_later_version": 1}
    assert Sample.from_dict(data) == gpu_sample(temperature_c=51)


def test_readings_are_only_the_measured_fields():
    assert gpu_sample(temperature_c=51, fan_pct=None).readings() == {"temperature_c": 51}


def test_the_summary_leaves_out_what_was_not_measured():
    sample = gpu_sample(gpu_util_pct=37, mem_used_mib=1234.0, mem_total_mib=143771.0,
                        temperature_c=51, power_limit_w=700.0, sm_clock_mhz=1980)
    assert sample.summary() == ("NVIDIA H200 [0]: GPU 37%, 1,234 / 143,771 MiB, 51 C, "
                                "SM 1980 MHz")
    cpu = Sample(0.0, "cpu", "CPU (16 cores)", cpu_util_pct=12.0, ram_used_mib=5120.0,
                 ram_total_mib=64000.0, process_rss_mib=300.0)
    assert cpu.summary() == ("CPU (16 cores): CPU 12%, RAM 5,120 / 64,000 MiB, "
                             "this process 300 MiB")
    assert gpu_sample().summary() == "NVIDIA H200 [0]: no readings"


def test_a_device_reads_as_a_picker_entry():
    assert str(DeviceInfo(1, "NVIDIA H200", "GPU-1", 143771.0)) == "1: NVIDIA H200 (140 GiB)"
    assert str(DeviceInfo(0, "NVIDIA A100")) == "0: NVIDIA A100"
