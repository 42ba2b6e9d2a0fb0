"""A search study read into plain rows and shaped for the Experiments view, without Qt.

A study is what ``rnn-designer search`` leaves in its Optuna storage (by default
``sqlite:///<project dir>/runs/<stem>.search.db``, the study named after the project's stem);
while it runs it prints one JSON line per event. Both become :class:`TrialRow`s, plain data:

- :func:`read_study`: a study's facts, trials as rows, space (the trials' distributions),
  Pareto front (``study.best_trials``) and importances (Optuna's), or why there are none;
- :func:`best_row` is the trial the search keeps;
- :mod:`designer.search.charts` shapes the rows for the view's charts (an objective's history,
  parallel coordinates, the Pareto front).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from designer.search.pick import Scored, pick
from designer.search.where import OBJECTIVES as DIRECTIONS  # the view asks it here
from designer.search.where import (damage, default_storage, default_study, is_url,  # noqa: F401
                    storage_file, storage_url)

FINISHED = ("COMPLETE", "PRUNED", "FAIL")
PER_FOLD = 1000  # a trial reports its validations at fold x 1000 + per mille of the fold
MIN_FOR_IMPORTANCE = 5   # complete trials before the importances mean something


class StudyError(Exception):
    """A study that cannot be read; ``str()`` is one sentence for the user."""


@dataclass
class TrialRow:
    """One trial as the table shows it (``values``: objective -> value, complete trials)."""
    number: int
    state: str
    params: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    run_dir: str | None = None
    device: str | None = None
    seconds: float | None = None
    ms_per_step: float | None = None
    reason: str = ""
    folds: tuple = ()      # the first objective's value on each fold (cross-validation)
    drawn: bool = False    # the design as drawn (the study's first trial)
    steps: int | None = None       # the steps trained (where its run ended)
    max_steps: int | None = None   # the steps it was to train (what Use Best keeps)
    progress: float | None = None  # a running trial: the share of its training done
    fewest: int | None = None      # the fewest sequences of a class it validated on

    def merged(self, newer: TrialRow) -> TrialRow:
        """This row with what ``newer`` knows on top (what it leaves empty is kept)."""
        return replace(self, **{k: v for k, v in vars(newer).items() if v not in (None, "", {})})


@dataclass
class StudyFacts:
    """What a search optimises: its study, storage, objectives and their directions."""
    study: str
    storage: str
    objectives: list
    directions: list
    trials: int | None = None

    def direction(self, objective: str) -> str:
        if objective in self.objectives:
            return self.directions[self.objectives.index(objective)]
        return DIRECTIONS.get(objective, "minimize")


@dataclass
class Axis:
    """One searched parameter: ``kind`` is int, float or choice."""
    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple = ()


@dataclass
class StudyReading:
    """Everything :func:`read_study` found (plain data, safe to hand to another thread)."""
    facts: StudyFacts
    rows: list
    axes: dict
    front: list                      # the numbers of the Pareto-optimal (or best) trials
    importances: dict | None         # parameter -> share, largest first; empty: see reason;
    #                                  None: not computed (a quick look at the trials)
    importance_reason: str = ""


# ------------------------------------------------------------------------------ locations --
def has_study(project_path: str | Path) -> bool:
    """True when the project's default search storage exists."""
    f = storage_file(default_storage(project_path))
    return f is not None and f.is_file()


# -------------------------------------------------------------------------- the JSON lines --
def facts_from_event(event: dict) -> StudyFacts:
    """The ``{"kind": "study", ...}`` line the search prints first."""
    objectives = list(event.get("objectives") or ["value"])
    directions = list(event.get("directions") or
                      [DIRECTIONS.get(o, "minimize") for o in objectives])
    return StudyFacts(str(event.get("study", "")), str(event.get("storage", "")), objectives,
                      [str(d).lower() for d in directions], event.get("trials"))


def row_from_event(event: dict, objectives: list) -> TrialRow:
    """A ``{"kind": "trial", ...}`` line; ``values`` may be a list (in the objectives'
    order) or a dict."""
    values = event.get("values") or {}
    if isinstance(values, (list, tuple)):
        values = dict(zip(objectives, values))
    return TrialRow(int(event["number"]), str(event.get("state", "COMPLETE")).upper(),
                    dict(event.get("params") or {}),
                    {k: float(v) for k, v in values.items() if _float(v) is not None},
                    event.get("run_dir"), event.get("device"), _float(event.get("seconds")),
                    _float(event.get("ms_per_step")), str(event.get("reason") or ""),
                    steps=_int(event.get("steps")), max_steps=_int(event.get("max_steps")))


