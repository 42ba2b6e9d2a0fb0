"""A search that reshapes the batches scores every trial on the whole validation split, so
that designs of different batch shapes are compared on the same data."""
import json
import math

from designer.graph import project as P
from designer.search.folds import plan_folds
from designer.search.space import parse_space
from designer.search.validation import data_layers_searched, whole_validation
from designer.training.data import open_source
from tests.conftest import need_data
from tests.search.helpers import lines, search, tiny_classifier, tiny_forecaster

TEXT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(400))


def _char_project(folder, batch=25, seq=10, eval_batches=3):
    corpus = folder / "corpus.txt"
    corpus.write_text(TEXT)
    path = folder / "chars.json"
    path.write_text(json.dumps({
        "schema_version": 1, "name": "chars",
        "graph": {"layers": [
            {"name": "data", "type": "CharText",
             "params": {"corpus": str(corpus), "seq_len": seq, "batch_size": batch,
                        "batching": "stream"}},
            {"name": "embed", "type": "Embed", "params": {"num_output": 4}},
            {"name": "lstm1", "type": "LSTM", "params": {"num_output": 4}},
            {"name": "ip1", "type": "InnerProduct", "params": {"num_output": "V", "axis": 2}},
            {"name": "loss", "type": "SoftmaxWithLoss", "params": {}}],
            "links": [{"from": "data.data", "to": "embed.x"},
                      {"from": "data.label", "to": "loss.label"},
                      {"from": "embed.y", "to": "lstm1.x"},
                      {"from": "lstm1.y", "to": "ip1.x"},
                      {"from": "ip1.y", "to": "loss.logits"}]},
        "solver": {"max_steps": 2},
        "training": {"eval_batches": eval_batches}}))
    return P.load(path)


def _covered(project):
    """Characters of the validation split the project's validation reads, and the split's."""
    layer = project.graph.layer("data")
    source = open_source(layer, project.path.parent, seed=0)
    n = int(project.training_settings()["eval_batches"])
    chars = sum(int(b["data"].numel()) for b in source.eval_batches(n, "val"))
    return chars, source.split_size("val")


def test_trials_of_other_batch_shapes_validate_on_the_whole_split(tmp_path):
    shapes = [(25, 10), (16, 20), (4, 7)]
    space = parse_space({"data.batch_size": {"choice": [25, 16, 4]},
                         "data.seq_len": {"choice": [10, 20, 7]}}, _char_project(tmp_path))
    assert data_layers_searched(_char_project(tmp_path), space) == ("data",)
    for batch, seq in shapes:
        project = _char_project(tmp_path, batch, seq)
        before, split = _covered(project)
        assert before < 0.9 * split           # 3 batches: a sample, different per shape
        after, _ = _covered(whole_validation(project, ("data",)))
        # every whole window of every stream: all but less than a window per stream
        assert split - after < batch * seq + batch + 1, (batch, seq, after, split)


def test_a_space_that_keeps_the_batches_keeps_the_projects_validation(tmp_path):
    project = _char_project(tmp_path)
    space = parse_space({"lstm1.num_output": {"int": [2, 8]},
                         "solver.base_lr": {"float": [1e-4, 1e-2], "log": True}}, project)
    assert data_layers_searched(project, space) == ()
    assert whole_validation(project, ()).training_settings()["eval_batches"] == 3
    # never fewer batches than the project asked for
    many = _char_project(tmp_path, eval_batches=500)
    assert whole_validation(many, ("data",)).training_settings()["eval_batches"] == 500


@need_data("ucr/GunPoint_TRAIN.ts")
def test_a_fold_is_validated_whole_when_a_trial_shrinks_the_batch(tmp_path):
    project = tiny_classifier(tmp_path)
    folds = plan_folds(project, 3)
    folds.project(project, 1)
    project.graph.set_param("data", "batch_size", 4)   # the trial's batch, smaller
    source = open_source(project.graph.layer("data"), project.path.parent, seed=0)
    members = len(source.indices("val"))
    cut = int(project.training_settings()["eval_batches"])
    assert cut * 4 < members                  # the fold's count was made for the larger batch
    whole = int(whole_validation(project, ("data",)).training_settings()["eval_batches"])
    assert whole == math.ceil(members / 4)


@need_data("co2_weekly.csv")
def test_each_trial_of_a_search_over_windows_validates_on_its_whole_split(tmp_path):
    path = tiny_forecaster(tmp_path, steps=2, space={"data.seq_len": {"choice": [8, 16]}})
    done = search(path, "--trials", "3", "--device", "cpu", "--json", "--seed", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    trials = [e for e in lines(done.stdout) if e.get("kind") == "trial"]
    assert len(trials) == 3
    for t in trials:
        run = P.load(f"{t['run_dir']}/project.json")
        source = open_source(run.graph.layer("data"), run.path.parent, seed=0)
        assert run.training_settings()["eval_batches"] >= source.eval_size(None, "val"), t
        assert json.loads(json.dumps(t["params"]))["data.seq_len"] == \
            run.graph.layer("data").effective_params()["seq_len"]
