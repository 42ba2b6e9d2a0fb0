"""Tiny projects to search, and the search command run the way a user runs it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import optuna

from designer.graph import project as P
from designer.search.study import quiet_optuna
from tests.conftest import DATA, ROOT

CO2 = DATA / "co2_weekly.csv"
GUNPOINT = DATA / "ucr" / "GunPoint_TRAIN.ts"
SPACE = {"solver.base_lr": {"float": [1e-4, 1e-2], "log": True},
         "lstm1.num_output": {"int": [2, 8]},
         "lstm1.type": {"choice": ["LSTM", "GRU"]}}


def tiny_forecaster(folder: Path, steps: int = 6, space: dict | None = None,
                    name: str = "co2", eval_interval: int = 3) -> Path:
    """``init``'s forecaster on the weekly CO2 readings, made tiny (windows of 8, an LSTM of
    4, a few steps, two validation batches), with ``space`` as its search section."""
    from designer.training.new_from_data.init import init_project
    path, _ = init_project(CO2, out=Path(folder) / f"{name}.json")
    project = P.load(path)
    project.graph.set_param("data", "seq_len", 8)
    project.graph.set_param("lstm1", "num_output", 4)
    project.solver["max_steps"] = steps
    project.training.update(eval_interval=eval_interval, eval_batches=2, log_interval=3,
                            checkpoint_interval=max(steps, 6))
    project.search = dict(SPACE if space is None else space)
    project.save()
    return path


def tiny_classifier(folder: Path) -> P.Project:
    """``init``'s LSTM-FCN on GunPoint (not trained: for designs)."""
    from designer.training.new_from_data.init import init_project
    path, _ = init_project(GUNPOINT, out=Path(folder) / "gunpoint.json", net="lstm-fcn")
    return P.load(path)


def search(*args, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """``python -m designer search ARGS`` to its end."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "designer", "search", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
                          **kw)


def start(*args, **kw) -> subprocess.Popen:
    """``python -m designer search ARGS`` started, its output piped."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "designer", "search", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT, **kw)


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def storage_of(project: Path) -> str:
    return f"sqlite:///{Path(project).resolve().parent / 'runs' / (Path(project).stem + '.search.db')}"


def load(project: Path, study: str | None = None, storage: str | None = None) -> optuna.Study:
    quiet_optuna()
    return optuna.load_study(study_name=study or Path(project).stem,
                             storage=storage or storage_of(project))


class KillsItsWorker(optuna.pruners.BasePruner):
    """A pruner that never prunes but ends its own worker process (SIGKILL, as the system
    ends a process out of memory) when it is asked about one of the trials ``numbers``: a
    worker dying in the middle of a trial, on cue (the design as drawn is never asked)."""

    def __init__(self, numbers):
        self.numbers = set(numbers)

    def prune(self, study, trial) -> bool:
        if trial.number in self.numbers:
            os.kill(os.getpid(), signal.SIGKILL)
        return False
