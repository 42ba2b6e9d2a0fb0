"""The window tells the training memory (status bar, Properties) on the device picked, warns
when the net cannot fit it, and keeps Train off then."""
from designer.monitor import capacity as C


def test_the_status_bar_and_properties_tell_the_memory_and_follow_the_engine(tiny):
    w = tiny
    w.memory.refresh()
    assert w.memory_label.text().startswith("\u00b7   ~") and "to train on the CPU" in \
        w.memory_label.text()
    w.properties.set_selection([])
    assert "to train on the CPU (Adam, fp32)" in w.properties.project_panel.totals.text()
    w.properties.set_selection(["lstm1"])
    assert "kept for the backward pass" in w.properties.layer_panel.readout.text()
    cudnn = w.memory.estimate.layers["lstm1"]
    w.training.engine_picker.select("caffe")
    assert w.memory.engine == "caffe" and w.memory.estimate.layers["lstm1"] != cudnn


def test_a_net_that_cannot_fit_is_warned_and_train_stays_off(tiny, monkeypatch):
    w = tiny
    monkeypatch.setattr(C, "capacity", lambda device: C.DeviceMemory(
        "cpu", "the CPU", 512 << 20, "", 512 << 20))  # a machine of 512 MiB
    w.memory._rooms.clear()
    w.doc.set_param("lstm1", "num_output", 2048)    # some 300 MiB, and the process
    w.memory.refresh()
    assert w.memory.message and "but the CPU has 512 MiB" in w.memory.message
    assert "\u26a0 needs ~" in w.memory_label.text()
    assert not w.act.train.isEnabled() and "but the CPU has 512 MiB" in w.act.train.toolTip()
    assert w.training.train() is None and not w.training.busy
    w.properties.set_selection([])
    assert "It cannot train there" in w.properties.project_panel.totals.text()
    w.doc.undo() if hasattr(w.doc, "undo") else w.doc.stack.undo()
    w.memory.refresh()
    assert w.memory.message is None and w.act.train.isEnabled()