# ------------------------------------------------------------------------------- the study --
def open_storage(storage: str):
    """An Optuna storage for ``storage``; a ``sqlite:///`` file must exist (reading never
    makes an empty database). Raises :class:`StudyError`."""
    import optuna
    storage = storage_url(storage)
    f = storage_file(storage) if is_url(storage) else Path(storage)
    if f is not None and not f.is_file():
        raise StudyError(f"{f}: there is no search study here yet")
    try:
        if not is_url(storage):  # a journal file on a shared disk, as search writes it
            from optuna.storages.journal import JournalFileBackend
            return optuna.storages.JournalStorage(JournalFileBackend(str(f)))
        return optuna.storages.RDBStorage(storage)
    except Exception as e:  # noqa: BLE001 - a storage that cannot be opened, said in a line
        raise StudyError(damage(storage) or f"{storage}: cannot be opened as a search "
                         f"storage ({e})") from None


def load_study(storage, study: str):
    """The Optuna study ``study`` in ``storage`` (a URL or an opened storage)."""
    import optuna
    if isinstance(storage, str):
        storage = open_storage(storage)
    try:
        return optuna.load_study(study_name=study, storage=storage)
    except KeyError:
        raise StudyError(f"there is no search study named '{study}' in "
                         f"{_url(storage)}") from None


def objectives_of(study) -> list[str]:
    """The study's objective names: its metric names, else its ``objectives`` user
    attribute, else ``value`` (``value 1``, ``value 2``... for several)."""
    names = getattr(study, "metric_names", None) or study.user_attrs.get("objectives")
    n = len(study.directions)
    if names and len(names) == n:
        return [str(x) for x in names]
    return ["value"] if n == 1 else [f"value {i + 1}" for i in range(n)]


def row_of(trial, objectives: list, folds: int = 1) -> TrialRow:
    """A frozen Optuna trial as a row (facts from its user attributes where the search
    left them); a running one with the share of its training done (its last report is at
    fold x 1000 + per mille of the fold's schedule, over ``folds`` folds)."""
    ua = trial.user_attrs
    values = dict(zip(objectives, trial.values)) if trial.values else {}
    seconds = ua.get("seconds")
    if seconds is None and trial.duration is not None:
        seconds = trial.duration.total_seconds()
    reason = ua.get("reason") or trial.system_attrs.get("fail_reason") or ""
    if not reason and trial.state.name == "PRUNED" and trial.last_step is not None:
        reason = f"pruned at step {trial.last_step}"
    return TrialRow(trial.number, trial.state.name, dict(trial.params),
                    {k: float(v) for k, v in values.items() if _float(v) is not None}, ua.get("run_dir"),
                    ua.get("device"), _float(seconds), _float(ua.get("ms_per_step")),
                    str(reason).strip().splitlines()[-1] if reason else "",
                    tuple(ua.get(f"{objectives[0]}_folds") or ()) if len(objectives) == 1
                    else (),
                    bool(ua.get("drawn")), _int(ua.get("steps")), _int(ua.get("max_steps")),
                    _progress(trial, folds), _int(ua.get("fewest_validating")))


def axes_of(study) -> dict[str, Axis]:
    """The searched parameters as the trials' distributions describe them."""
    from optuna.distributions import CategoricalDistribution
    out: dict[str, Axis] = {}
    for t in study.get_trials(deepcopy=False):
        for name, d in t.distributions.items():
            if name in out:
                continue
            if isinstance(d, CategoricalDistribution):
                out[name] = Axis(name, "choice", choices=tuple(d.choices))
            else:
                kind = "int" if type(d).__name__.startswith("Int") else "float"
                out[name] = Axis(name, kind, d.low, d.high, bool(getattr(d, "log", False)))
    return out


