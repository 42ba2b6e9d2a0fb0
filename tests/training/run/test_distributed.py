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
from tests.conftest import need_data, widened_char_rnn
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


def _launch_until_a_checkpoint(tmp_path, *extra):
    """A 2-process CPU run of 100,000 steps, once its first checkpoint is written: the
    launcher and the run folder."""
    project = tiny_project(tmp_path, training={"checkpoint_interval": 2, "eval_interval": 1000,
                                               "sample_interval": 0})
    run = tmp_path / "RUN"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "designer", "train", str(project.path), "--nproc", "2",
         "--device", "cpu", "--steps", "100000", "--out", str(run), "--quiet", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + LAUNCH_TIMEOUT_S
    while not (run / "last.json").exists() and launcher.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    if not (run / "last.json").exists():
        launcher.kill()
        raise AssertionError(f"no checkpoint: {launcher.communicate()[1]}")
    return project, launcher, run


def _ends_in_one_sentence(launcher, within_s: float) -> str:
    """The launcher's one line on stderr, which must come within ``within_s``."""
    try:
        _, err = launcher.communicate(timeout=within_s)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def _continues(project, run, tmp_path):
    """``--resume`` takes the run on from its last checkpoint, here on one process."""
    step = C.load(run).step
    more = cli(project.path, "--device", "cpu", "--steps", step + 2, "--resume", run, "--quiet")
    assert more.returncode == 0, more.stderr
    assert C.load(run).step == step + 2
    assert records(run)[-1]["step"] == step + 2  # the train records go on from there


def test_a_worker_that_dies_stops_the_others_and_keeps_the_last_checkpoint(tmp_path):
    """kill -9 of one rank: within 60 s the launcher has stopped the other and said which
    rank died; the last checkpoint is whole, and --resume continues from it."""
    project, launcher, run = _launch_until_a_checkpoint(tmp_path)
    rank0, rank1 = _worker(launcher.pid, rank=0), _worker(launcher.pid, rank=1)
    os.kill(rank1, signal.SIGKILL)
    line = _ends_in_one_sentence(launcher, within_s=60)
    assert line.startswith("rnn-designer: rank 1 of 2 was killed (SIGKILL); the other "
                           "process was stopped, and the last checkpoint, step ")
    assert f"is intact in {run}" in line and f"(continue with --resume {run})" in line
    assert not psutil.pid_exists(rank0)  # nobody is left behind
    ck = C.load(run)
    assert ck.step >= 2 and ck.step % 2 == 0
    assert not (run / "error.log").exists()  # rank 0 only lost its peer: nothing to report
    _continues(project, run, tmp_path)


def test_ctrl_c_stops_every_rank_after_the_step_saves_and_exits_130(tmp_path):
    """Ctrl-C to the launcher (it passes it on): the ranks agree to stop after the step,
    rank 0 saves and says where the run goes on from, and the command exits 130 as a
    one-process run does."""
    project, launcher, run = _launch_until_a_checkpoint(tmp_path)
    launcher.send_signal(signal.SIGINT)
    try:
        _, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 130, err
    step = C.load(run).step
    assert [line for line in err.splitlines() if line.strip()][-1] == (
        f"rnn-designer: interrupted; the last checkpoint, step {step:,}, is intact in {run} "
        f"(continue with --resume {run})")
    _continues(project, run, tmp_path)


def test_a_worker_that_hangs_ends_the_run_after_the_hang_timeout(tmp_path):
    """A rank stopped by SIGSTOP neither fails nor goes on: its silence ends the run once
    --hang-timeout has passed, with a sentence that says so, and the run resumes."""
    project, launcher, run = _launch_until_a_checkpoint(tmp_path, "--hang-timeout", "15")
    rank0, rank1 = _worker(launcher.pid, rank=0), _worker(launcher.pid, rank=1)
    os.kill(rank1, signal.SIGSTOP)
    stopped_at = time.monotonic()
    try:
        line = _ends_in_one_sentence(launcher, within_s=120)
    finally:
        if psutil.pid_exists(rank1):
            os.kill(rank1, signal.SIGKILL)
    # not before its time: the silence counts from rank 1's last beat, which came up to a
    # beat interval (longer on a busy machine) before the SIGSTOP
    from designer.training.run.launch import BEAT_S
    assert time.monotonic() - stopped_at >= 15 - 2 * BEAT_S
    assert line.startswith("rnn-designer: rank 1 of 2 stopped answering (no sign of life for ")
    assert "the process was stopped or frozen), so it was ended; the other process was " \
        "stopped, and the last checkpoint, step " in line
    assert not psutil.pid_exists(rank0) and not psutil.pid_exists(rank1)
    _continues(project, run, tmp_path)


@need_data("tinyshakespeare.txt")
def test_a_net_too_large_for_the_processes_stops_every_one_and_rank_0_says_so(tmp_path):
    """Each rank checks its own memory before anything is built; the refusal is shared, so
    the launcher tells it once, as a one-process run would."""
    big = widened_char_rnn(tmp_path, 200_000)
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
