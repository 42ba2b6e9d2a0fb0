"""``rnn-designer search`` on the CPU, end to end: workers run the trials as run folders, a
trial that fails says why and the study goes on, a pruner prunes, ``--json`` speaks in lines,
``--best-out`` writes the best design, two objectives give a Pareto front, bad input is one
sentence."""
import json
import time

import optuna
import pytest

from designer.graph import project as P
from designer.search.study import open_study
from tests.conftest import need_data
from tests.search.helpers import SPACE, lines, load, search, tiny_forecaster

pytestmark = need_data("co2_weekly.csv")
TRIAL_KEYS = {"kind", "number", "state", "params", "values", "run_dir", "device", "seconds",
              "ms_per_step", "reason", "retry_of", "steps", "max_steps"}


def test_four_trials_on_two_cpu_workers_leave_four_run_folders(tmp_path):
    project = tiny_forecaster(tmp_path)
    start = time.perf_counter()
    out = search(project, "--trials", 4, "--device", "cpu", "--workers", 2, "--seed", 3)
    seconds = time.perf_counter() - start
    assert out.returncode == 0, out.stderr
    study = load(project)
    trials = study.get_trials()
    assert len(trials) == 4 and {t.state.name for t in trials} <= {"COMPLETE", "PRUNED"}
    for t in trials:
        run = tmp_path / "runs" / "co2" / f"trial-{t.number}"
        assert t.user_attrs["run_dir"] == str(run)
        assert (run / "project.json").exists() and (run / "metrics.jsonl").exists()
        assert t.user_attrs["device"] == "cpu" and t.user_attrs["params"] > 0
        assert t.user_attrs["ms_per_step"] > 0 and t.user_attrs["seconds"] > 0
        assert P.load(run / "project.json").graph.layer("lstm1").type == \
            t.params["lstm1.type"]
    said = [line for line in out.stdout.splitlines() if line.startswith("trial ")]
    assert len(said) == 4
    assert "best: trial" in out.stdout and "run folder:" in out.stdout
    print(f"4 trials on 2 CPU workers: {seconds:.1f} s, {4 * 3600 / seconds:.0f} trials/hour")


def test_json_lines_and_the_best_design_written_beside(tmp_path):
    project = tiny_forecaster(tmp_path)
    best_out = tmp_path / "chosen" / "best.json"
    out = search(project, "--trials", 2, "--device", "cpu", "--json", "--best-out", best_out,
                 "--study", "lines")
    assert out.returncode == 0, out.stderr
    events = lines(out.stdout)
    assert events[0] == {"kind": "study", "study": "lines", "storage": events[0]["storage"],
                         "trials": 2, "objectives": ["val_loss"], "directions": ["minimize"],
                         "devices": ["cpu"], "runs": str(tmp_path / "runs" / "lines"),
                         "folds": 1}
    trials = [e for e in events if e["kind"] == "trial"]
    assert [set(e) for e in trials] == [TRIAL_KEYS, TRIAL_KEYS]
    assert {e["state"] for e in trials} == {"COMPLETE"}
    assert all(len(e["values"]) == 1 and set(e["params"]) == set(SPACE) for e in trials)
    assert all(e["steps"] == e["max_steps"] == 6 for e in trials)  # trained to the end
    best = events[-1]
    assert best["kind"] == "best" and best["best_out"] == str(best_out)
    assert best["values"][0] == min(e["values"][0] for e in trials)
    chosen = P.load(best_out)  # a project of its own: its data found from its new folder
    assert chosen.graph.layer("lstm1").type == best["params"]["lstm1.type"]
    assert chosen.solver["base_lr"] == best["params"]["solver.base_lr"]
    data = chosen.graph.layer("data").params["file"]
    assert (best_out.parent / data).exists()


