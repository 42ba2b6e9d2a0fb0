"""A study: where it is stored, how it samples and prunes, what it optimises, and what it has
done. Optuna does the work (TPE, the median and successive-halving pruners, RDB and journal
storages, heartbeats and the retry of a trial whose worker died); this module picks and joins
those parts.

Storage: an Optuna RDB URL (``sqlite:///...``, ``postgresql://...``), the path of an SQLite
database (opened as ``sqlite:///``, `where.storage_url`), or the path of a journal file
(`optuna.storages.JournalStorage` on `JournalFileBackend`) that several machines share.
An RDB study keeps a heartbeat for every running trial; a trial whose worker stopped beating
is failed and queued again once with the same values (`RetryHeartbeatStaleTrialCallback`).
On one machine a dead worker's trials are found at once by its process id (`reap`).

A study's total (``--trials N``) counts every trial that ran, runs or waits to run, except a
failed one that was queued again: that one counts once, through its retry.
"""
from __future__ import annotations

import hashlib
import json
import random
import socket
import time
import warnings
from pathlib import Path
from typing import Callable

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.storages import RetryHeartbeatStaleTrialCallback
from optuna.trial import FrozenTrial, TrialState

from designer.search import where
from designer.search.where import OBJECTIVES, damage, is_url, storage_url

# objective -> the direction Optuna optimises it in
NEEDS_ACCURACY = ("val_accuracy", "test_accuracy")
PRUNERS = ("median", "halving", "none")
HEARTBEAT_S = 10   # a running trial's heartbeat (RDB storages) ...
GRACE_S = 60       # ... and how long without one before it is failed and queued again
TRIES = 5          # attempts at opening an RDB storage that others are setting up
INTERRUPTED = "interrupted before it finished; it runs again when the search resumes"
COUNTED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.RUNNING,
           TrialState.WAITING)


class SearchError(Exception):
    """A search that cannot start; ``str()`` is one sentence; ``code`` the exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def quiet_optuna() -> None:
    """Our lines say what finished and why a trial failed; Optuna's own log of it (and its
    experimental warnings) stay out."""
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", category=FutureWarning, module="optuna")


# ----------------------------------------------------------------------------- objectives --
def parse_objectives(text: str) -> tuple[str, ...]:
    """``val_loss`` or ``val_loss,params``: one or two known metrics, each once."""
    names = tuple(n.strip() for n in str(text).split(",") if n.strip())
    if not names:
        raise SearchError("--objective needs a metric: " + ", ".join(OBJECTIVES))
    for name in names:
        if name not in OBJECTIVES:
            raise SearchError(f"--objective: '{name}' is not a metric here; choose among "
                              + ", ".join(OBJECTIVES))
    if len(names) > 2:
        raise SearchError("--objective takes one metric or two (a Pareto front), not "
                          f"{len(names)}")
    if len(set(names)) != len(names):
        raise SearchError(f"--objective names {names[0]} twice")
    return names


def directions(objectives) -> list[str]:
    return [OBJECTIVES[o] for o in objectives]


# -------------------------------------------------------------------------------- storage --
def default_storage(project_path: str | Path) -> str:
    """`where.default_storage`, its ``runs`` folder made (a new database is written there)."""
    storage = where.default_storage(project_path)
    where.storage_file(storage).parent.mkdir(parents=True, exist_ok=True)
    return storage


def storage_label(storage: str) -> str:
    """The storage as it can be shown: a URL's password hidden."""
    if not is_url(storage):
        return storage
    from sqlalchemy.engine import make_url
    try:
        return make_url(storage).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: show it as it came
        return storage


def open_storage(storage: str):
    """An Optuna storage for a URL or an SQLite database's path (RDB, with heartbeats and one
    retry of a trial whose worker died), or a journal file's path."""
    quiet_optuna()
    storage = storage_url(storage)
    if not is_url(storage):
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend
        Path(storage).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        return JournalStorage(JournalFileBackend(str(Path(storage).expanduser())))
    from optuna.storages import RDBStorage
    from sqlalchemy.exc import DBAPIError
    engine = {"connect_args": {"timeout": 60}} if storage.startswith("sqlite") else \
        {"pool_pre_ping": True}
    for attempt in range(TRIES):
        try:
            return RDBStorage(storage, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_S,
                              grace_period=GRACE_S, heartbeat_stale_trial_callback=(
                                  RetryHeartbeatStaleTrialCallback(1)))
        except DBAPIError:  # machines making the tables of a new database at the same moment
            if attempt == TRIES - 1:
                raise
            time.sleep(random.uniform(0.2, 1.0))


