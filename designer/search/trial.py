"""One trial: the values Optuna suggests, applied to the project and trained as an ordinary
run folder, ``<project dir>/runs/<study>/trial-<number>`` (so charts, compare, resume, export
and inspect work on it), each validation reported to Optuna and the run stopped when Optuna
prunes it.

What the trial leaves in Optuna's user attributes: ``run_dir``, ``device``, ``device_name``,
``seconds``, ``ms_per_step``, ``params``, ``best_step``, ``steps`` (trained) and ``max_steps``
(the steps it was to train), the metrics it reached
(``val_loss``, ``val_accuracy``, ``test_accuracy``), the worker that ran it (``host``,
``pid``) and, for a failed trial, ``reason``: one sentence (for an error nobody foresaw, the
traceback is in the run folder's ``error.log``).
"""
from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import optuna

from designer.graph.project import Project
from designer.training.commands import unforeseen
from designer.training.data import DataError
from designer.training.run.checkpoint import CheckpointError
from designer.training.run.control import StopToken
from designer.training.run.loop import RunOptions, TrainingError, train
from designer.training.trained.generate import GenerateError

from designer.search.analysis import PER_FOLD
from designer.search.design import DesignError, apply
from designer.search.folds import Folds
from designer.search.space import Space
from designer.search.study import INTERRUPTED, owner
from designer.search.validation import data_layers_searched, whole_validation

# the validation metric reported to the pruner for each objective (none: never pruned)
REPORTED = {"val_loss": "val_loss", "val_accuracy": "val_accuracy",
            "test_accuracy": "val_accuracy"}
FORESEEN = (TrainingError, DataError, DesignError, GenerateError, CheckpointError, ValueError)


class TrialFailed(Exception):
    """The trial failed with a sentence (in its ``reason``); the study goes on."""


class Interrupted(Exception):
    """The worker was asked to stop (Ctrl-C, SIGTERM) while the trial ran."""


@dataclass
class TrialSetup:
    """What every trial of one worker shares."""

    project: Project
    space: Space
    objectives: tuple
    runs: Path                # <project dir>/runs/<study>
    study: str
    device: str               # cpu or cuda:K
    steps: int | None = None  # training steps (default: the project's max_steps)
    seed: int | None = None   # the training seed (default: the project's)
    folds: Folds = Folds()    # cross-validation: the runs each trial trains


