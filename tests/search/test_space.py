"""A search space is read from a project's section or a file and checked against the project:
every problem is one sentence naming its key."""
import json

import pytest

from designer.search.space import SpaceError, parse_space, read_space_file
from tests.conftest import need_data
from tests.search.helpers import tiny_classifier

pytestmark = need_data("ucr/GunPoint_TRAIN.ts")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return tiny_classifier(tmp_path_factory.mktemp("space"))


def test_init_s_classifier_carries_a_space_that_checks(project):
    space = parse_space(project.search, project)
    keys = [d.key for d in space.dims]
    assert {"solver.base_lr", "lstm1.type", "lstm1.bidirectional", "pool.method",
            "features.inputs", "conv1.num_output", "drop.dropout_ratio"} <= set(keys)
    assert space.dimension("solver.base_lr").log


@pytest.mark.parametrize("key, entry, words", [
    ("lstm9.num_output", {"int": [8, 64]}, "there is no layer 'lstm9'"),
    ("lstm1", {"int": [8, 64]}, "must name a layer and one of its parameters"),
    ("lstm1.units", {"int": [8, 64]}, "lstm1 (LSTM) has no parameter 'units'"),
    ("lstm1.num_output", {"float": [8, 64]}, "takes whole numbers"),
    ("lstm1.num_output", {"int": [64, 8]}, "reversed"),
    ("lstm1.num_output", {"int": [0, 8]}, "so 0 cannot be searched"),
    ("lstm1.num_output", {"int": [8, 64], "step": 5}, "not a whole number of steps of 5"),
    ("lstm1.num_output", {"int": [8, 64], "choice": [8]}, "exactly one of int, float"),
    ("lstm1.num_output", {"ints": [8, 64]}, "unknown key 'ints'"),
    ("solver.base_lr", {"float": [0, 0.1], "log": True}, "so 0 cannot be searched"),
    ("solver.base_lr", {"float": [0.1, 0.2, 0.3]}, "a pair of numbers"),
    ("solver.learning_rate", {"float": [0.1, 0.2]}, "solver has no setting 'learning_rate'"),
    ("drop.dropout_ratio", {"float": [0.0, 1.0]}, "so 1 cannot be searched"),
    ("lstm1.bidirectional", {"int": [0, 1]}, "give it as {\"choice\": [...]}"),
    ("pool.method", {"choice": ["mean", "sum"]}, "so \"sum\" cannot be searched"),
    ("pool.method", {"choice": ["mean", "mean"]}, "given twice"),
    ("pool.method", {"choice": ["mean"], "log": True}, "log and step are for int and float"),
    ("lstm1.type", {"choice": ["LSTM", "Transformer"]}, "\"Transformer\" is not a layer type"),
    ("lstm1.type", {"int": [1, 2]}, "searched as {\"choice\": [\"LSTM\", \"GRU\"]}"),
    ("features.inputs", {"choice": ["a", "c"]}, "\"c\" is none of features's inputs"),
    ("ip1.inputs", {"choice": ["a", "both"]}, "does not join two linked inputs"),
    ("loss.inputs", {"choice": ["logits", "both"]}, "its inputs are not branches"),
    ("lstm1.residual", {"choice": [False, True]}, "does not start a convolution block"),
    ("bn1.residual", {"choice": [False, True]}, "bn1 (BatchNorm) does not start"),
    ("conv1.residual", {"choice": [0, 1]}, "searched as {\"choice\": [false, true]}"),
    ("conv1.residual", {"choice": [True, True]}, "searched as {\"choice\": [false, true]}"),
    ("conv1.residual", {"int": [0, 1]}, "searched as {\"choice\": [false, true]}"),
])
def test_each_problem_is_one_sentence_naming_its_key(project, key, entry, words):
    with pytest.raises(SpaceError) as e:
        parse_space({key: entry}, project, "space.json")
    assert e.value.problems[0].startswith(f"{key}: ")
    assert words in e.value.problems[0]
    assert str(e.value).startswith(f"space.json: {key}: ")
    assert "\n" not in str(e.value)