def make_sampler(seed: int | None, salt: tuple, trials: int) -> optuna.samplers.BaseSampler:
    """TPE, seeded from ``seed`` and ``salt`` (the worker, the machine and how far the study
    had come), so that workers and resumed searches never draw the same values in turn."""
    if seed is not None:
        digest = hashlib.sha256(json.dumps([seed, *salt]).encode()).digest()
        seed = int.from_bytes(digest[:4], "little")
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(2, min(10, trials // 4)))


def make_pruner(pruner, objectives, steps: int = 1000) -> optuna.pruners.BasePruner:
    """``median`` (the default; not in a trial's first fifth: trials report per mille of
    their own schedule, so ``steps`` is 1000), ``halving``
    (successive halving), ``none``, or a pruner object; a study of two objectives never
    prunes (Optuna prunes one objective only)."""
    if len(objectives) > 1 or pruner in (None, "none"):
        return optuna.pruners.NopPruner()
    if isinstance(pruner, optuna.pruners.BasePruner):
        return pruner
    if pruner == "halving":
        return optuna.pruners.SuccessiveHalvingPruner()
    if pruner == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=steps // 5)
    raise SearchError(f"--pruner: '{pruner}' is not a pruner here; choose among "
                      + ", ".join(PRUNERS))


# ---------------------------------------------------------------------------------- study --
def open_study(storage: str, name: str, objectives, space: dict, create: bool = True,
               sampler=None, pruner=None, folds: int | None = None) -> optuna.Study:
    """The study ``name`` in ``storage`` (made when ``create``), checked to search the same
    objectives and space as asked (and, given ``folds``, to score trials over as many
    folds); raises `SearchError` in one sentence."""
    where = storage_label(storage)
    try:
        backend = open_storage(storage)
        if create:
            study = optuna.create_study(storage=backend, study_name=name,
                                        directions=directions(objectives),
                                        load_if_exists=True, sampler=sampler, pruner=pruner)
        else:
            study = optuna.load_study(study_name=name, storage=backend, sampler=sampler,
                                      pruner=pruner)
    except (ImportError, ModuleNotFoundError) as e:
        raise SearchError(f"the storage {where} needs a database driver that is not "
                          f"installed ({e})") from None
    except KeyError:
        raise SearchError(f"there is no study '{name}' in {where}") from None
    except Exception as e:  # noqa: BLE001 - SQLAlchemy, the journal file, a bad URL
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SearchError(damage(storage) or f"the storage {where} cannot be opened "
                          f"({text})") from None
    had = study.user_attrs
    if had.get("objectives") not in (None, list(objectives)):
        raise SearchError(f"the study '{name}' in {where} optimises "
                          f"{','.join(had['objectives'])}, not {','.join(objectives)}; give "
                          "another --study (or the same --objective)")
    if had.get("space") not in (None, space):
        raise SearchError(f"the study '{name}' in {where} searched another space; give "
                          "another --study (or the space it had)")
    if folds is not None and had.get("folds", 1 if had else folds) != folds:
        raise SearchError(f"the study '{name}' in {where} scored its trials "
                          f"{_over(had.get('folds', 1))}, not {_over(folds)}; give another "
                          f"--study (or --folds {had.get('folds', 1)})")
    if create and not had:
        study.set_user_attr("objectives", list(objectives))
        study.set_user_attr("space", space)
        if folds is not None:
            study.set_user_attr("folds", folds)
        study.set_metric_names(list(objectives))
    return study


def _over(folds: int) -> str:
    return "on the project's validation split" if folds < 2 else f"over {folds} folds"


def retried(trials) -> set[int]:
    """The numbers of failed trials that were queued again (their retry counts instead)."""
    return {n for t in trials for n in t.system_attrs.get("retry_history", ())}


def counted(study: optuna.Study) -> tuple[int, int]:
    """``(trials the study's total counts, trials waiting to run)``."""
    trials = study.get_trials(deepcopy=False)
    gone = retried(trials)
    count = sum(1 for t in trials if t.state in COUNTED and t.number not in gone)
    return count, sum(1 for t in trials if t.state == TrialState.WAITING)


def finished(study: optuna.Study) -> list[FrozenTrial]:
    """Every finished trial, a failed one that was queued again left out."""
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED,
                                                      TrialState.FAIL))
    gone = retried(study.get_trials(deepcopy=False))
    return [t for t in trials if t.number not in gone]


def best_trials(study: optuna.Study) -> list[FrozenTrial]:
    """The best trial (one objective), or the Pareto front best first in the first
    objective; empty while no trial has completed."""
    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        return []
    if len(study.directions) == 1:
        return [study.best_trial]
    sign = 1 if study.directions[0] == optuna.study.StudyDirection.MINIMIZE else -1
    return sorted(study.best_trials, key=lambda t: (sign * t.values[0], t.number))


# ------------------------------------------------------------------------ dead workers --
def owner() -> dict:
    """What marks a trial as this process's: the machine, the process and its start time."""
    import os

    import psutil
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "pid_started": round(psutil.Process().create_time(), 2)}


def owner_gone(trial: FrozenTrial) -> bool:
    """True when ``trial`` belongs to a process of this machine that no longer runs."""
    import psutil
    attrs = trial.user_attrs
    if attrs.get("host") != socket.gethostname() or not isinstance(attrs.get("pid"), int):
        return False
    try:
        started = round(psutil.Process(attrs["pid"]).create_time(), 2)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return True
    return started != attrs.get("pid_started")


def reap(study: optuna.Study, dead: Callable[[FrozenTrial], bool], why: str,
         max_retry: int | None = 1) -> list[FrozenTrial]:
    """Fail every running trial ``dead`` picks, saying ``why``, and queue it again with the
    same values (``max_retry`` times at most along one trial's line); returns them failed."""
    storage, out = study._storage, []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if not dead(t):
            continue
        try:
            storage.set_trial_user_attr(t._trial_id, "reason", why)
            if not storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL):
                continue
        except UpdateFinishedTrialError:
            continue  # another process finished or failed it first
        out.append(requeue(study, t._trial_id, max_retry))
    return out


def requeue(study: optuna.Study, trial_id: int, max_retry: int | None = 1) -> FrozenTrial:
    """Queue a failed trial again with the same values (Optuna's retry of a stale trial),
    unless its line was retried ``max_retry`` times already; returns the failed trial."""
    failed = study._storage.get_trial(trial_id)
    RetryHeartbeatStaleTrialCallback(max_retry)(study, failed)
    return failed


def retry_number(study: optuna.Study, number: int) -> int | None:
    """The number of the trial that retries trial ``number``, if one was queued."""
    for t in study.get_trials(deepcopy=False):
        if t.system_attrs.get("retry_history", [None])[-1] == number:
            return t.number
    return None
