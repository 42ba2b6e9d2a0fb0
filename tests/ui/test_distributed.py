"""Data-parallel training from the window: "All GPUs (N)" in the device picker, every GPU in
the device panel, and a run in a child process group followed through rank 0's records."""
from __future__ import annotations

import json
import sys

import psutil
import pytest

from designer.monitor import DeviceInfo
from designer.ui.device.panel import DevicePanel
from designer.ui.runs.worker import Job, TrainRequest
from designer.ui.train.pickers import DevicePicker, device_choices
from designer.ui.train.processes import ProcessControl, ProcessTrainWorker
from tests.monitor.fake_nvml import FakeNvml, datacenter_gpu

H200 = DeviceInfo(0, "NVIDIA H200", "GPU-aaa", 143771.0)


def test_the_picker_offers_all_gpus_when_there_are_several(qtbot):
    two = [H200, DeviceInfo(1, "NVIDIA H200", "GPU-bbb", 143771.0)]
    every = device_choices(two, {})[-1]
    assert (every.label, every.device, every.monitor, every.processes) == \
        ("All GPUs (2)", "cuda", (0, 1), 2)
    assert all(c.processes == 1 for c in device_choices([H200], {}))
    assert device_choices(two, {"CUDA_VISIBLE_DEVICES": "1"})[-1].processes == 1
    picker = DevicePicker(device_choices(two, {}))
    qtbot.addWidget(picker)
    picker.follow_project("cuda")  # the project's "cuda" is one GPU, not all of them
    assert picker.currentText() == "GPU 0: NVIDIA H200 (140 GiB)" and picker.processes() == 1
    assert picker.select("all") and picker.processes() == 2 and picker.device() == "cuda"


def test_the_device_panel_shows_every_gpu_of_the_run(qtbot, monkeypatch):
    first, second = datacenter_gpu(), datacenter_gpu()
    second.uuid, second.used_mib, second.util = "GPU-second", 4321, (88, 40)
    nvml = FakeNvml(first, second)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    panel = DevicePanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.watch((0, 1))
    qtbot.waitUntil(lambda: panel.samples >= 2, timeout=60_000)
    assert panel.device_label.text() == "2 x NVIDIA H200"
    assert not panel.legend.isHidden() and "GPU 0" in panel.legend.text() and \
        "GPU 1" in panel.legend.text()
    assert panel.plots["gpu_util_pct"].value_label.text() == "37 \u00b7 88 %"
    assert panel.plots["mem_used_mib"].value_label.text() == "1,234 \u00b7 4,321 / 143,771 MiB"
    curves = panel.plots["mem_used_mib"].curves
    assert [c.getData()[1][-1] for c in curves] == [1234, 4321]
    panel.watch(0)  # back to one GPU: one curve, no legend
    qtbot.waitUntil(lambda: panel.device_label.text() == "NVIDIA H200", timeout=60_000)
    assert panel.legend.isHidden() and len(panel.plots["mem_used_mib"].curves) == 1
    panel.shutdown()
    assert nvml.open_sessions == 0


def _fake_launcher(monkeypatch, script: str) -> None:
    monkeypatch.setattr(ProcessTrainWorker, "command",
                        lambda self: [sys.executable, "-c", script])


def _run_worker(qtbot, tmp_path, control=None):
    request = TrainRequest({"name": "x"}, None, str(tmp_path / "run"), processes=2)
    worker = ProcessTrainWorker(request, control or ProcessControl())
    got = {"records": [], "failed": [], "downloads": []}
    worker.record.connect(got["records"].append)
    worker.failed.connect(got["failed"].append)
    worker.download.connect(lambda done, total: got["downloads"].append((done, total)))
    job = Job(worker, "test")
    with qtbot.waitSignal(job.done, timeout=30_000):
        job.start()
    return got


def test_records_come_back_as_plain_dicts_and_commands_reach_rank_0(qtbot, tmp_path,
                                                                    monkeypatch):
    _fake_launcher(monkeypatch, (
        "import json, sys\n"
        "print(json.dumps({'kind': 'download', 'done': 5, 'total': 10}), flush=True)\n"
        "print('a library talking', flush=True)\n"
        "print(json.dumps({'kind': 'start', 'step': 0}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'kind': 'note', 'message': line.strip()}), flush=True)\n"
        "    if line.strip() == 'stop': break\n"
        "print(json.dumps({'kind': 'done', 'reason': 'stopped'}), flush=True)\n"))
    control = ProcessControl()
    control.pause()  # before the processes start: sent when they do
    control.resume()
    control.stop()
    got = _run_worker(qtbot, tmp_path, control)
    assert [r["kind"] for r in got["records"]] == ["start", "note", "note", "note", "done"]
    assert [r["message"] for r in got["records"][1:4]] == ["pause", "resume", "stop"]
    assert got["downloads"] == [(5, 10)] and got["failed"] == []
    saved = json.loads((tmp_path / "run" / "project.json").read_text())
    assert saved == {"name": "x"}  # the snapshot the processes train


