"""Data-parallel training for real: ``rnn-designer train --nproc 2`` on the CPU (gloo), two
worker processes and their launcher, on a tiny net for a few steps.

Each launch starts three Python processes that import torch (about 3 s of CPU each): on the
2-core CI machine under load a test here takes minutes, not seconds. So the tests start as few
processes as they can (the one-process runs they compare with train in this process), and
their waits are deadlines, generous and ended as soon as what they wait for has happened.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from designer.training.run import checkpoint as C
from designer.training.run.loop import RunOptions, train
from tests.conftest import PROJECTS, need_data
from tests.training.run.test_loop import tiny_project

pytestmark = pytest.mark.slow

LAUNCH_TIMEOUT_S = 400  # one launch, under heavy load (an idle machine needs ~10 s)


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "designer", "train", *map(str, args)],
                          capture_output=True, text=True, timeout=LAUNCH_TIMEOUT_S, **kw)


def records(run, kind="train") -> list[dict]:
    lines = (run / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == kind]


@pytest.mark.timeout(900)  # four launches: ~35 s idle, 7 min seen beside 3 copies of it
def test_two_processes_train_as_one_with_twice_the_batch_and_resume_on_one(tmp_path):
    """Two ranks of 4 streams each learn exactly what one process of 8 streams learns (DDP
    averages the gradients; the carried states stay with their streams); only rank 0 logs;
    the run resumes on one process, and then on two again."""
    project = tiny_project(tmp_path, batching="stream", dropout=0.0,
                           training={"eval_interval": 3, "log_interval": 1})
    run = tmp_path / "RUN"

    two = cli(project.path, "--nproc", "2", "--device", "cpu", "--steps", "6", "--seed", "1",
              "--out", run)
    assert two.returncode == 0, two.stderr
    assert "on 2 x CPU" in two.stdout and "4 x 12 per process (8 x 12 in all)" in two.stdout
    steps = records(run)
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5, 6]  # one record a step, not two
    assert {r["world_size"] for r in steps} == {2}
    assert [r["step"] for r in records(run, "val")] == [3, 6]
    assert C.load(run).meta["world_size"] == 2

    one = tmp_path / "one"  # one process (this one), the same global batch
    one.mkdir()
    one_project = tiny_project(one, batching="stream", dropout=0.0,
                               training={"eval_interval": 3, "log_interval": 1})
    one_project.graph.set_param("data", "batch_size", 8)
    list(train(one_project, RunOptions(out=one / "RUN", device="cpu", steps=6, seed=1)))
    assert len(records(one / "RUN")) == len(steps)
    for a, b in zip(steps, records(one / "RUN")):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    for a, b in zip(records(run, "val"), records(one / "RUN", "val")):
        assert a["val_loss"] == pytest.approx(b["val_loss"], rel=1e-5)

    again = cli(project.path, "--nproc", "2", "--device", "cpu", "--steps", "6", "--out", run)
    assert again.returncode == 2  # said by the launcher before any worker starts
    assert again.stderr.count("rnn-designer:") == 1 and "already holds a run" in again.stderr

    on_one = cli(project.path, "--device", "cpu", "--steps", "8", "--resume", run, "--quiet")
    assert on_one.returncode == 0, on_one.stderr
    assert "streams are cut anew for 1 process" in on_one.stdout
    assert [(r["step"], r["world_size"]) for r in records(run)][-3:] == [(6, 2), (7, 1), (8, 1)]

    on_two = cli(project.path, "--nproc", "2", "--device", "cpu", "--steps", "10", "--resume",
                 run, "--quiet")
    assert on_two.returncode == 0, on_two.stderr
    assert [(r["step"], r["world_size"]) for r in records(run)][-2:] == [(9, 2), (10, 2)]
    assert C.load(run).step == 10


def test_a_worker_that_dies_stops_the_others_and_keeps_the_last_checkpoint(tmp_path):
    project = tiny_project(tmp_path, training={"checkpoint_interval": 2, "eval_interval": 1000,
                                               "sample_interval": 0})
    run = tmp_path / "RUN"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "designer", "train", str(project.path), "--nproc", "2",
         "--device", "cpu", "--steps", "100000", "--out", str(run), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while not (run / "last.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (run / "last.json").exists(), launcher.stderr.read() if launcher.poll() else ""
        rank0, rank1 = _worker(launcher.pid, rank=0), _worker(launcher.pid, rank=1)
        os.kill(rank1, signal.SIGKILL)
        _, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("rnn-designer: rank 1 of 2 was killed (SIGKILL); the other "
                               "process was stopped, and the last checkpoint, step ")
    assert f"is intact in {run}" in lines[0]
    assert not psutil.pid_exists(rank0)  # nobody is left behind
    ck = C.load(run)
    assert ck.step >= 2 and ck.step % 2 == 0
    assert not (run / "error.log").exists()  # rank 0 only lost its peer: nothing to report


@need_data("tinyshakespeare.txt")
def test_a_net_too_large_for_the_processes_stops_every_one_and_rank_0_says_so(tmp_path):
    """Each rank checks its own memory before anything is built; the refusal is shared, so
    the launcher tells it once, as a one-process run would."""
    d = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    for layer in d["graph"]["layers"]:
        if layer["type"] == "LSTM":
            layer["params"]["num_output"] = 200_000
    big = tmp_path / "big.json"
    big.write_text(json.dumps(d))
    out = cli(big, "--nproc", "2", "--device", "cpu", "--steps", "1", "--out", tmp_path / "run")
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("rnn-designer: training this net on 2 processes needs about ")
    assert "rank 1" not in out.stderr  # both failed alike: rank 0 speaks
    assert not (tmp_path / "run").exists()


def _worker(launcher: int, rank: int) -> int:
    for child in psutil.Process(launcher).children():
        if child.environ().get("RANK") == str(rank):
            return child.pid
    raise AssertionError(f"no worker of rank {rank}")
