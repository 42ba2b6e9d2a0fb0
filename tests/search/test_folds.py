"""Cross-validation in a search: the data layer deals its training sequences into folds, a
trial trains one run per fold and is scored on their mean, and the study's pick is trained
again on the project's own split."""
import json

import numpy as np
import pytest

from designer.graph import project as P
from designer.search.folds import AUTO_FOLDS, plan_folds
from designer.search.refit import finished
from designer.search.study import SearchError
from designer.training.data import DataError, open_source
from tests.conftest import need_data
from tests.search.helpers import lines, load, search, tiny_classifier, tiny_forecaster

pytestmark = need_data("ucr/GunPoint_TRAIN.ts", "co2_weekly.csv")


def _source(project, **params):
    for key, value in params.items():
        project.graph.set_param("data", key, value)
    return open_source(project.graph.layer("data"), project.path.parent, seed=0)


def test_every_training_sequence_validates_in_exactly_one_fold(tmp_path):
    project = tiny_classifier(tmp_path)
    usual = _source(project)
    members = set(usual.indices("train")) | set(usual.indices("val"))
    held = []
    for fold in (1, 2, 3):
        source = _source(project, folds=3, fold=fold)
        val, train = set(source.indices("val")), set(source.indices("train"))
        assert not val & train and val | train == members
        assert set(source.indices("test")) == set(usual.indices("test"))  # test untouched
        counts = np.bincount(source.label_ids[sorted(val)], minlength=2)
        assert abs(counts[0] - counts[1]) <= 1  # dealt per class
        assert "fold %d of 3 validates" % fold in source.describe()
        held.append(val)
    assert sorted(len(v) for v in held) in ([16, 17, 17], [17, 17, 16], [16, 16, 18]) \
        or max(map(len, held)) - min(map(len, held)) <= 1
    assert set().union(*held) == members and sum(map(len, held)) == len(members)


def test_a_fold_past_the_folds_or_more_folds_than_sequences_is_one_sentence(tmp_path):
    project = tiny_classifier(tmp_path)
    project.graph.set_param("data", "folds", 3)
    project.graph.set_param("data", "fold", 4)
    assert [str(e) for e in project.graph.errors()] == [
        "data: fold must be between 1 and folds (3), not 4"]
    small = tmp_path / "six.ts"
    small.write_text("@problemName six\n@univariate true\n@classLabel true a b\n@data\n"
                     + "".join(f"{i},{i + 1},{i + 2}:{'ab'[i % 2]}\n" for i in range(6)))
    project.graph.set_param("data", "file", str(small))
    project.graph.set_param("data", "frame", 1)
    with pytest.raises(DataError, match=r"six.ts: 7 folds need at least 7 training "
                                        r"sequences, and it has \d; lower folds"):
        _source(project, folds=7, fold=1)


def test_auto_folds_for_small_labelled_sets_and_none_for_a_forecaster(tmp_path):
    classifier = tiny_classifier(tmp_path)
    folds = plan_folds(classifier, "auto")
    assert folds.count == AUTO_FOLDS and folds.layer == "data"
    assert folds.eval_batches == 2  # 50 sequences / 3 folds = 17, in batches of 9
    assert plan_folds(classifier, "1").count == 1
    forecaster = P.load(tiny_forecaster(tmp_path))
    assert plan_folds(forecaster, "auto").count == 1
    with pytest.raises(SearchError, match="--folds 3: cross-validation deals labelled "
                                          "sequences"):
        plan_folds(forecaster, "3")
    with pytest.raises(SearchError, match="--folds takes auto or a number of folds, not "
                                          "'many'"):
        plan_folds(classifier, "many")
    with pytest.raises(SearchError, match="--folds must be between 1"):
        plan_folds(classifier, "0")


def _tiny_search_project(tmp_path):
    project = tiny_classifier(tmp_path)
    graph = project.graph
    for name, width in (("conv1", 4), ("conv2", 4), ("conv3", 4)):
        graph.set_param(name, "num_output", width)
    graph.set_param("data", "frame", 6)
    project.solver["max_steps"] = 4
    project.training.update(eval_interval=2, log_interval=2, checkpoint_interval=4)
    project.search = {"solver.base_lr": {"float": [1e-3, 1e-2], "log": True},
                      "lstm1.num_output": {"int": [2, 6]}}
    project.save()
    return project.path


