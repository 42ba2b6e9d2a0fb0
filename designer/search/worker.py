"""A worker: one long-lived process (started with the spawn context) that loads the study from
its storage and runs trial after trial on one device through ``study.optimize``, until the
study's total is reached, the time is up or it is asked to stop. Never one interpreter start
per trial: torch, the data and the CUDA context are set up once.

The workers of one command share a lock, the claim: a worker takes it before it decides to
start a trial and gives it back once the trial exists in the storage, so together they start
exactly as many trials as the total leaves. Workers of other machines that join the study
are held back by the count alone (they may start a trial or two over it at the same moment).

Ctrl-C or SIGTERM stops the running trial after its current step; the trial fails as
interrupted and is queued again with the same values, to run when the search resumes.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from optuna.study import MaxTrialsCallback

from designer.search.folds import Folds
from designer.search.study import (counted, make_pruner, make_sampler, open_study, quiet_optuna,
                                   requeue)
from designer.search.where import damage

CLAIM_WAIT_S = 120.0  # a worker that holds the claim longer than this is taken to be stuck


@dataclass
class Plan:
    """What every worker of a search is given (plain, picklable data)."""

    project_json: str
    project_path: str
    space: dict
    storage: str
    study: str
    objectives: tuple
    trials: int
    runs: str
    pruner: object = "median"          # a name, or an Optuna pruner object
    steps: int | None = None
    seed: int | None = None
    deadline: float | None = None      # time.time() after which no trial starts
    threads: int = 1                   # torch threads per worker
    salt: tuple = field(default_factory=tuple)
    folds: Folds = Folds()             # cross-validation: the runs each trial trains
    table_limit: int | None = None     # the largest data table read (--max-table-gb)


class Claim:
    """The right to start the next trial: a lock shared by the workers of one command, and
    the process id of the worker holding it (so that the runner can take it back from a
    worker that died holding it)."""

    def __init__(self, lock=None, holder=None):
        self.lock, self.holder, self.held = lock, holder, False

    def acquire(self) -> None:
        if self.lock is not None and not self.held:
            self.held = self.lock.acquire(timeout=CLAIM_WAIT_S)
            if self.held and self.holder is not None:
                self.holder.value = os.getpid()

    def release(self) -> None:
        if self.held:
            self.held = False
            if self.holder is not None:
                self.holder.value = 0
            self.lock.release()


class Budget(MaxTrialsCallback):
    """Optuna's MaxTrialsCallback counting the way the study's total does (`counted`): after
    each trial it stops the worker when the total is reached (with no retry left waiting),
    when the time is up or when the worker is stopping; otherwise it keeps the claim for the
    worker's next trial."""

    def __init__(self, n_trials: int, claim: Claim, deadline: float | None, stopping):
        super().__init__(n_trials, states=None)
        self.claim, self.deadline, self.stopping = claim, deadline, stopping

    def room(self, study) -> bool:
        if self.stopping() or (self.deadline is not None and time.time() >= self.deadline):
            return False
        count, waiting = counted(study)
        return waiting > 0 or count < self._n_trials

    def __call__(self, study, trial) -> None:
        self.claim.acquire()
        if not self.room(study):
            self.claim.release()
            study.stop()


def trial_event(t, reason: str | None = None) -> dict:
    """A finished trial as the ``--json`` line says it."""
    attrs = t.user_attrs
    return {"kind": "trial", "number": t.number, "state": t.state.name,
            "params": dict(t.params), "values": None if t.values is None else list(t.values),
            "run_dir": attrs.get("run_dir"), "device": attrs.get("device"),
            "seconds": attrs.get("seconds"), "ms_per_step": attrs.get("ms_per_step"),
            "steps": attrs.get("steps"), "max_steps": attrs.get("max_steps"),
            "reason": reason or attrs.get("reason"),
            "retry_of": t.system_attrs.get("failed_trial")}


def work(plan: Plan, slot: int, device: str, claim: tuple, events) -> None:
    """A worker process's whole life (the target of ``multiprocessing.Process``); ``claim``
    is the shared lock and holder of `Claim`, ``events`` the queue it reports on."""
    state = {"objective": None, "stopping": False}

    def on_signal(signum, frame):
        state["stopping"] = True
        if state["objective"] is not None:
            state["objective"].interrupt()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    _watch_parent(lambda: on_signal(None, None))
    from designer.cells import load
    load()  # a spawned process starts with no cell registered
    from designer.training.data.csv_reader import size_limit_of
    try:
        with size_limit_of(plan.table_limit):
            _work(plan, slot, device, Claim(*claim), events, state)
    except Exception as e:  # noqa: BLE001 - the command says it in one sentence
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        text = damage(plan.storage) or text  # the study's file went bad under it
        events.put({"kind": "error", "message": f"the worker on {device} stopped: {text}"})
        sys.exit(1)


def _watch_parent(stop) -> None:
    """Stop like on Ctrl-C when the command that started this worker is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        stop()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _work(plan: Plan, slot: int, device: str, claim: Claim, events, state) -> None:
    quiet_optuna()
    import torch

    from designer.graph import project as P

    from designer.search.space import parse_space
    from designer.search.trial import PROGRESS, Interrupted, Objective, TrialFailed, TrialSetup
    torch.set_num_threads(max(1, plan.threads))
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    project = P.loads(plan.project_json, file=plan.project_path,
                      project_dir=Path(plan.project_path).parent)
    project.path = Path(plan.project_path)
    space = parse_space(plan.space, project).trained_for(plan.steps)
    study = open_study(plan.storage, plan.study, plan.objectives, plan.space, create=False,
                       pruner=make_pruner(plan.pruner, plan.objectives, PROGRESS))
    started = len(study.get_trials(deepcopy=False))
    study.sampler = make_sampler(plan.seed, (*plan.salt, slot, started), plan.trials)
    objective = Objective(TrialSetup(project, space, tuple(plan.objectives), Path(plan.runs),
                                     plan.study, device, plan.steps, plan.seed,
                                     plan.folds), claim)
    state["objective"] = objective
    if state["stopping"]:
        objective.interrupt()
    budget = Budget(plan.trials, claim, plan.deadline, lambda: objective.interrupted)

    def announce(study, trial) -> None:
        events.put(trial_event(trial))

    claim.acquire()
    try:
        if not budget.room(study):
            return
        study.optimize(objective, callbacks=[announce, budget], catch=(TrialFailed,))
    except Interrupted:  # Optuna failed the trial: queue it again, however often it was
        events.put(trial_event(requeue(study, objective.trial_id, max_retry=None)))
    finally:
        claim.release()