def test_a_block_whose_convolution_reads_nothing_cannot_be_made_residual(project):
    from designer.search.design import copy_project
    unlinked = copy_project(project)
    unlinked.graph.disconnect(unlinked.graph.link_into("conv2", "x"))
    with pytest.raises(SpaceError) as e:
        parse_space({"conv2.residual": {"choice": [False, True]}}, unlinked)
    assert "with its input linked" in str(e.value)
    assert parse_space({"conv2.residual": {"choice": [False, True]}}, project).dims


def test_every_problem_is_told_not_only_the_first(project):
    with pytest.raises(SpaceError) as e:
        parse_space({"lstm9.num_output": {"int": [8, 64]}, "lstm1.num_output": {"int": [8, 64]},
                     "drop.dropout_ratio": {"float": [0.5, 2.0]}}, project, "s.json")
    assert len(e.value.problems) == 2
    assert "(and 1 more problem)" in str(e.value)
    assert [line.split(":")[1].strip() for line in e.value.lines()] == \
        ["lstm9.num_output", "drop.dropout_ratio"]


def test_an_empty_space_says_where_a_space_comes_from(project):
    with pytest.raises(SpaceError, match="the search space is empty"):
        parse_space({}, project)


def test_a_parameter_of_a_type_the_layer_may_become_is_allowed(project):
    space = parse_space({"lstm1.type": {"choice": ["LSTM", "RNN"]},
                         "lstm1.nonlinearity": {"choice": ["tanh", "relu"]}}, project)
    assert len(space) == 2
    with pytest.raises(SpaceError, match="has no parameter 'nonlinearity'"):
        parse_space({"lstm1.nonlinearity": {"choice": ["tanh", "relu"]}}, project)


def test_a_space_file_is_an_object_or_a_project_and_a_bad_one_names_itself(project, tmp_path):
    f = tmp_path / "space.json"
    f.write_text(json.dumps({"lstm1.num_output": {"int": [8, 16]}}))
    assert read_space_file(f) == {"lstm1.num_output": {"int": [8, 16]}}
    f.write_text(json.dumps({"schema_version": 1,
                             "search": {"lstm1.num_output": {"int": [8, 16]}}}))
    assert read_space_file(f) == {"lstm1.num_output": {"int": [8, 16]}}
    for text, words in (("{oops", "is not valid JSON (line 1"),
                        ("[1, 2]", "must hold a JSON object")):
        f.write_text(text)
        with pytest.raises(SpaceError) as e:
            read_space_file(f)
        assert str(e.value).startswith(f"{f}: ") and words in str(e.value)
    with pytest.raises(SpaceError, match="does not exist"):
        read_space_file(tmp_path / "none.json")


def test_a_space_that_pairs_adam_with_weight_decay_says_so_once(project):
    solver = project.solver_settings()
    paired = parse_space({"solver.type": {"choice": ["Adam", "AdamW"]},
                          "solver.weight_decay": {"choice": [0.0, 0.01, 0.1]}}, project)
    note = paired.adam_l2_note(solver)
    assert note.startswith("the space pairs Adam with weight decay; at its largest, Adam adds "
                           "weight_decay 0.1")
    adamw = parse_space({"solver.type": {"choice": ["AdamW", "SGD"]},
                         "solver.weight_decay": {"float": [0.0, 0.1]}}, project)
    assert adamw.adam_l2_note(solver) is None
    small = parse_space({"solver.type": {"choice": ["Adam"]},
                         "solver.weight_decay": {"float": [0.0, 0.001]}}, project)
    assert small.adam_l2_note(solver) is None


def test_the_char_rnn_examples_space_never_pairs_adam_with_weight_decay():
    from pathlib import Path

    from designer.graph import project as P
    example = P.load(Path(__file__).resolve().parents[2] / "projects/char-rnn-shakespeare.json")
    space = parse_space(example.search, example)
    assert "solver.weight_decay" in [d.key for d in space.dims]
    assert space.adam_l2_note(example.solver_settings()) is None
