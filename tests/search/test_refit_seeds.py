"""``search --refit-seeds K``: the pick trained again K times with the seeds S, S+1, ... into
``best-trial-N`` and ``best-trial-N-seed-2`` ...: a seed ensemble, kept when it ran to its
end; the ``best`` event names every run folder and the summary the command that scores them.
``--refit-seeds 1`` (the default) leaves everything as it was; tests/search/test_folds.py
runs the command both ways on one study."""
import json
from pathlib import Path

from designer.graph import project as P
from designer.search.command import Lines
from designer.search.refit import finished, refit_folder, refit_seeds
from designer.search.space import parse_space
from designer.training.run import checkpoint as C
from tests.conftest import need_data
from tests.search.helpers import tiny_forecaster

pytestmark = need_data("ucr/GunPoint_TRAIN.ts", "co2_weekly.csv")

PICK = {"number": 5, "params": {"solver.base_lr": 3e-3, "lstm1.num_output": 4,
                                "lstm1.type": "LSTM"}}


def _refit(path, count, seed=None, first=None) -> tuple[list[Path], list[dict]]:
    project = P.load(path)
    space = parse_space(project.search, project, project.path)
    events = []
    folders = refit_seeds(project, space, PICK, "co2", Path(path).parent / "runs" / "co2",
                          "cpu", 6, seed, count, show=events.append, first=first)
    return folders, events


def test_the_pick_is_trained_once_per_seed_and_a_finished_retraining_is_kept(tmp_path):
    path = tiny_forecaster(tmp_path)
    runs = tmp_path / "runs" / "co2"
    folders, events = _refit(path, 2, seed=7)
    assert folders == [runs / "best-trial-5", runs / "best-trial-5-seed-2"]
    assert folders == [refit_folder(runs, 5), refit_folder(runs, 5, 2)]
    assert all(finished(f) for f in folders)
    seeds = [C.load(f, "best", with_state=False).meta["seed"] for f in folders]
    assert seeds == [7, 8]
    assert [e["run_dir"] for e in events] == [str(f) for f in folders]
    assert "seed" not in events[0] and (events[1]["seed"], events[1]["member"]) == (8, 2)
    assert "with seed 8 (run 2 of the ensemble)" in events[1]["message"]
    assert json.loads((folders[1] / "refit.json").read_text())["seed"] == 8
    assert "seed" not in json.loads((folders[0] / "refit.json").read_text())

    again, events = _refit(path, 3, seed=7)  # the first two are kept, the third trains
    assert again == folders + [runs / "best-trial-5-seed-3"]
    assert [e["member"] for e in events] == [3]
    assert C.load(again[2], "best", with_state=False).meta["seed"] == 9


def test_without_folds_the_best_trials_own_run_is_the_first_seed(tmp_path):
    from types import SimpleNamespace

    from designer.search.command import retrain
    from designer.search.folds import Folds
    path = tiny_forecaster(tmp_path)
    project = P.load(path)
    space = parse_space(project.search, project, project.path)
    own = project.training_settings()["seed"]  # no --seed: the project's own comes first
    runs = tmp_path / "runs" / "co2"
    plan = SimpleNamespace(study="co2", runs=str(runs), steps=6, seed=None, folds=Folds(1))
    events = []
    best = {**PICK, "run_dir": str(runs / "trial-5")}
    folders = retrain(project, space, [best], plan, "cpu", events.append, seeds=2)
    assert folders == [runs / "trial-5", runs / "best-trial-5-seed-2"]
    assert [e["seed"] for e in events] == [own + 1]  # the trial's run is not trained again
    assert not (runs / "best-trial-5").exists()

    # an ensemble of designs (--refit-top): the next design's own run stands for its first
    # seed too, its second seed goes into ensemble-trial-M-seed-2, with that trial's values
    other = {"number": 9, "params": {**PICK["params"], "lstm1.num_output": 3},
             "run_dir": str(runs / "trial-9")}
    events = []
    both = retrain(project, space, [best, other], plan, "cpu", events.append, seeds=2)
    assert both == folders + [runs / "trial-9", runs / "ensemble-trial-9-seed-2"]
    assert [e["run_dir"] for e in events] == [str(runs / "ensemble-trial-9-seed-2")]
    assert P.load(runs / "ensemble-trial-9-seed-2" / "project.json").graph.layer(
        "lstm1").params["num_output"] == 3
    assert refit_folder(runs, 9, kept=False) == runs / "ensemble-trial-9"


def test_the_summary_names_the_ensemble_and_the_command_that_scores_it(capsys):
    event = {"kind": "best", "complete": 1, "pruned": 0, "failed": 0, "seconds": 3.0,
             "number": 2, "values": [0.5], "params": {"x": 1}, "run_dir": "r/best-trial-2",
             "trial_run_dir": "r/trial-2", "run_dirs": ["r/best-trial-2",
                                                        "r/best trial-2-seed-2"]}
    text = "\n".join(Lines(("val_loss",)).best_lines(event))
    assert "trained with 2 seeds, a seed ensemble: r/best-trial-2, r/best trial-2-seed-2" \
        in text
    assert "score it with: rnn-designer evaluate r/best-trial-2 'r/best trial-2-seed-2'" \
        in text
    event["ensemble"] = {"trials": [2, 6], "seeds": 1}
    text = "\n".join(Lines(("val_loss",)).best_lines(event))
    assert "the designs of trials 2, 6, an ensemble: r/best-trial-2" in text
    event["ensemble"]["seeds"] = 3
    assert "trials 2, 6, each with 3 seeds, an ensemble" in \
        "\n".join(Lines(("val_loss",)).best_lines(event))
    del event["run_dirs"]
    assert "seed" not in "\n".join(Lines(("val_loss",)).best_lines(event))
