"""The Experiments view's data, without Qt: a real Optuna study in a real SQLite file read into
rows, and the shapes the history, parallel coordinates and Pareto charts draw
(`designer.search.analysis`)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from designer.search import analysis as A
from designer.search import charts as C
from tests.ui.experiments_fakes import make_study, search_project


@pytest.fixture
def project(tmp_path):
    return search_project(tmp_path)


def test_a_study_is_read_into_rows_with_what_each_trial_left(project):
    study = make_study(project, 12)
    reading = A.read_study(A.default_storage(project), A.default_study(project))
    assert reading.facts.objectives == ["val_loss"] and reading.facts.directions == ["minimize"]
    assert [r.number for r in reading.rows] == list(range(12))
    states = {r.number: r.state for r in reading.rows}
    assert states[3] == states[8] == "PRUNED" and states[5] == "FAIL"
    failed = reading.rows[5]
    assert failed.reason == "lstm1 ran out of memory on cpu" and not failed.values
    done = reading.rows[0]
    assert done.values["val_loss"] == study.trials[0].value
    assert done.params == study.trials[0].params
    assert done.run_dir == str(project.parent / "runs" / "tiny" / "trial-0")
    assert done.device == "cpu" and done.ms_per_step > 0 and done.seconds > 0
    assert reading.front == [study.best_trial.number]
    # the space as the trials' distributions say it: log ranges, choices in their order
    assert reading.axes["lstm1.num_output"].log and reading.axes["lstm1.num_output"].kind == "int"
    assert reading.axes["embed.num_output"].choices == (8, 16, 32)
    # Optuna's importances, largest first, shares of one
    imp = reading.importances
    assert set(imp) == set(reading.axes)
    assert list(imp.values()) == sorted(imp.values(), reverse=True)
    assert math.isclose(sum(imp.values()), 1.0, rel_tol=1e-6) and not reading.importance_reason


def test_too_few_trials_give_a_reason_instead_of_importances(project):
    make_study(project, 3, fail=(), prune=())
    reading = A.read_study(A.default_storage(project), "tiny")
    assert reading.importances == {}
    assert reading.importance_reason == ("Importances need at least 5 complete trials "
                                         "(3 so far).")


def test_a_missing_study_is_one_sentence(project):
    with pytest.raises(A.StudyError, match="there is no search study here yet"):
        A.read_study(A.default_storage(project), "tiny")
    assert not A.storage_file(A.default_storage(project)).exists()  # reading made nothing
    make_study(project, 1)
    with pytest.raises(A.StudyError, match="no search study named 'other'"):
        A.read_study(A.default_storage(project), "other")


def test_history_is_each_complete_value_and_the_best_so_far():
    rows = [A.TrialRow(0, "COMPLETE", values={"val_loss": 3.0}),
            A.TrialRow(1, "PRUNED"),
            A.TrialRow(2, "COMPLETE", values={"val_loss": 2.0}),
            A.TrialRow(3, "COMPLETE", values={"val_loss": 2.5}),
            A.TrialRow(4, "FAIL", reason="out of memory")]
    h = C.history(rows, "val_loss", "minimize")
    assert h.numbers.tolist() == [0, 2, 3] and h.values.tolist() == [3.0, 2.0, 2.5]
    assert h.best.tolist() == [3.0, 2.0, 2.0]
    assert C.history(rows, "val_loss", "maximize").best.tolist() == [3.0, 3.0, 3.0]
    assert A.best_row(rows, "val_loss").number == 2


def test_parallel_coordinates_put_every_trial_on_normalised_axes():
    axes = A.axes_of_search({"lstm1.num_output": {"int": [8, 128], "log": True},
                             "solver.type": {"choice": ["Adam", "SGD", "AdamW"]},
                             "solver.base_lr": {"float": [0.0, 0.1]}})
    rows = [A.TrialRow(0, "COMPLETE", {"lstm1.num_output": 8, "solver.type": "Adam",
                                       "solver.base_lr": 0.05}, {"val_loss": 2.0}),
            A.TrialRow(1, "COMPLETE", {"lstm1.num_output": 32, "solver.type": "SGD",
                                       "solver.base_lr": 0.1}, {"val_loss": 1.0}),
            A.TrialRow(2, "COMPLETE", {"lstm1.num_output": 128, "solver.type": "AdamW",
                                       "solver.base_lr": 0.0}, {"val_loss": 4.0}),
            A.TrialRow(3, "PRUNED", {"lstm1.num_output": 64})]
    p = C.parallel_coordinates(rows, axes, "val_loss", "minimize")
    assert p.labels == ["lstm1.num_output", "solver.type", "solver.base_lr", "val_loss \u2193"]
    assert p.lines.shape == (3, 4) and p.numbers == [0, 1, 2]
    assert np.allclose(p.lines[:, 0], [0.0, 0.5, 1.0])        # 8, 32, 128 in log scale
    assert np.allclose(p.lines[:, 1], [0.0, 0.5, 1.0])        # the choices at their places
    assert np.allclose(p.lines[:, 2], [0.5, 1.0, 0.0])
    assert np.allclose(p.lines[:, 3], [1 / 3, 0.0, 1.0])      # the objective, min to max
    assert np.allclose(p.quality, [2 / 3, 1.0, 0.0])          # the best is 1
    assert p.ticks[1] == [(0.0, "Adam"), (0.5, "SGD"), (1.0, "AdamW")]
    assert p.ticks[0] == [(0.0, "8"), (1.0, "128")] and p.ticks[3] == [(0.0, "1"), (1.0, "4")]


def test_the_pareto_front_of_two_objectives_is_optunas(project):
    study = make_study(project, 24, ("val_loss", "ms_per_step"), fail=(), prune=())
    reading = A.read_study(A.default_storage(project), "tiny")
    assert reading.facts.objectives == ["val_loss", "ms_per_step"]
    assert sorted(reading.front) == sorted(t.number for t in study.best_trials)
    p = C.pareto(reading.rows, reading.facts.objectives, reading.front)
    complete = [r for r in reading.rows if r.state == "COMPLETE"]
    assert len(p.x) == len(complete) and p.on_front.sum() == len(study.best_trials)
    for x, y, on in zip(p.x, p.y, p.on_front):  # nothing beats a point of the front on both
        beaten = any(a <= x and b <= y and (a, b) != (x, y) for a, b in zip(p.x, p.y))
        assert on == (not beaten)
    # importances toward one of the two objectives (the step time follows the units)
    imp, why = A.importances(study, "ms_per_step")
    assert imp and not why and max(imp, key=imp.get) == "lstm1.num_output"


def test_json_lines_become_rows_and_facts():
    facts = A.facts_from_event({"kind": "study", "study": "tiny", "storage": "sqlite:///x.db",
                                "trials": 8, "objectives": ["val_loss", "params"],
                                "directions": ["minimize", "minimize"]})
    assert facts.trials == 8 and facts.direction("params") == "minimize"
    row = A.row_from_event({"kind": "trial", "number": 4, "state": "COMPLETE",
                            "params": {"lstm1.num_output": 64}, "values": [1.5, 20000.0],
                            "run_dir": "/r/trial-4", "device": "cuda:1", "seconds": 12.5,
                            "ms_per_step": 3.25, "reason": None, "retry_of": None},
                           facts.objectives)
    assert row.values == {"val_loss": 1.5, "params": 20000.0} and row.device == "cuda:1"
    assert row.reason == "" and row.seconds == 12.5
    pruned = A.row_from_event({"kind": "trial", "number": 5, "state": "PRUNED", "params": {},
                               "values": None, "reason": "pruned at step 200"}, ["val_loss"])
    assert pruned.values == {} and pruned.reason == "pruned at step 200"
    merged = row.merged(A.TrialRow(4, "COMPLETE", reason="kept"))
    assert merged.run_dir == "/r/trial-4" and merged.reason == "kept"


def test_a_study_in_a_journal_file_is_read_as_search_writes_it(tmp_path):
    """Machines sharing a disk keep their study in a journal file (`--storage FILE`): the
    view reads it from the file's path, and a path with no file yet is one sentence."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    journal = tmp_path / "shared" / "study.log"
    journal.parent.mkdir()
    study = optuna.create_study(study_name="jv", storage=JournalStorage(
        JournalFileBackend(str(journal))))
    study.optimize(lambda t: (t.suggest_int("lstm1.num_output", 8, 64) - 40) ** 2, n_trials=4)
    reading = A.read_study(str(journal), "jv")
    assert [r.number for r in reading.rows] == [0, 1, 2, 3]
    assert reading.rows[study.best_trial.number].params == study.best_trial.params
    with pytest.raises(A.StudyError, match="there is no search study here yet"):
        A.read_study(str(tmp_path / "nowhere.log"), "jv")


def test_the_status_line_says_when_the_design_as_drawn_was_kept():
    from designer.search.analysis import StudyFacts, TrialRow, best_row
    from designer.ui.experiments.table import summary
    facts = StudyFacts("s", "sqlite:///x.db", ["val_loss"], ["minimize"])
    rows = [TrialRow(0, "COMPLETE", values={"val_loss": 0.5937}, folds=(0.5, 0.6, 0.68),
                     drawn=True),
            TrialRow(46, "COMPLETE", values={"val_loss": 0.5754}, folds=(0.4, 0.58, 0.75))]
    kept = best_row(rows, "val_loss")
    assert summary(rows, facts, "val_loss", kept) == (
        "2 trials, 2 complete, kept the design as drawn, val_loss 0.5937 (trial 0), within "
        "one standard error of trial 46's 0.5754.")
    rows[1] = TrialRow(46, "COMPLETE", values={"val_loss": 0.3}, folds=(0.29, 0.3, 0.31))
    assert summary(rows, facts, "val_loss", best_row(rows, "val_loss")) == \
        "2 trials, 2 complete, best val_loss 0.3 (trial 46)."
