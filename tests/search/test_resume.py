"""A search interrupted (Ctrl-C to the command) or hurt (a worker killed) loses no trial and
runs none twice: the trial that was running is failed, queued again with the same values and
run once more; the study's total stays what was asked."""
import os
import signal
import time
from pathlib import Path

from optuna.trial import TrialState
from sqlalchemy.exc import DBAPIError

from designer.search.study import INTERRUPTED, counted, retried
from tests.conftest import need_data
from tests.search.helpers import (KillsItsWorker, lines, load, search, start,
                                  tiny_forecaster)

pytestmark = need_data("co2_weekly.csv")
STEPS = 1200  # long enough to be caught in the middle


def running(project: Path, timeout: float = 120.0):
    """The first trial seen training (its run folder has metrics), once there is one."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if (project.parent / "runs" / "co2.search.db").exists():
            try:
                for t in load(project).get_trials(states=(TrialState.RUNNING,)):
                    run = t.user_attrs.get("run_dir")
                    if run and (Path(run) / "metrics.jsonl").exists():
                        return t
            except (KeyError, DBAPIError):  # the command is still making the study
                pass
        time.sleep(0.2)
    raise AssertionError("no trial started training")


def no_trial_lost_or_run_twice(project: Path, total: int) -> list:
    study = load(project)
    trials = study.get_trials()
    gone = retried(trials)
    assert counted(study) == (total, 0)
    kept = [t for t in trials if t.number not in gone]
    assert len(kept) == total and {t.state for t in kept} == {TrialState.COMPLETE}
    values = [tuple(sorted(t.params.items())) for t in kept]
    assert len(set(values)) == total  # no values ran twice
    for n in gone:  # each failed trial ran again once, with the same values
        again = [t for t in trials if t.system_attrs.get("failed_trial") == n]
        assert len(again) == 1 and again[0].params == trials[n].params
    return [trials[n] for n in sorted(gone)]


def test_ctrl_c_then_the_same_command_resumes_the_study(tmp_path):
    project = tiny_forecaster(tmp_path, steps=STEPS, eval_interval=500)
    args = (project, "--trials", 3, "--device", "cpu", "--workers", 2, "--pruner", "none",
            "--json")
    first = start(*args)
    try:
        caught = running(project)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, err
    assert "interrupted; run the same command again" in err
    stopped = [e for e in lines(out) if e["kind"] == "trial" and e["state"] == "FAIL"]
    assert caught.number in {e["number"] for e in stopped}
    assert all(e["reason"] == INTERRUPTED for e in stopped)
    again = search(*args)
    assert again.returncode == 0, again.stderr
    failed = no_trial_lost_or_run_twice(project, 3)
    assert caught.number in {t.number for t in failed}
    assert all(t.user_attrs["reason"] == INTERRUPTED for t in failed)
    assert all(p.is_dir() for p in (tmp_path / "runs" / "co2").iterdir())


def test_a_killed_worker_s_trial_runs_again_in_a_new_worker(tmp_path):
    project = tiny_forecaster(tmp_path, steps=STEPS, eval_interval=500)
    command = start(project, "--trials", 2, "--device", "cpu", "--pruner", "none", "--json")
    try:
        caught = running(project)
        os.kill(caught.user_attrs["pid"], signal.SIGKILL)
        out, err = command.communicate(timeout=240)
    finally:
        if command.poll() is None:
            command.kill()
    assert command.returncode == 0, err
    said = lines(out)
    assert any("another takes its place" in e.get("message", "") for e in said)
    events = [e for e in said if e["kind"] == "trial"]
    killed = [e for e in events if e["number"] == caught.number]
    assert killed[0]["state"] == "FAIL" and "SIGKILL" in killed[0]["reason"]
    retry = [e for e in events if e["retry_of"] == caught.number]
    assert retry[0]["state"] == "COMPLETE" and retry[0]["params"] == killed[0]["params"]
    assert [t.number for t in no_trial_lost_or_run_twice(project, 2)] == [caught.number]


def killing(project: Path, trials: int, numbers) -> tuple:
    """``search PROJECT --trials N`` on one CPU worker, in this process, each of the trials
    ``numbers`` ending its worker with SIGKILL; returns the exit code and the JSON events."""
    from designer.cli import parse
    from designer.search.command import search as run_search
    args = parse(["search", str(project), "--trials", str(trials), "--device", "cpu",
                  "--json"])
    args.pruner = KillsItsWorker(numbers)
    return run_search(args)


def test_a_worker_killed_twice_in_a_row_leaves_no_asked_for_trial_unrun(tmp_path, capsys):
    project = tiny_forecaster(tmp_path, steps=9)
    # trial 1 ends its worker, and its retry, trial 2, ends the worker that took its place
    assert killing(project, 3, {1, 2}) == 0
    said = lines(capsys.readouterr().out)
    assert sum("another takes its place" in e.get("message", "") for e in said) == 2
    study = load(project)
    assert counted(study) == (3, 0)  # the three trials asked for ran
    states = {t.number: t.state for t in study.get_trials()}
    assert states == {0: TrialState.COMPLETE, 1: TrialState.FAIL, 2: TrialState.FAIL,
                      3: TrialState.COMPLETE}
    assert "SIGKILL" in study.trials[2].user_attrs["reason"]


def test_workers_that_keep_dying_end_the_search_saying_how_to_go_on(tmp_path, capsys):
    project = tiny_forecaster(tmp_path, steps=9)
    code = killing(project, 5, range(1, 100))  # every trial ends its worker
    out, err = capsys.readouterr()
    assert code == 1
    said = [line for line in err.splitlines() if line.startswith("rnn-designer:")]
    assert len(said) == 1, err
    assert "in a row" in said[0] and "SIGKILL" in said[0]
    assert f"rnn-designer search {project} --trials 5" in said[0]
    count, waiting = counted(load(project))
    assert waiting == 1 and count < 5 + waiting  # the study goes on from here
