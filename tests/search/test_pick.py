"""The trial a search keeps: the best, unless the design as drawn is within one standard
error of it (the one-standard-error rule over the best trial's fold scores)."""
import math

import pytest

from designer.search.analysis import TrialRow, best_row
from designer.search.pick import Scored, ensemble, pick, standard_error, too_few


def test_the_standard_error_of_the_fold_scores():
    assert standard_error([0.4, 0.6, 0.8]) == pytest.approx(0.2 / math.sqrt(3))
    assert standard_error([0.5]) == 0.0 and standard_error([]) == 0.0


def test_the_drawn_design_is_kept_within_one_standard_error_of_the_best():
    drawn = Scored(0, 0.5937, (0.5, 0.6, 0.68), drawn=True)
    best = Scored(46, 0.5754, (0.40, 0.58, 0.75))       # its standard error is about 0.10
    far = Scored(46, 0.30, (0.29, 0.30, 0.31))          # better beyond its noise
    chosen, why = pick([drawn, best, Scored(7, 0.69, (0.6, 0.7, 0.77))])
    assert chosen is drawn
    assert why.startswith("the design as drawn (trial 0, 0.5937) is kept: it is within one "
                          "standard error (0.1) of the best, trial 46 (0.5754), over 3 folds")
    assert pick([drawn, far]) == (far, "")
    assert pick([drawn, best], "maximize") == (drawn, "")  # higher is better: drawn is best
    assert pick([Scored(0, 0.7, (), True), Scored(1, 0.6, ())]) == (Scored(1, 0.6, ()), "")
    assert pick([best]) == (best, "")  # no design as drawn among the complete trials
    assert pick([]) == (None, "")


def test_the_experiments_view_marks_the_trial_the_search_keeps():
    rows = [TrialRow(0, "COMPLETE", values={"val_loss": 0.5937}, folds=(0.5, 0.6, 0.68),
                     drawn=True),
            TrialRow(46, "COMPLETE", values={"val_loss": 0.5754}, folds=(0.4, 0.58, 0.75)),
            TrialRow(47, "PRUNED", values={})]
    assert best_row(rows, "val_loss").number == 0
    rows[1] = TrialRow(46, "COMPLETE", values={"val_loss": 0.3}, folds=(0.29, 0.3, 0.31))
    assert best_row(rows, "val_loss").number == 46



def test_an_ensemble_of_designs_is_the_kept_one_then_the_next_best_with_other_values():
    def d(**kw):
        return tuple(sorted(kw.items()))

    drawn = Scored(0, 0.59, (0.5, 0.6, 0.68), True, d(lr=1e-3, units=8))
    best = Scored(46, 0.57, (0.4, 0.58, 0.75), design=d(lr=2e-3, units=16))
    again = Scored(50, 0.575, design=d(lr=2e-3, units=16))   # trial 46's values drawn again
    third = Scored(7, 0.60, design=d(lr=5e-3, units=32))
    broken = Scored(8, float("nan"), design=d(lr=1e-1, units=8))
    trials = [drawn, best, again, third, broken]
    kept, _ = pick(trials)
    assert kept is drawn  # the one-standard-error rule keeps the drawn design first ...
    assert ensemble(trials, kept, 3) == [drawn, best, third]  # ... then the best, no repeat
    assert ensemble(trials, kept, 1) == [drawn]
    assert ensemble(trials, kept, 10) == [drawn, best, third]  # fewer designs than asked
    assert ensemble(trials, best, 2, "maximize") == [best, third]  # higher is better


def test_with_too_few_sequences_of_a_class_to_validate_on_the_drawn_design_is_kept():
    """A lead over fewer than 4 sequences of a class is a sequence or two: no design beats
    the one drawn there, whatever its folds say (two folds of two can agree by chance)."""
    drawn = Scored(0, 0.69, (0.68, 0.70), drawn=True, fewest=2)
    best = Scored(17, 0.21, (0.20, 0.22), fewest=2)  # far beyond its fold scores' noise
    chosen, why = pick([drawn, best])
    assert chosen is drawn
    assert why == ("the design as drawn (trial 0) is kept: a class has 2 sequences to "
                   "validate on, too few to tell designs apart (trial 17 scored 0.21 "
                   "against 0.69)")
    one = Scored(17, 0.21, fewest=1)  # no folds: a validation split of one a class
    assert pick([drawn, one])[0] is drawn and "has 1 sequence to validate" in pick([drawn, one])[1]
    enough = Scored(17, 0.21, (0.20, 0.22), fewest=4)
    assert pick([drawn, enough]) == (enough, "")
    assert pick([drawn, Scored(17, 0.21)]) == (Scored(17, 0.21), "")  # unknown: as before
    rows = [TrialRow(0, "COMPLETE", values={"val_loss": 0.69}, drawn=True, fewest=2),
            TrialRow(17, "COMPLETE", values={"val_loss": 0.21}, fewest=2)]
    assert best_row(rows, "val_loss").number == 0  # the Experiments view keeps it too


def test_a_new_study_runs_its_trials_unless_a_class_is_too_few_to_compare():
    assert too_few(None, 50) == "" and too_few(4, 50) == "" and too_few(24, 50) == ""
    assert too_few(3, 1) == ""  # one trial asked: nothing to cut
    note = too_few(3, 50)
    assert note.startswith("a class has 3 sequences to validate on, too few") and \
        "trains the design as drawn (trial 0) alone, not 50 trials" in note
    assert too_few(1, 2).startswith("a class has 1 sequence to validate on")