def test_a_trial_trains_a_run_per_fold_and_the_pick_is_trained_again(tmp_path):
    path = _tiny_search_project(tmp_path)
    out = search(path, "--trials", 2, "--device", "cpu", "--folds", 2, "--seed", 1,
                 "--json", "--pruner", "none")
    assert out.returncode == 0, out.stderr
    events = lines(out.stdout)
    assert events[0]["folds"] == 2
    study = load(path)
    assert study.user_attrs["folds"] == 2
    for t in study.get_trials():
        runs = t.user_attrs["fold_runs"]
        assert runs == [t.user_attrs["run_dir"],
                        str(tmp_path / "runs" / "gunpoint" / f"trial-{t.number}-fold-2")]
        for k, run in enumerate(runs, 1):
            data = P.load(f"{run}/project.json").graph.layer("data").params
            assert (data["folds"], data["fold"]) == (2, k)
        each = t.user_attrs["val_loss_folds"]
        assert len(each) == 2 and t.values[0] == pytest.approx(sum(each) / 2)
    best = events[-1]
    refit = tmp_path / "runs" / "gunpoint" / f"best-trial-{best['number']}"
    assert best["run_dir"] == str(refit) and finished(refit)
    assert best["trial_run_dir"] == study.best_trial.user_attrs["run_dir"]
    assert [e["kind"] for e in events].count("refit") == 1
    assert "run_dirs" not in best  # one seed (--refit-seeds 1, the default): as it always was
    assert not any("-seed-" in p.name for p in refit.parent.iterdir())
    again_project = P.load(refit / "project.json")
    assert again_project.graph.layer("data").params.get("folds", 1) == 1  # its own split
    assert again_project.graph.layer("lstm1").params["num_output"] == \
        study.best_trial.params["lstm1.num_output"]
    assert json.loads((refit / "refit.json").read_text())["trial"] == best["number"]

    # run again with --refit-seeds 2: the retraining that ran to its end is kept as it was,
    # and the pick is trained once more with the next seed, beside it: a seed ensemble
    again = search(path, "--trials", 2, "--device", "cpu", "--folds", 2, "--json",
                   "--refit-seeds", 2)
    assert again.returncode == 0, again.stderr
    seed_2 = refit.parent / f"best-trial-{best['number']}-seed-2"
    assert [e["run_dir"] for e in lines(again.stdout) if e["kind"] == "refit"] == [str(seed_2)]
    assert lines(again.stdout)[-1]["run_dir"] == str(refit) and finished(seed_2)
    assert lines(again.stdout)[-1]["run_dirs"] == [str(refit), str(seed_2)]
    assert json.loads((seed_2 / "refit.json").read_text())["seed"] == 2  # --seed 1, then 2

    # and with --refit-top 2: the next best design trained again beside the pick, into
    # ensemble-trial-M (the pick's own retraining kept); evaluate scores the two as one
    top = search(path, "--trials", 2, "--device", "cpu", "--folds", 2, "--json",
                 "--refit-top", 2)
    assert top.returncode == 0, top.stderr
    other_trial = next(t for t in study.get_trials() if t.number != best["number"])
    ensemble = refit.parent / f"ensemble-trial-{other_trial.number}"
    assert [e["run_dir"] for e in lines(top.stdout) if e["kind"] == "refit"] == [str(ensemble)]
    last = lines(top.stdout)[-1]
    assert last["run_dir"] == str(refit) and last["run_dirs"] == [str(refit), str(ensemble)]
    assert last["ensemble"] == {"trials": [best["number"], other_trial.number], "seeds": 1}
    assert finished(ensemble)
    assert P.load(ensemble / "project.json").graph.layer("lstm1").params["num_output"] == \
        other_trial.params["lstm1.num_output"]
    from designer.training.trained.ensemble import evaluate_ensemble
    report = evaluate_ensemble(last["run_dirs"], peer=False)
    assert 0.0 <= report["accuracy"] <= 1.0 and len(report["members"]) == 2

    other = search(path, "--trials", 2, "--device", "cpu", "--folds", 1)
    assert other.returncode == 2
    assert "scored its trials over 2 folds, not on the project's validation split" in \
        other.stderr and "Traceback" not in other.stderr
