"""What a search ends with: its best trial (or Pareto front) in plain data, and ``--best-out``:
the best trial's values applied to the project, written as a project of its own."""
from __future__ import annotations

import os
from pathlib import Path

from designer.graph.project import Project

from designer.search.design import apply
from designer.search.pick import Scored, ensemble, pick
from designer.search.space import Space
from designer.search.study import SearchError, best_trials, finished


def summary(study) -> dict:
    """The ``best`` event: the best trial (``number``, ``values``, ``params``, ``run_dir``;
    ``None`` while none completed), the Pareto front (one objective: the best alone) and how
    the finished trials ended."""
    front = [_plain(t) for t in best_trials(study)]
    ends = [t.state.name for t in finished(study)]
    best = front[0] if front else {"number": None, "values": None, "params": None,
                                   "run_dir": None}
    note = ""
    if len(study.directions) == 1 and front:
        kept, note = kept_trial(study)
        if kept is not None:
            best = _plain(kept)
    return {"kind": "best", "study": study.study_name, **best, "pareto": front,
            "note": note, "complete": ends.count("COMPLETE"), "pruned": ends.count("PRUNED"),
            "failed": ends.count("FAIL")}


def _plain(t) -> dict:
    return {"number": t.number, "values": list(t.values), "params": dict(t.params),
            "run_dir": t.user_attrs.get("run_dir")}


def _scored(study) -> tuple[dict, list[Scored]]:
    """The complete trials by number, and each as `pick` scores it."""
    from optuna.trial import TrialState
    objective = (study.user_attrs.get("objectives") or ["value"])[0]
    trials = {t.number: t for t in study.get_trials(deepcopy=False,
                                                     states=(TrialState.COMPLETE,))}
    scored = [Scored(n, t.values[0], tuple(t.user_attrs.get(f"{objective}_folds") or ()),
                     bool(t.user_attrs.get("drawn")), tuple(sorted(t.params.items())),
                     t.user_attrs.get("fewest_validating"))
              for n, t in trials.items()]
    return trials, scored


def kept_trial(study):
    """``(trial, why)``: the complete trial a one-objective search keeps (`pick.pick`)."""
    trials, scored = _scored(study)
    chosen, why = pick(scored, study.directions[0].name.lower())
    return (None, "") if chosen is None else (trials[chosen.number], why)


def ensemble_trials(study, count: int) -> list[dict]:
    """The ``count`` designs ``--refit-top`` trains again, as `summary` gives a trial: the
    one the search keeps first, then the next best complete trials with other values
    (`pick.ensemble`); empty while none completed."""
    trials, scored = _scored(study)
    direction = study.directions[0].name.lower()
    chosen, _ = pick(scored, direction)
    if chosen is None:
        return []
    return [_plain(trials[t.number]) for t in ensemble(scored, chosen, count, direction)]


def check_best_out(path: str | os.PathLike, project: Project) -> Path:
    """Refuse to write the best trial over the project searched (or into a folder)."""
    out = Path(path).expanduser()
    if project.path is not None and out.resolve() == Path(project.path).resolve():
        raise SearchError(f"--best-out {out} is the project being searched; give another "
                          "file (the project is left as it is)")
    if out.is_dir():
        raise SearchError(f"--best-out {out} is a folder; give a project file's name")
    return out


def write_best(project: Project, space: Space, best: dict, study: str,
               path: str | os.PathLike, steps: int | None = None) -> Path:
    """The project with the best trial's values (and ``steps``, where the search trained every
    trial that long, as its ``max_steps``), saved atomically at ``path``; its data paths still
    find the data from the new folder."""
    out = check_best_out(path, project)
    chosen = apply(project, space, best["params"])
    if steps:
        chosen.solver["max_steps"] = int(steps)
    relocate(chosen, Path(project.path).resolve().parent, out.resolve().parent)
    values = ", ".join(f"{v:.4g}" for v in best["values"])
    chosen.description = (chosen.description + " " if chosen.description else "") + \
        f"Trial {best['number']} of search '{study}' ({values})."
    out.parent.mkdir(parents=True, exist_ok=True)
    chosen.save(out)
    return out


def relocate(project: Project, old: Path, new: Path) -> None:
    """Rewrite the data layers' relative paths, read from ``old``, for a project in ``new``:
    relative where the data is below ``new``, else absolute. A name found in the data folder
    (not a path beside the project) is left as it is."""
    from designer.training.data import FILE_PARAMS
    if old == new:
        return
    graph = project.graph
    for layer in graph.layers():
        key = FILE_PARAMS.get(layer.type)
        value = layer.get(key) if key else None
        if not isinstance(value, str) or not value or os.path.isabs(value):
            continue
        where = (old / value).resolve()
        if not where.exists():
            continue
        moved = os.path.relpath(where, new) if where.is_relative_to(new) else str(where)
        graph.set_param(layer.name, key, moved)
    graph.project_dir = new