class Objective:
    """The objective a worker's ``study.optimize`` calls: trains one trial, returns its
    values. ``interrupt()`` (from a signal handler) stops the run after its current step."""

    def __init__(self, setup: TrialSetup, claim=None):
        self.setup, self.claim = setup, claim
        self.token: StopToken | None = None
        self.interrupted = False
        self.trial_id: int | None = None

    def interrupt(self) -> None:
        self.interrupted = True
        if self.token is not None:
            self.token.stop()

    def __call__(self, trial: optuna.Trial):
        if self.claim is not None:  # the trial exists now: another worker may start one
            self.claim.release()
        self.trial_id = trial._trial_id
        start = time.perf_counter()
        for key, value in {**owner(), "device": self.setup.device, "reason": None,
                           "run_dir": None}.items():
            trial.set_user_attr(key, value)
        run_dir = None
        try:
            if self.interrupted:
                raise Interrupted()
            project = apply(self.setup.project, self.setup.space,
                            self.setup.space.suggest(trial))
            run_dir = free_folder(self.setup.runs / f"trial-{trial.number}")
            trial.set_user_attr("run_dir", str(run_dir))
            return self._train(trial, project, run_dir)
        except Interrupted:
            trial.set_user_attr("reason", INTERRUPTED)
            raise
        except optuna.TrialPruned:
            raise
        except TrialFailed as e:
            trial.set_user_attr("reason", str(e))
            raise
        except FORESEEN as e:
            trial.set_user_attr("reason", str(e))
            raise TrialFailed(str(e)) from None
        except Exception as e:  # noqa: BLE001 - a sentence here, the traceback on disk
            reason = unforeseen(e, None if run_dir is None else str(run_dir))
            trial.set_user_attr("reason", reason)
            raise TrialFailed(reason) from None
        finally:
            self.token = None
            trial.set_user_attr("seconds", round(time.perf_counter() - start, 3))
            _free_memory()

    def _train(self, trial: optuna.Trial, project: Project, run_dir: Path):
        """Train the trial's run, or with folds one run per fold (``trial-N`` validating on
        the first, ``trial-N-fold-K`` on the others), and return its values: with folds,
        each the mean over the folds."""
        setup, folds = self.setup, self.setup.folds
        if folds.fewest is not None:  # what `pick` weighs its lead against
            trial.set_user_attr("fewest_validating", folds.fewest)
        if folds.count < 2:
            return self._values(trial, [self._run(trial, project, run_dir, 0)], [run_dir])
        seen, dirs = [], []
        for fold in range(1, folds.count + 1):
            here = run_dir if fold == 1 else free_folder(
                setup.runs / f"trial-{trial.number}-fold-{fold}")
            dirs.append(here)
            trial.set_user_attr("fold_runs", [str(d) for d in dirs])
            seen.append(self._run(trial, folds.project(project, fold), here, fold - 1))
        return self._values(trial, seen, dirs)

    def _run(self, trial: optuna.Trial, project: Project, run_dir: Path, fold: int) -> "Seen":
        """Train one run; its validations are reported to the pruner at ``fold`` x 1000 +
        the share of its schedule done (per mille). Where the space reshapes the batches,
        the run validates on its whole validation split (:mod:`.validation`)."""
        setup = self.setup
        project = whole_validation(project, data_layers_searched(setup.project, setup.space))
        metric = REPORTED.get(setup.objectives[0]) if len(setup.objectives) == 1 else None
        more = fold + 1 < setup.folds.count  # folds still to train after this one
        self.token = token = StopToken()
        if self.interrupted:
            token.stop()
        meta = {"study": setup.study, "trial": trial.number, "params": dict(trial.params)}
        if setup.folds.count > 1:
            meta["fold"] = [fold + 1, setup.folds.count]
        opts = RunOptions(out=run_dir, device=setup.device, steps=setup.steps, seed=setup.seed,
                          probe_steps=0, extra_meta={"search": meta},
                          refit="off")  # a trial is scored on its validation; the pick's
        #                                 retraining trains the final model (refit)
        seen, pruned_at, pruned_value, last = Seen(), None, math.nan, None
        so_far = None  # the best validation of this run yet
        prunable = not trial.user_attrs.get("drawn")  # the design as drawn runs to its end
        for rec in train(project, opts, token):
            seen.add(rec)
            if rec["kind"] == "start":
                last = rec.get("steps")
                trial.set_user_attr("device_name", rec.get("device_name"))
                trial.set_user_attr("params", rec.get("params"))
            if rec["kind"] == "val" and metric and rec.get(metric) is not None \
                    and pruned_at is None:
                so_far = better(metric, so_far, float(rec[metric]))
                # the best yet (a high learning rate's spike mid-schedule is not held against
                # it), at the share of its own schedule done (per mille): trials that train
                # for different step counts are compared at the same point of their schedules
                trial.report(so_far, fold * PROGRESS + progress(int(rec["step"]), last))
                # at the last step of the last fold there is nothing left to save
                if prunable and (more or rec["step"] != last) and trial.should_prune():
                    pruned_at, pruned_value = int(rec["step"]), so_far
                    token.stop()
        for key, value in seen.attrs().items():
            trial.set_user_attr(key, value)
        if self.interrupted:
            raise Interrupted()
        if seen.error:
            raise TrialFailed(seen.error)
        if pruned_at is not None:
            where = f" of fold {fold + 1}" if setup.folds.count > 1 else ""
            reason = f"pruned at step {pruned_at}{where} ({metric} {pruned_value:.4g})"
            trial.set_user_attr("reason", reason)
            raise optuna.TrialPruned(reason)
        return seen

    def _values(self, trial: optuna.Trial, seen: list, dirs: list[Path]):
        """The objectives' values: each run's, averaged over the folds."""
        values = []
        for name in self.setup.objectives:
            each = [s.value(name, d, self.setup.device) for s, d in zip(seen, dirs)]
            value = each[0] if len(each) == 1 else float(statistics.fmean(each))
            trial.set_user_attr(name, value)
            if len(each) > 1:
                trial.set_user_attr(f"{name}_folds", each)
            values.append(value)
        return values[0] if len(values) == 1 else values