def test_two_objectives_give_a_pareto_front(tmp_path):
    project = tiny_forecaster(tmp_path)
    out = search(project, "--trials", 3, "--device", "cpu", "--objective", "val_loss,params",
                 "--pruner", "median")
    assert out.returncode == 0, out.stderr
    study = load(project)
    assert len(study.directions) == 2 and study.metric_names == ["val_loss", "params"]
    front = study.best_trials
    assert front and all(len(t.values) == 2 for t in front)
    assert "Pareto front (val_loss, params):" in out.stdout
    for t in front:
        assert f"trial {t.number}: val_loss" in out.stdout


def test_a_failing_trial_says_why_and_the_study_goes_on(tmp_path):
    space = {**SPACE, "ip1.num_output": {"choice": ["P", 3]},
             "data.seq_len": {"choice": [8, 100000]}}
    project = tiny_forecaster(tmp_path, space=space)
    url = f"sqlite:///{tmp_path / 'runs' / 'co2.search.db'}"
    (tmp_path / "runs").mkdir(exist_ok=True)
    study = open_study(url, "co2", ("val_loss",), space)
    study.enqueue_trial({"ip1.num_output": 3, "data.seq_len": 8})        # not a valid net
    study.enqueue_trial({"ip1.num_output": "P", "data.seq_len": 100000})  # longer than the data
    study.enqueue_trial({"ip1.num_output": "P", "data.seq_len": 8})
    out = search(project, "--trials", 3, "--device", "cpu", "--json")
    assert out.returncode == 0, out.stderr
    trials = {e["number"]: e for e in lines(out.stdout) if e["kind"] == "trial"}
    assert [trials[n]["state"] for n in range(3)] == ["FAIL", "FAIL", "COMPLETE"]
    assert trials[0]["reason"].startswith("the design is not valid: ")
    assert "ip1" in trials[0]["reason"] and trials[0]["run_dir"] is None
    assert "seq_len" in trials[1]["reason"] or "window" in trials[1]["reason"]
    for e in trials.values():
        assert e["reason"] is None or ("\n" not in e["reason"] and
                                       "Traceback" not in e["reason"])
    assert load(project).get_trials()[0].user_attrs["reason"] == trials[0]["reason"]


def test_a_pruner_that_must_prune_prunes_every_trial_but_the_design_as_drawn(tmp_path, capsys):
    from designer.cli import parse
    from designer.search.command import search as run_search
    project = tiny_forecaster(tmp_path, steps=9)
    args = parse(["search", str(project), "--trials", "3", "--device", "cpu", "--json"])
    args.pruner = optuna.pruners.ThresholdPruner(upper=-1.0)  # no loss is below -1
    assert run_search(args) == 0
    events = lines(capsys.readouterr().out)
    trials = sorted((e for e in events if e["kind"] == "trial"), key=lambda e: e["number"])
    # the first trial is the design as drawn: it runs to its end, whatever the pruner says
    assert [e["state"] for e in trials] == ["COMPLETE", "PRUNED", "PRUNED"]
    study = load(project)
    assert study.trials[0].user_attrs["drawn"] is True
    for e in trials[1:]:  # pruned on the best validation it had reached
        t = study.trials[e["number"]]
        best = min(t.intermediate_values.values())
        assert e["reason"] == f"pruned at step 3 (val_loss {best:.4g})"
        records = [json.loads(x) for x in open(t.user_attrs["run_dir"] + "/metrics.jsonl")]
        assert max(r["step"] for r in records) < 9  # stopped through its stop token


def test_a_trial_reports_the_best_validation_it_has_reached():
    from designer.search.trial import better
    assert better("val_loss", None, 0.5) == 0.5
    assert better("val_loss", 0.4, 0.9) == 0.4 and better("val_loss", 0.4, 0.3) == 0.3
    assert better("val_accuracy", 0.8, 0.7) == 0.8 and better("val_accuracy", 0.8, 0.9) == 0.9
    assert better("val_loss", float("nan"), 0.7) == 0.7


