"""A search study's rows shaped for the Experiments view's charts, without Qt: an objective's
history trial by trial with the best so far, parallel coordinates (every finished trial on axes
normalised to [0, 1], one per searched parameter, log ranges in log space, choices at their
places, and the objective), and two objectives' Pareto front."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from designer.search.analysis import Axis, _complete, fmt

if TYPE_CHECKING:
    import numpy as np


@dataclass
class History:
    numbers: np.ndarray
    values: np.ndarray
    best: np.ndarray      # the best value up to and including each trial


def history(rows: list, objective: str, direction: str = "minimize") -> History:
    """The complete trials' values of ``objective`` in trial order, and the best so far."""
    import numpy as np  # not on the way to the window's first paint
    done = _complete(rows, objective)
    numbers = np.array([r.number for r in done], dtype=float)
    values = np.array([r.values[objective] for r in done], dtype=float)
    pick = np.fmin.accumulate if direction == "minimize" else np.fmax.accumulate
    return History(numbers, values, pick(values) if len(values) else values.copy())


@dataclass
class Parallel:
    labels: list          # one per axis: the parameters, then the objective
    ticks: list           # per axis: [(position in [0, 1], text)]
    lines: np.ndarray     # (trials, axes) in [0, 1]; NaN where a trial lacks a parameter
    quality: np.ndarray   # (trials,) 1 for the best objective value, 0 for the worst
    numbers: list


def parallel_coordinates(rows: list, axes: dict, objective: str,
                         direction: str = "minimize") -> Parallel:
    """Every complete trial over one normalised axis per parameter and the objective."""
    import numpy as np
    done = _complete(rows, objective)
    names = list(axes) or sorted({k for r in done for k in r.params})
    lines = np.full((len(done), len(names) + 1), np.nan)
    ticks = []
    for j, name in enumerate(names):
        axis = axes.get(name) or _axis_from_values(name, [r.params.get(name) for r in done])
        for i, r in enumerate(done):
            if name in r.params:
                lines[i, j] = _place(axis, r.params[name])
        ticks.append(_ticks(axis))
    values = np.array([r.values[objective] for r in done], dtype=float)
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    lines[:, -1] = (values - lo) / (hi - lo) if hi > lo else 0.5
    quality = lines[:, -1] if direction == "maximize" else 1.0 - lines[:, -1]
    arrow = "\u2191" if direction == "maximize" else "\u2193"
    ticks.append([(0.0, fmt(lo)), (1.0, fmt(hi))])
    return Parallel(names + [f"{objective} {arrow}"], ticks, lines, np.asarray(quality),
                    [r.number for r in done])


@dataclass
class Pareto:
    x: np.ndarray
    y: np.ndarray
    numbers: list
    on_front: np.ndarray  # bool per point


def pareto(rows: list, objectives: list, front: list) -> Pareto:
    """The complete trials on the first two objectives; ``front`` (``study.best_trials``'
    numbers) marked."""
    import numpy as np
    a, b = objectives[:2]
    done = _complete(rows, a, b)
    keep = set(front)
    return Pareto(np.array([r.values[a] for r in done], dtype=float),
                  np.array([r.values[b] for r in done], dtype=float),
                  [r.number for r in done], np.array([r.number in keep for r in done],
                                                     dtype=bool))


# ---------------------------------------------------------------------------------- parts --
def _place(axis: Axis, value) -> float:
    if axis.kind == "choice":
        n = len(axis.choices)
        return math.nan if value not in axis.choices else \
            axis.choices.index(value) / (n - 1) if n > 1 else 0.5
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.nan
    lo, hi = float(axis.low), float(axis.high)
    if axis.log and lo > 0 and v > 0:
        lo, hi, v = math.log(lo), math.log(hi), math.log(v)
    return (v - lo) / (hi - lo) if hi > lo else 0.5


def _ticks(axis: Axis) -> list:
    if axis.kind == "choice":
        n = len(axis.choices)
        return [(i / (n - 1) if n > 1 else 0.5, str(c)) for i, c in enumerate(axis.choices)]
    return [(0.0, fmt(axis.low)), (1.0, fmt(axis.high))]


def _axis_from_values(name: str, values: list) -> Axis:
    known = [v for v in values if v is not None]
    if known and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in known):
        kind = "int" if all(isinstance(v, int) for v in known) else "float"
        return Axis(name, kind, min(known), max(known))
    return Axis(name, "choice", choices=tuple(dict.fromkeys(known)))