def test_a_failure_is_the_launchers_one_sentence(qtbot, tmp_path, monkeypatch):
    _fake_launcher(monkeypatch, (
        "import sys\n"
        "print('some worker noise', file=sys.stderr)\n"
        "print('rnn-designer: rank 1 of 2 was killed (SIGKILL); the other process was "
        "stopped', file=sys.stderr)\n"
        "sys.exit(1)\n"))
    got = _run_worker(qtbot, tmp_path)
    assert [f["message"] for f in got["failed"]] == [
        "rank 1 of 2 was killed (SIGKILL); the other process was stopped"]
    assert "some worker noise" in got["failed"][0]["details"]


@pytest.mark.slow
def test_the_window_trains_on_two_processes_and_closing_it_saves(qtbot, tiny):
    """Two CPU processes (gloo) stand in for two GPUs: the charts fill from rank 0's
    records, pause and resume reach every process, and closing the window stops them all
    after a checkpoint."""
    from designer.training.run import checkpoint
    w = tiny
    run = w.training.train(steps=100000, device="cpu", processes=2)
    # three processes importing torch: minutes on a loaded 2-core machine, seconds idle
    qtbot.waitUntil(lambda: run.step >= 4, timeout=400_000)
    launcher = w.training.token._proc.pid
    workers = psutil.Process(launcher).children()
    assert len(workers) == 2
    assert run.device_name.startswith("2 x CPU") and run.label.endswith("\u00b7 2 x CPU")
    w.training.pause()
    qtbot.waitUntil(lambda: run.state == "paused", timeout=60_000)
    w.training.resume()
    qtbot.waitUntil(lambda: run.state == "running", timeout=60_000)
    w.close()  # stops the run, which saves, then the window goes
    assert not w.training.busy and run.state == "stopped"
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in workers)
    ck = checkpoint.load(run.run_dir)
    assert ck.step == run.step and ck.meta["world_size"] == 2
    records = [json.loads(x) for x in (run.run_dir / "metrics.jsonl").read_text().splitlines()]
    assert {r["world_size"] for r in records if r["kind"] == "train"} == {2}
    assert "2 x CPU" in w.training.output.log.toPlainText()



@pytest.mark.slow
def test_a_worker_killed_under_the_window_fails_the_run_in_one_sentence(qtbot, tiny):
    """kill -9 of one rank of an All-GPUs run (two CPU processes stand in): the run ends as
    failed with the launcher's sentence naming the rank, and the window trains on."""
    w = tiny
    run = w.training.train(steps=100000, device="cpu", processes=2)
    qtbot.waitUntil(lambda: run.step >= 2, timeout=400_000)
    launcher = w.training.token._proc.pid
    rank1 = next(p for p in psutil.Process(launcher).children()
                 if p.environ().get("RANK") == "1")
    rank1.kill()
    qtbot.waitUntil(lambda: not w.training.busy, timeout=120_000)
    assert run.state == "failed"
    said = "rank 1 of 2 was killed (SIGKILL); the other process was stopped, and "
    assert w.training.last_error.startswith(said)
    assert f"Training failed: {said}" in w.training.output.log.toPlainText()
    assert [title for title, _ in w.notices] == ["Training failed"]
    again = w.training.train(steps=2, device="cpu")  # the window goes on
    qtbot.waitUntil(lambda: not w.training.busy, timeout=300_000)
    assert again.state == "finished"


def test_a_run_continued_on_all_gpus_resumes_its_folder_in_child_processes(qtbot, tiny,
                                                                          tmp_path):
    """Continue Training with "All GPUs" picked: the request asks for every GPU, and the
    launcher resumes the run's own folder (its snapshot kept) on its own data."""
    from designer.ui.resume import continue_run
    from designer.ui.train.pickers import DeviceChoice
    from tests.ui.conftest import train_and_wait
    w = tiny
    first = train_and_wait(qtbot, w)
    picker = w.training.device_picker
    picker.set_choices(device_choices([H200, DeviceInfo(1, "NVIDIA H200", "GPU-bbb", 1.0)], {}))
    assert picker.select("all") and isinstance(picker.choice(), DeviceChoice)
    asked = []
    w.training.launch = lambda run, request, new=False: asked.append(request) or run
    assert continue_run(w.training, first.run_dir, until=16) is first
    request = asked[0]
    assert (request.processes, request.device, request.resume, request.steps) == \
        (2, "cuda", True, 16)
    command = ProcessTrainWorker(request, ProcessControl()).command()
    assert command[command.index("--resume") + 1] == str(first.run_dir.resolve())
    assert "--out" not in command and command[command.index("--nproc") + 1] == "2"
    assert command[command.index("--corpus") + 1] == request.corpus
    assert command[command.index("--project-dir") + 1] == str(first.run_dir.resolve())
