"""A study on a real SQLite file: its objectives, its checks on a resumed search, how its
total counts a failed trial that was queued again, and the trials of a dead worker."""
import os

import optuna
import pytest
from optuna.trial import TrialState

from designer.search.study import (SearchError, best_trials, counted, default_storage,
                                   finished, open_study, owner, owner_gone, parse_objectives,
                                   reap, storage_label)

SPACE = {"x.y": {"float": [0.0, 1.0]}}


def test_objectives_are_one_or_two_known_metrics():
    assert parse_objectives("val_loss") == ("val_loss",)
    assert parse_objectives("val_accuracy, params") == ("val_accuracy", "params")
    for text, words in (("loss", "'loss' is not a metric here"), ("", "needs a metric"),
                        ("val_loss,val_loss", "twice"),
                        ("val_loss,params,ms_per_step", "one metric or two")):
        with pytest.raises(SearchError, match=words):
            parse_objectives(text)


def test_the_default_storage_sits_beside_the_runs(tmp_path):
    url = default_storage(tmp_path / "p.json")
    assert url == f"sqlite:///{tmp_path.resolve() / 'runs' / 'p.search.db'}"
    assert (tmp_path / "runs").is_dir()
    assert storage_label("postgresql://me:secret@db/x") == "postgresql://me:***@db/x"


def test_a_resumed_study_must_search_the_same_objectives_and_space(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = open_study(url, "s", ("val_loss",), SPACE)
    assert study.metric_names == ["val_loss"]
    assert study.user_attrs == {"objectives": ["val_loss"], "space": SPACE}
    assert open_study(url, "s", ("val_loss",), SPACE).study_name == "s"
    with pytest.raises(SearchError, match="optimises val_loss, not val_accuracy"):
        open_study(url, "s", ("val_accuracy",), SPACE)
    with pytest.raises(SearchError, match="searched another space"):
        open_study(url, "s", ("val_loss",), {"x.y": {"float": [0.0, 2.0]}})
    with pytest.raises(SearchError, match="cannot be opened"):
        open_study("postgresql+nosuchdriver://x/y", "s", ("val_loss",), SPACE)


@pytest.mark.filterwarnings("ignore:Heartbeat of storage")
def test_a_dead_worker_s_trial_is_failed_queued_again_and_counted_once(tmp_path):
    study = open_study(f"sqlite:///{tmp_path / 's.db'}", "s", ("val_loss",), SPACE)
    done = study.ask()
    done.suggest_float("x.y", 0.0, 1.0)
    study.tell(done, 0.5)
    mine, theirs = study.ask(), study.ask()
    for t in (mine, theirs):
        t.suggest_float("x.y", 0.0, 1.0)
    # "mine" was run by a process of this machine that has ended; "theirs" runs here now
    for key, value in {**owner(), "pid": 2 ** 22 + 12345}.items():
        study._storage.set_trial_user_attr(mine._trial_id, key, value)
    for key, value in owner().items():
        study._storage.set_trial_user_attr(theirs._trial_id, key, value)
    assert counted(study) == (3, 0)
    failed = reap(study, owner_gone, "its worker ended")
    assert [t.number for t in failed] == [mine.number]
    trials = study.get_trials()
    assert trials[mine.number].state == TrialState.FAIL
    assert trials[mine.number].user_attrs["reason"] == "its worker ended"
    retry = trials[-1]
    assert retry.state == TrialState.WAITING and retry.params == trials[mine.number].params
    assert counted(study) == (3, 1)  # the retry stands for the failed trial
    assert trials[theirs.number].state == TrialState.RUNNING
    assert [t.number for t in finished(study)] == [done.number]
    assert os.getpid() == owner()["pid"]


def test_two_objectives_give_the_pareto_front_best_first(tmp_path):
    study = open_study(f"sqlite:///{tmp_path / 's.db'}", "s", ("val_loss", "params"), SPACE)
    for loss, params in ((0.5, 100), (0.3, 300), (0.4, 400), (0.6, 50)):
        study.add_trial(optuna.create_trial(values=[loss, params], params={"x.y": loss},
                                            distributions={"x.y": optuna.distributions
                                                           .FloatDistribution(0, 1)}))
    assert [t.values for t in best_trials(study)] == [[0.3, 300], [0.5, 100], [0.6, 50]]
