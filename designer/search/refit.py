"""The study's pick, trained again: when trials were scored by cross-validation (`folds`),
each of the best trial's runs saw only part of the training sequences, so the best design is
trained once more on the project's own split (``val_fraction`` validating, the trial's seed
and steps) into ``<runs>/best-trial-N``. That run folder is the search's result: the one
``evaluate``, ``export`` and the window open. For a small set of labelled sequences (the
training setting ``refit``, `designer.training.run.final`) that training then trains its final
model on every training sequence, for the steps its validation chose (`trains_final`): so a
search retrains its pick even without cross-validation.

``--refit-seeds K`` (`refit_seeds`) trains it K times, with the seeds S, S+1, ... (S: the
search's ``--seed``, else the project's), into ``best-trial-N`` and ``best-trial-N-seed-2``
... ``best-trial-N-seed-K``: a seed ensemble for ``rnn-designer evaluate``, whose score moves
less from seed to seed than one run's on small data. Without cross-validation the best trial's
own run (trained on the project's split with seed S) is the first of the K.

``--refit-top D`` (`ensemble_trials`) does the same for the D best designs: the one kept
into ``best-trial-N``, each next best trial's into ``ensemble-trial-M`` (with its seeds,
``ensemble-trial-M-seed-2`` ...): an ensemble of designs for ``evaluate``.

Run again (the search resumed after it finished, or stopped during the retraining), a
finished retraining is kept as it is and an unfinished one goes on from its last checkpoint.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from designer.graph.atomic import atomic_write_text
from designer.graph.project import Project

from designer.search.design import apply
from designer.search.space import Space
from designer.search.study import SearchError


def trains_final(project: Project) -> bool:
    """Whether a run of ``project`` trains a final model on every training sequence (its
    retrained pick then does too, where no trial did)."""
    from designer.training.data import DataError, open_source
    from designer.training.run.final import wanted

    from designer.search.folds import FOLDED, data_folder
    graph = project.graph
    data = [n for n in graph.sources() if graph.layer(n).type == FOLDED]
    if not data:
        return False
    try:
        source = open_source(graph.layer(data[0]), data_folder(project), seed=0)
    except (DataError, OSError):
        return False
    return wanted(project.training_settings()["refit"], source)


def refit_folder(runs: str | Path, number: int, member: int = 1, kept: bool = True) -> Path:
    """Where a trial's design is trained again: ``best-trial-N`` for the design the search
    keeps, ``ensemble-trial-N`` for another design of an ensemble (``kept`` False), and for
    the ``member``-th seed (from 2) ``...-seed-M``."""
    name = f"{'best' if kept else 'ensemble'}-trial-{number}" + \
        (f"-seed-{member}" if member > 1 else "")
    return Path(runs) / name


ENDS = ("finished", "early_stop")  # how a retraining that ran to its end ends
MARK = "refit.json"  # written into the folder when the retraining ran to its end


def finished(run_dir: Path) -> bool:
    """Whether the retraining in ``run_dir`` ran to its end."""
    try:
        return json.loads((Path(run_dir) / MARK).read_text(encoding="utf-8"))["done"]
    except (OSError, ValueError, KeyError, TypeError):
        return False


def refit_seeds(project: Project, space: Space, best: dict, study: str, runs: str | Path,
                device: str, steps: int | None, seed: int | None, count: int = 1,
                token=None, show: Callable[[dict], None] = lambda e: None,
                first: str | Path | None = None, kept: bool = True) -> list[Path]:
    """`refit` ``count`` times with the seeds ``seed``, ``seed`` + 1, ... (``seed`` None: the
    project's own); ``first``: a run folder that stands for the first seed as it is (the best
    trial's own run, when it trained on the project's split). Returns the folders; stops
    early, with those done so far, when ``token`` is stopped; a failed retraining raises
    `SearchError` with ``done``: the folders before it."""
    base = seed if seed is not None else \
        apply(project, space, best["params"]).training_settings()["seed"]
    folders = []
    for member in range(1, count + 1):
        if member == 1 and first is not None:
            folders.append(Path(first))
            continue
        try:
            folders.append(refit(project, space, best, study, runs, device, steps,
                                 seed if member == 1 else base + member - 1, token, show,
                                 member=member, kept=kept))
        except SearchError as e:
            e.done = folders  # the retrainings that ran to their end before this one
            raise
        if token is not None and token.stopped:
            break
    return folders


def refit(project: Project, space: Space, best: dict, study: str, runs: str | Path,
          device: str, steps: int | None, seed: int | None, token=None,
          show: Callable[[dict], None] = lambda e: None, member: int = 1,
          kept: bool = True) -> Path:
    """Train the trial ``best``'s design on the project's own split into `refit_folder`
    (for the ``member``-th seed of an ensemble; ``kept`` False: another design of an
    ensemble); returns the folder, or raises `SearchError` in one sentence when the run
    fails."""
    from designer.training.run.checkpoint import has_checkpoint
    from designer.training.run.loop import RunOptions, train

    from designer.search.trial import FORESEEN
    from designer.search.validation import data_layers_searched, whole_validation
    run_dir = refit_folder(runs, best["number"], member, kept)
    if finished(run_dir):
        return run_dir
    resume = has_checkpoint(run_dir)
    how = f" with seed {seed} (run {member} of the ensemble)" if member > 1 else ""
    chosen = whole_validation(apply(project, space, best["params"]),
                              data_layers_searched(project, space))
    then = ", then on every training sequence" if trains_final(chosen) else ""
    show({"kind": "refit", "number": best["number"], "run_dir": str(run_dir),
          "resume": resume, **({"seed": seed, "member": member} if member > 1 else {}),
          "message": f"training trial {best['number']}'s design again{how} on the "
          f"project's own split{then} into {run_dir}"})
    opts = RunOptions(out=run_dir, resume=resume, device=device, steps=steps, seed=seed,
                      probe_steps=0, extra_meta={"search": {
                          "study": study, "trial": best["number"],
                          "params": dict(best["params"]), "refit": True,
                          **({"seed_member": member} if member > 1 else {})}})
    error, done = None, None
    try:
        for rec in train(chosen, opts, token):
            if rec["kind"] == "error":
                error = rec.get("message") or "the run stopped on an error"
            elif rec["kind"] == "done" and rec.get("reason") in ENDS:
                done = rec
    except FORESEEN as e:
        error = str(e)
    if error is not None:
        raise SearchError(f"training trial {best['number']}'s design again{how} failed: "
                          f"{error}", code=1)
    if done is not None:
        atomic_write_text(run_dir / MARK, json.dumps(
            {"done": True, "study": study, "trial": best["number"], "step": done["step"],
             "best_val_loss": done.get("best_val_loss"),
             **({"seed": seed, "member": member} if member > 1 else {})}, indent=1) + "\n")
    return run_dir
