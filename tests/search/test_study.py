"""A study on a real SQLite file: its objectives, its checks on a resumed search, how its
total counts a failed trial that was queued again, and the trials of a dead worker."""
import os
import shutil

import optuna
import pytest
from optuna.trial import TrialState

from designer.search.study import (SearchError, best_trials, counted, default_storage,
                                   finished, open_study, owner, owner_gone, parse_objectives,
                                   reap, storage_label)
from designer.search.where import storage_url

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


def test_a_plain_path_to_a_study_database_opens_it_as_sqlite(tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    db = tmp_path / "runs" / "p.search.db"
    open_study(f"sqlite:///{db}", "p", ("val_loss",), SPACE).enqueue_trial({"x.y": 0.5})
    # the study's own file, given as a plain path (relative, as a user types it)
    monkeypatch.chdir(tmp_path)
    assert storage_url("runs/p.search.db") == f"sqlite:///{db.resolve()}"
    again = open_study("runs/p.search.db", "p", ("val_loss",), SPACE)
    assert [t.system_attrs["fixed_params"] for t in again.get_trials()] == [{"x.y": 0.5}]
    # a copy of it under any name is known by its first bytes
    shutil.copy(db, tmp_path / "backup")
    assert storage_url("backup") == f"sqlite:///{(tmp_path / 'backup').resolve()}"
    assert len(open_study("backup", "p", ("val_loss",), SPACE).get_trials()) == 1
    # a new file named as a database becomes one
    open_study("new.sqlite", "p", ("val_loss",), SPACE)
    assert (tmp_path / "new.sqlite").read_bytes().startswith(b"SQLite format 3\0")


def test_any_other_path_is_a_journal_file(tmp_path):
    journal = tmp_path / "shared" / "p.journal"
    assert storage_url(str(journal)) == str(journal)
    open_study(str(journal), "p", ("val_loss",), SPACE).enqueue_trial({"x.y": 0.5})
    assert journal.read_bytes().startswith(b"{")  # Optuna's journal: JSON lines
    assert storage_url(str(journal)) == str(journal)
    assert len(open_study(str(journal), "p", ("val_loss",), SPACE).get_trials()) == 1
    assert storage_url("postgresql://me@db/x") == "postgresql://me@db/x"


def damaged_copies(tmp_path) -> dict:
    """A study's database with trials, then copies of it hurt three ways."""
    db = tmp_path / "p.search.db"
    study = open_study(f"sqlite:///{db}", "p", ("val_loss",), SPACE)
    for i in range(40):
        study.enqueue_trial({"x.y": i / 40}, user_attrs={"note": "x" * 200})
    whole = db.read_bytes()
    middle = bytearray(whole)
    middle[8192:12288] = b"\xfb" * 4096  # a page of the tables overwritten
    hurt = {"truncated.db": whole[:len(whole) // 3], "a page garbled.db": bytes(middle),
            "no header.search.db": b"\xfb" * 16 + whole[16:]}
    for name, data in hurt.items():
        (tmp_path / name).write_bytes(data)
    return hurt


@pytest.mark.parametrize("given", ["url", "path"])
def test_a_damaged_study_database_is_one_sentence_that_says_what_to_do(tmp_path, given):
    for name, data in damaged_copies(tmp_path).items():
        f = tmp_path / name
        with pytest.raises(SearchError) as caught:
            open_study(f"sqlite:///{f}" if given == "url" else str(f), "p", ("val_loss",),
                       SPACE)
        said = str(caught.value)
        assert said.startswith(f"{f}: ") and "damaged" in said, said
        assert "--storage" in said and "move the file aside" in said
        assert "commit" not in said and "sqlite3" not in said and "utf-8" not in said
        assert len(said.splitlines()) == 1
        assert f.read_bytes() == data  # nothing in it was changed


def test_a_damaged_journal_is_one_sentence_too(tmp_path):
    journal = tmp_path / "p.journal"
    open_study(str(journal), "p", ("val_loss",), SPACE).enqueue_trial({"x.y": 0.5})
    journal.write_bytes(journal.read_bytes()[:40] + b"\xfb\xfb\n" + journal.read_bytes()[40:])
    with pytest.raises(SearchError) as caught:
        open_study(str(journal), "p", ("val_loss",), SPACE)
    said = str(caught.value)
    assert said.startswith(f"{journal}: ") and "damaged" in said and "line 1" in said, said
    assert "utf-8" not in said


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