PROGRESS = PER_FOLD  # what a trial reports its validations against: per mille of its steps


def better(metric: str, best: float | None, value: float) -> float:
    """The better of ``best`` (``None``: none yet) and ``value`` for ``metric``."""
    if best is None or math.isnan(best):
        return value
    return max(best, value) if metric == "val_accuracy" else min(best, value)


def progress(step: int, steps: int | None) -> int:
    """``step`` as per mille of a schedule of ``steps`` (the step itself when unknown)."""
    return round(PROGRESS * step / steps) if steps else step


class Seen:
    """What a run's records said that a trial keeps: the best validation, the step times,
    the parameter count, an error."""

    def __init__(self) -> None:
        self.params = None
        self.best: dict | None = None
        self.step_ms: list[float] = []
        self.error: str | None = None
        self.steps = 0             # the steps trained (where the run ended)
        self.schedule: int | None = None  # the steps it was to train (its max_steps)

    def add(self, rec: dict) -> None:
        kind = rec["kind"]
        if kind == "start":
            self.params = rec.get("params")
            self.schedule = rec.get("steps")
        elif kind == "train" and rec.get("ms_per_step") is not None:
            self.step_ms.append(float(rec["ms_per_step"]))
        elif kind == "val" and rec.get("best") and rec.get("val_loss") is not None:
            self.best = rec
        elif kind == "error":
            self.error = rec.get("message") or "the run stopped on an error"
        elif kind == "done":
            self.steps = int(rec.get("step", 0))

    def ms_per_step(self) -> float | None:
        """The median step time, the first record (warm-up, compilation) left out."""
        times = self.step_ms[1:] or self.step_ms
        return round(statistics.median(times), 3) if times else None

    def attrs(self) -> dict:
        best = self.best or {}
        return {"ms_per_step": self.ms_per_step(), "params": self.params, "steps": self.steps,
                "max_steps": self.schedule,
                "best_step": best.get("step"), "val_loss": best.get("val_loss"),
                "val_accuracy": best.get("val_accuracy")}

    def value(self, name: str, run_dir: Path, device: str) -> float:
        """The objective ``name`` of the finished run; raises `TrialFailed` when the run
        gave none."""
        if name == "params":
            return float(self.params)
        if name == "ms_per_step":
            if self.ms_per_step() is None:
                raise TrialFailed("the run logged no training step to time")
            return self.ms_per_step()
        if name == "test_accuracy":
            from designer.training.trained.evaluate import evaluate_run
            report = evaluate_run(run_dir, None, "best", device, peer=False)
            if "accuracy" not in report:
                raise TrialFailed("the run's test split gives no accuracy (it is not a "
                                  "classifier)")
            return float(report["accuracy"])
        if self.best is None:
            raise TrialFailed("the run reached no validation (its data has no validation "
                              "split, or it stopped before the first)")
        if self.best.get(name) is None:
            raise TrialFailed(f"the run's validation gives no {name.removeprefix('val_')}")
        return float(self.best[name])


def free_folder(path: Path) -> Path:
    """``path`` when it holds no run yet, else ``path-2``, ``path-3``... (a study of the same
    name made again finds the old one's folders)."""
    candidate, k = Path(path), 1
    while candidate.exists() and any(candidate.iterdir()):
        k += 1
        candidate = Path(f"{path}-{k}")
    return candidate


def _free_memory() -> None:
    """A worker lives through many trials: let each one's net and batches go."""
    gc.collect()
    try:
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 - freeing memory never fails a trial
        pass
