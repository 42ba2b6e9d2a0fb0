"""Monitor tests: a fake pynvml on demand, and no CUDA_VISIBLE_DEVICES from the shell."""
import sys

import pytest

from tests.monitor.fake_nvml import FakeNvml


@pytest.fixture(autouse=True)
def _no_cuda_visible_devices(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.fixture
def fake_nvml(monkeypatch):
    """Install a `FakeNvml` over these GPUs as ``pynvml``: ``nvml = fake_nvml(gpu, ...)``."""
    def install(*gpus, init_error=None) -> FakeNvml:
        nvml = FakeNvml(*gpus, init_error=init_error)
        monkeypatch.setitem(sys.modules, "pynvml", nvml)
        return nvml
    return install