def axes_of_search(search: dict) -> dict[str, Axis]:
    """A project's ``search`` section as axes (before any trial has its distributions)."""
    out = {}
    for name, entry in search.items():
        if "choice" in entry:
            out[name] = Axis(name, "choice", choices=tuple(entry["choice"]))
        else:
            kind = "int" if "int" in entry else "float"
            lo, hi = entry[kind]
            out[name] = Axis(name, kind, lo, hi, bool(entry.get("log", False)))
    return out


def read_study(storage, study: str, objective: str | None = None,
               importance: bool = True) -> StudyReading:
    """Read a study into plain data, importances toward ``objective`` (default: the first;
    without ``importance``, none are computed and ``importances`` is ``None``: a quick look
    at the trials training); :class:`StudyError` for a storage or study that is not there."""
    s = load_study(storage, study)
    objectives = objectives_of(s)
    facts = StudyFacts(study, _url(storage), objectives,
                       [d.name.lower() for d in s.directions])
    trials = s.get_trials(deepcopy=False)
    folds = int(s.user_attrs.get("folds") or 1)
    rows = [row_of(t, objectives, folds) for t in trials]
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    front = [t.number for t in s.best_trials] if complete else []
    imp, why = importances(s, objective or objectives[0], len(complete)) if importance \
        else (None, "")
    return StudyReading(facts, rows, axes_of(s), front, imp, why)


def importances(study, objective: str, complete: int | None = None) -> tuple[dict, str]:
    """``(importances, "")`` by Optuna's default evaluator toward ``objective``, or
    ``({}, why)`` when there are too few trials to tell the parameters apart."""
    import optuna
    if complete is None:
        complete = sum(t.state.name == "COMPLETE" for t in study.get_trials(deepcopy=False))
    if complete < MIN_FOR_IMPORTANCE:
        return {}, (f"Importances need at least {MIN_FOR_IMPORTANCE} complete trials "
                    f"({complete} so far).")
    objectives = objectives_of(study)
    target = None
    if len(objectives) > 1:  # toward one objective; the evaluator takes lower as better
        i = objectives.index(objective) if objective in objectives else 0
        sign = -1.0 if study.directions[i].name == "MAXIMIZE" else 1.0
        target = lambda t: sign * t.values[i]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            imp = optuna.importance.get_param_importances(study, target=target)
        except (ValueError, RuntimeError) as e:
            return {}, f"Importances cannot be computed yet ({e})."
    if not imp:
        return {}, "No parameter varies between the complete trials."
    if any("will be equal" in str(w.message) for w in caught):
        return {}, (f"The {complete} complete trials do not tell the parameters apart yet; "
                    "importances come with more trials.")
    return {k: float(v) for k, v in imp.items()}, ""


def best_row(rows: list, objective: str, direction: str = "minimize") -> TrialRow | None:
    """The complete trial with the best ``objective`` (the earliest of equals), or the design
    as drawn within one standard error of it (`pick.pick`, as the search keeps)."""
    done = _complete(rows, objective)
    if not done:
        return None
    by_number = {r.number: r for r in done}
    chosen, _ = pick([Scored(r.number, r.values[objective], r.folds, r.drawn,
                             fewest=r.fewest) for r in done], direction)
    return by_number[chosen.number]


def fmt(value) -> str:
    """A short text for a value in a cell or on an axis."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:,}"
    ok = isinstance(value, float) and math.isfinite(value) and value != 0
    return f"{value:.4g}" if ok else str(value)


# ---------------------------------------------------------------------------------- parts --
def _complete(rows: list, *objectives: str) -> list:
    """The complete trials that have every one of ``objectives``, by number."""
    return sorted((r for r in rows if r.state == "COMPLETE"
                   and all(o in r.values for o in objectives)), key=lambda r: r.number)


def _progress(trial, folds: int) -> float | None:
    """The share of a running trial's training done, from its last report (``None``: not
    running, or nothing reported yet)."""
    if trial.state.name != "RUNNING" or trial.last_step is None:
        return None
    return max(0.0, min(1.0, trial.last_step / (PER_FOLD * max(1, folds))))


def _int(v) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _float(v) -> float | None:
    """``v`` as a finite float, or ``None``."""
    try:
        return float(v) if math.isfinite(float(v)) else None
    except (TypeError, ValueError):
        return None


def _url(storage) -> str:  # a storage's URL, whether given as text or opened
    return storage if isinstance(storage, str) else str(getattr(storage, "url", storage))