@pytest.mark.parametrize("extra, words", [
    (["--space", "SPACE"], "SPACE: lstm9.num_output: there is no layer 'lstm9'"),
    (["--best-out", "PROJECT"], "is the project being searched"),
    (["--objective", "val_accuracy"], "val_accuracy needs an Accuracy layer"),
    (["--objective", "speed"], "'speed' is not a metric here"),
    (["--trials", "0"], "--trials must be at least 1"),
    (["--refit-seeds", "0"], "--refit-seeds must be at least 1"),
    (["--refit-top", "0"], "--refit-top must be at least 1"),
    (["--refit-top", "2", "--objective", "val_loss,params"],
     "--refit-top ranks the trials by one objective"),
    (["--device", "cuda"], "no CUDA GPU is available"),
])
def test_bad_input_is_one_sentence_and_exit_2(tmp_path, extra, words):
    project = tiny_forecaster(tmp_path)
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"lstm9.num_output": {"int": [1, 2]}}))
    extra = [str(space) if x == "SPACE" else str(project) if x == "PROJECT" else x
             for x in extra]
    if "--device" in extra:
        import torch
        if torch.cuda.is_available():
            pytest.skip("this machine has a GPU")
    else:
        extra += ["--device", "cpu"]
    out = search(project, "--trials", 1, *extra)
    assert out.returncode == 2, out.stdout + out.stderr
    text = out.stderr.replace(str(space), "SPACE").strip()
    assert words in text and len(text.splitlines()) == 1 and "Traceback" not in text
    assert not (tmp_path / "runs" / "co2").exists()  # no trial ran


def test_a_missing_project_is_one_sentence(tmp_path):
    out = search(tmp_path / "nope.json", "--trials", 1)
    assert out.returncode == 2
    assert out.stderr.strip() == f"rnn-designer: {tmp_path / 'nope.json'}: does not exist"


def test_a_damaged_study_database_is_one_sentence_and_exit_2(tmp_path):
    project = tiny_forecaster(tmp_path)
    db = tmp_path / "runs" / "co2.search.db"
    db.parent.mkdir()
    db.write_bytes(b"SQLite format 3\0" + b"\xfb" * 8000)  # its header, then garbage
    out = search(project, "--trials", 1, "--device", "cpu")
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip() == (f"rnn-designer: {db}: the search database is damaged "
                                  "(file is not a database); give another --storage, or move "
                                  "the file aside to start the study afresh")
    assert db.read_bytes().endswith(b"\xfb" * 8000)


def test_no_trial_starts_once_the_time_is_up(tmp_path):
    project = tiny_forecaster(tmp_path)
    out = search(project, "--trials", 3, "--device", "cpu", "--time-limit", "0.001",
                 "--json")
    assert out.returncode == 0, out.stderr
    assert lines(out.stdout)[-1]["complete"] == 0
    # only the design as drawn waits, queued as the study's first trial, to run next time
    assert [(t.state.name, t.user_attrs.get("drawn")) for t in load(project).get_trials()] \
        == [("WAITING", True)]


@need_data("ucr/GunPoint_TRAIN.ts", "ucr/GunPoint_TEST.ts")
def test_a_classifier_is_searched_for_its_test_accuracy_and_its_speed(tmp_path):
    from tests.search.helpers import tiny_classifier
    project = tiny_classifier(tmp_path)
    for name in project.graph.names():
        if project.graph.layer(name).type in ("LSTM", "Conv1D"):
            project.graph.set_param(name, "num_output", 8)
    project.solver["max_steps"] = 6
    project.training.update(eval_interval=3, checkpoint_interval=6, log_interval=3)
    project.search = {"features.inputs": {"choice": ["both", "pool"]},
                      "pool.method": {"choice": ["last", "mean"]}}
    project.save()
    out = search(project.path, "--trials", 2, "--device", "cpu", "--json",
                 "--objective", "test_accuracy,ms_per_step")
    assert out.returncode == 0, out.stderr
    trials = [e for e in lines(out.stdout) if e["kind"] == "trial"]
    assert [e["state"] for e in trials] == ["COMPLETE", "COMPLETE"]
    for e in trials:
        accuracy, ms = e["values"]
        assert 0.0 <= accuracy <= 1.0 and ms == e["ms_per_step"] > 0
    assert lines(out.stdout)[-1]["pareto"]
