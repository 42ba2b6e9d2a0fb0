"""The memory check before a run, for one process and for each process of a data-parallel
run: DDP's gradient buckets counted, the CPU's memory shared by the processes of a machine;
and validate's verdict is train's."""
from __future__ import annotations

import json
import resource
from types import SimpleNamespace

import psutil
import pytest
import torch

from designer.graph.commands import validate
from designer.graph.memory import MIB
from designer.monitor import capacity
from designer.monitor.capacity import DeviceMemory, named_capacity
from designer.training.run import fits
from designer.training.run.errors import TrainingError
from tests.training.run.test_loop import tiny_project

CPU = torch.device("cpu")


@pytest.fixture
def setup(tmp_path):
    project = tiny_project(tmp_path)
    return project.graph, project.solver_settings(), project.training_settings()


def room(monkeypatch, total: int, limit: str = "", name: str = "the CPU") -> None:
    monkeypatch.setattr(fits, "device_memory",
                        lambda device: DeviceMemory(str(device), name, int(total), limit))


def test_each_process_also_holds_ddps_gradient_buckets(setup, monkeypatch):
    graph, solver, cfg = setup
    room(monkeypatch, 1 << 40)
    alone = fits.check_fits(graph, CPU, None, solver, cfg)
    one_of_two = fits.check_fits(graph, CPU, None, solver, cfg, processes=2, on_this_machine=1)
    assert one_of_two.buckets == alone.gradients and alone.buckets == 0
    assert one_of_two.total == alone.total + alone.gradients
    assert "DDP buckets" in one_of_two.parts() and "DDP buckets" not in alone.parts()


def test_processes_on_one_cpu_share_its_memory(setup, monkeypatch):
    graph, solver, cfg = setup
    room(monkeypatch, 1 << 40)
    each = fits.check_fits(graph, CPU, None, solver, cfg, processes=2, on_this_machine=2)
    room(monkeypatch, each.needed * 2 - 1)  # enough for one of them, not for both
    assert fits.check_fits(graph, CPU, None, solver, cfg, 2, on_this_machine=1) is not None
    with pytest.raises(TrainingError) as e:
        fits.check_fits(graph, CPU, None, solver, cfg, processes=2, on_this_machine=2)
    text = str(e.value)
    assert e.value.code == 2 and "\n" not in text
    assert text.startswith("training this net on 2 processes needs about ")
    assert " in each (weights " in text and "but the CPU has" in text
    assert "train on fewer processes" in text


def test_a_per_process_limit_is_checked_once_and_a_gpu_is_each_ranks_own(setup, monkeypatch):
    graph, solver, cfg = setup
    room(monkeypatch, 1 << 40)
    each = fits.check_fits(graph, CPU, None, solver, cfg, processes=2, on_this_machine=2)
    room(monkeypatch, each.needed + 1, limit="ulimit -v")  # ulimit -v: for each process alone
    assert fits.check_fits(graph, CPU, None, solver, cfg, 2, on_this_machine=2) is not None
    room(monkeypatch, each.needed - 1, limit="ulimit -v")
    with pytest.raises(TrainingError, match=r"^training this net needs about .* \(limited by "
                                            r"ulimit -v\) has"):
        fits.check_fits(graph, CPU, None, solver, cfg, 2, on_this_machine=2)
    gpu = torch.device("cuda", 1)  # 8 GPUs of one machine: each rank checks its own
    room(monkeypatch, 1 << 40, name="NVIDIA H200 (GPU 1)")
    each = fits.check_fits(graph, gpu, None, solver, cfg, processes=8, on_this_machine=8)
    room(monkeypatch, each.needed + 1, name="NVIDIA H200 (GPU 1)")
    assert fits.check_fits(graph, gpu, None, solver, cfg, 8, on_this_machine=8) is not None


def test_validate_gives_the_verdict_train_gives_under_an_address_space_limit(
        tmp_path, monkeypatch, capsys):
    # validate runs in a process that never loads torch, train in one that has: near the edge
    # of a `ulimit -v`, validate once said the net fits and train then refused it
    project = tiny_project(tmp_path)
    graph, solver, cfg = project.graph, project.solver_settings(), project.training_settings()
    room(monkeypatch, 1 << 40)
    needed = fits.check_fits(graph, CPU, None, solver, cfg).needed
    monkeypatch.undo()
    soft = needed + 400 * MIB  # the net fits beside a little, not beside torch
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, soft))
    monkeypatch.setattr(capacity, "CGROUP_LIMITS", ())
    mapped = {"bytes": 45 * MIB}  # what validate's process has mapped
    monkeypatch.setattr(psutil.Process, "memory_info",
                        lambda self: SimpleNamespace(vms=mapped["bytes"], rss=mapped["bytes"]))
    assert validate(str(tmp_path / "tiny.json"), as_json=True, room=named_capacity,
                    device="cpu") in (0, 1)
    said = json.loads(capsys.readouterr().out)["memory"]
    mapped["bytes"] = 800 * MIB  # the trainer's: torch, numpy and the app loaded
    try:
        fits.check_fits(graph, CPU, None, solver, cfg)
        refused = None
    except TrainingError as e:
        refused = str(e)
    assert said["fits"] == (refused is None)
    assert said["message"] == refused  # one sentence, with the same figures
