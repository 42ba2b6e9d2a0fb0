"""Which trial a search ends with: the best by its objective, unless the design as drawn
(the study's first trial) is within one standard error of it, or a class has too few
sequences to validate on for any lead to count.

With small data, cross-validation scores are noisy, and of fifty designs the one that scores
best is often best by luck (the winner's curse): on ArrowHead (36 training sequences), a
design that scored 3% better than the one drawn over three folds tested 12 points worse.
The one-standard-error rule (Breiman et al., 1984; glmnet's ``lambda.1se``) guards against
that: a design counts as better than the reference only when its lead is larger than the
standard error of its own fold scores. The reference here is the design the user drew (or
``init`` wrote), so a search changes it only for a design that is better beyond the noise.

Where a class has fewer than ``FEWEST_TO_COMPARE`` sequences to validate on (over all folds;
a set of 2 a class, or a validation split of one a class), the fold scores say nothing of the
noise (two folds of two sequences can agree by chance) and a lead is a sequence or two: the
design as drawn is kept. Measured on UCR/UEA sets cut to 2 a class, the searches that moved
away from `init`'s design there lost 1.8 points on average, up to 9 (RESULTS.md). Knowing
that before the first trial, a new single-objective study trains the design as drawn alone
(`too_few`): the other trials could not change the pick.

Plain data only: the command (from Optuna's trials) and the Experiments view (from its rows)
pick the same way.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from designer.graph.layers.sequences import FEWEST_TO_COMPARE


@dataclass(frozen=True)
class Scored:
    """One complete trial: its number, objective value, the value of each fold (empty
    without folds) and whether it is the design as drawn."""

    number: int
    value: float
    folds: tuple = ()
    drawn: bool = False
    design: tuple = ()  # the trial's values, ``sorted(params.items())``: equal designs match
    fewest: int | None = None  # the fewest sequences of a class it validated on (None: unknown)


def too_few(fewest: int | None, trials: int) -> str:
    """Why a new study of ``trials`` trials trains the design as drawn alone, where a class
    has ``fewest`` sequences to validate on (``""``: it runs them all)."""
    if fewest is None or fewest >= FEWEST_TO_COMPARE or trials < 2:
        return ""
    return (f"a class has {fewest} sequence{'s' * (fewest != 1)} to validate on, too few to "
            f"tell designs apart (fewer than {FEWEST_TO_COMPARE}): the search trains the "
            f"design as drawn (trial 0) alone, not {trials} trials, and a search with more "
            "labelled sequences compares designs")


def standard_error(folds) -> float:
    """The standard error of the mean of ``folds`` (0 with fewer than two)."""
    folds = [float(v) for v in folds if v is not None and math.isfinite(float(v))]
    if len(folds) < 2:
        return 0.0
    return statistics.stdev(folds) / math.sqrt(len(folds))


def pick(trials: list[Scored], direction: str = "minimize") -> tuple[Scored | None, str]:
    """``(the trial to keep, why)``: the best (the earliest of equals), or the design as
    drawn when its value is within one standard error of the best's (``why`` says so;
    otherwise it is empty)."""
    done = [t for t in trials if t.value is not None and math.isfinite(t.value)]
    if not done:
        return None, ""
    sign = 1.0 if direction == "minimize" else -1.0
    best = min(done, key=lambda t: (sign * t.value, t.number))
    drawn = [t for t in done if t.drawn]
    if best.drawn or not drawn:
        return best, ""
    own = drawn[0]
    if best.fewest is not None and best.fewest < FEWEST_TO_COMPARE:
        return own, (f"the design as drawn (trial {own.number}) is kept: a class has "
                     f"{best.fewest} sequence{'s' * (best.fewest != 1)} to validate on, too "
                     f"few to tell designs apart (trial {best.number} scored "
                     f"{best.value:.4g} against {own.value:.4g})")
    if len(best.folds) < 2:
        return best, ""
    se = standard_error(best.folds)
    if sign * (own.value - best.value) <= se:
        return own, (f"the design as drawn (trial {own.number}, {own.value:.4g}) is kept: "
                     f"it is within one standard error ({se:.2g}) of the best, trial "
                     f"{best.number} ({best.value:.4g}), over {len(best.folds)} folds")
    return best, ""


def ensemble(trials: list[Scored], kept: Scored, count: int,
             direction: str = "minimize") -> list[Scored]:
    """The ``count`` designs of an ensemble: ``kept`` (what `pick` chose) first, then the
    best of the other complete trials (the earliest of equals), a design whose values repeat
    one already taken left out (a sampler may draw the same values twice). Fewer when fewer
    designs completed."""
    sign = 1.0 if direction == "minimize" else -1.0
    done = sorted((t for t in trials if t.value is not None and math.isfinite(t.value)
                   and t.number != kept.number), key=lambda t: (sign * t.value, t.number))
    out, seen = [kept], {kept.design}
    for t in done:
        if len(out) >= count:
            break
        if t.design in seen:
            continue
        out.append(t)
        seen.add(t.design)
    return out
