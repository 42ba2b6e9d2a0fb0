"""The device panel: the training GPU through NVML, every reading optional; without an
NVIDIA driver it says so and shows the CPU instead. The picker lists NVML's GPUs."""
import sys

import pynvml
import pytest

from designer.monitor import DeviceInfo
from designer.ui.device.panel import DevicePanel
from designer.ui.train.pickers import DevicePicker, device_choices
from tests.monitor.fake_nvml import FakeNvml, datacenter_gpu


@pytest.fixture
def panel(qtbot):
    p = DevicePanel()
    qtbot.addWidget(p)
    p.show()
    yield p
    p.shutdown()


def shown(panel) -> list[str]:
    return [name for name, plot in panel.plots.items() if not plot.widget.isHidden()]


def test_without_an_nvidia_driver_the_panel_says_so_and_shows_the_cpu(qtbot, panel,
                                                                       monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml",
                        FakeNvml(init_error=pynvml.NVMLError_LibraryNotFound))
    panel.watch(None)
    qtbot.waitUntil(lambda: panel.samples >= 2, timeout=60_000)
    assert panel.kind == "cpu"
    assert panel.reason_label.text() == ("No NVIDIA driver found (NVML library not found); "
                                         "showing CPU utilisation and memory instead.")
    assert not panel.reason_label.isHidden()
    assert shown(panel) == ["cpu_util_pct", "ram_used_mib", "process_rss_mib"]
    x, y = panel.plots["ram_used_mib"].curve.getData()
    assert len(x) == 2 and (x <= 0).all() and (y > 0).all()  # seconds before now, MiB


def test_a_datacenter_gpu_shows_what_it_reports_and_nothing_else(qtbot, panel, monkeypatch):
    nvml = FakeNvml(datacenter_gpu())
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    panel.watch(0)
    qtbot.waitUntil(lambda: panel.samples >= 1, timeout=60_000)
    assert panel.kind == "nvml" and panel.device_label.text() == "NVIDIA H200"
    assert panel.reason_label.isHidden()
    assert shown(panel) == ["gpu_util_pct", "mem_used_mib", "temperature_c"]  # no fan, power
    assert panel.plots["mem_used_mib"].value_label.text() == "1,234 / 143,771 MiB"
    panel.shutdown()
    assert nvml.open_sessions == 0  # NVML's init is balanced


def test_history_is_a_fixed_window(qtbot, panel):
    panel.watch("cpu")
    qtbot.waitUntil(lambda: panel.samples >= 1, timeout=60_000)
    plot = panel.plots["cpu_util_pct"]
    size = plot.values.size
    for i in range(size + 50):
        plot.add(float(i), panel.last_sample)
    assert plot.values.size == size and plot.times[-1] == size + 49


def test_the_picker_lists_the_gpus_cuda_will_see():
    gpus = [DeviceInfo(0, "NVIDIA H200", "GPU-aaa", 143771.0),
            DeviceInfo(1, "NVIDIA H200", "GPU-bbb", 143771.0)]
    assert [c.device for c in device_choices(gpus, {})] == ["auto", "cpu", "cuda:0", "cuda:1",
                                                            "cuda"]  # and "All GPUs (2)"
    assert device_choices(gpus, {})[2].label == "GPU 0: NVIDIA H200 (140 GiB)"
    hidden = device_choices(gpus, {"CUDA_VISIBLE_DEVICES": "1"})
    assert [(c.device, c.monitor) for c in hidden[2:]] == [("cuda:0", 1)]
    assert [c.device for c in device_choices(gpus, {"CUDA_VISIBLE_DEVICES": ""})] == \
        ["auto", "cpu"]
    assert [c.monitor for c in device_choices(gpus, {"CUDA_VISIBLE_DEVICES": "GPU-bbb,0"})[2:]] \
        == [1, 0, (1, 0)]


def test_the_picker_follows_the_project_setting(qtbot):
    picker = DevicePicker(device_choices([DeviceInfo(0, "NVIDIA H100", None, None)], {}))
    qtbot.addWidget(picker)
    picker.follow_project("cuda")
    assert picker.device() == "cuda:0" and picker.currentText() == "GPU 0: NVIDIA H100"
    picker.follow_project("cpu")
    assert picker.device() == "cpu"
    assert not picker.select("cuda:5") and picker.device() == "cpu"


def test_a_long_entry_picked_is_elided_and_given_in_full_in_the_tool_tip(qtbot):
    picker = DevicePicker(device_choices([DeviceInfo(0, "NVIDIA H100 80GB HBM3", None, 81559.0)],
                                         {}))
    qtbot.addWidget(picker)
    picker.show()
    assert not picker.tip().startswith("<b>")  # "Auto (GPU if present)" fits
    picker.select("cuda:0")
    assert picker.tip().startswith("<b>GPU 0: NVIDIA H100 80GB HBM3 (80 GiB)</b><br>The device")


def test_the_engine_picker_names_the_registered_cells_and_where_each_runs():
    """The tool-tips come from the cells' facts: which run on the engine picked, and which on
    their own fused engine, in the cells' own words."""
    from designer.graph import registry
    from designer.ui.train.pickers import engine_choices
    tips = {value: tip for value, _, tip in engine_choices()}
    assert tips["caffe"].startswith("Every " + "/".join(registry.engine_kinds()) + " runs as")
    assert tips["cudnn"].startswith("Every LSTM/GRU/RNN runs on the fused cuDNN kernel")
    assert "MinGRU and MinLSTM on the parallel scan" in tips["auto"]
    assert "the mLSTM on its chunkwise form" in tips["auto"]
    assert "the sLSTM on its fused engine" in tips["auto"]
    for kind in registry.engine_kinds():  # every cell with a fused engine, in its own words
        cell = registry.cell(kind)
        assert not cell.fused or kind in tips["auto"], kind
    assert "GRU and RNN layers, and any layer the kernel cannot run" in tips["persist"]
    assert "LSTMSimple" not in " ".join(tips.values())  # no engine parameter: always unrolled
