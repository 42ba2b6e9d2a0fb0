"""A trial's values make a copy of the project: parameters and settings set, layers retyped,
a SequencePool made a SequenceLast, a branch switched off; the project itself never changes."""
import pytest

from designer.search.design import DesignError, apply
from designer.search.space import parse_space
from tests.conftest import need_data
from tests.search.helpers import tiny_classifier

pytestmark = need_data("ucr/GunPoint_TRAIN.ts")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return tiny_classifier(tmp_path_factory.mktemp("design"))


def made(project, space: dict, values: dict):
    return apply(project, parse_space(space, project), values)


def test_parameters_and_settings_are_set_on_a_copy(project):
    before = project.to_json()
    out = made(project, {"lstm1.num_output": {"int": [8, 64]},
                         "solver.base_lr": {"float": [1e-4, 1e-2], "log": True},
                         "training.eval_interval": {"choice": [10, 20]}},
               {"lstm1.num_output": 32, "solver.base_lr": 0.003, "training.eval_interval": 20})
    assert out.graph.layer("lstm1").params["num_output"] == 32
    assert out.solver["base_lr"] == 0.003 and out.training["eval_interval"] == 20
    assert project.to_json() == before
    assert out.graph.errors() == []


def test_a_recurrent_layer_is_retyped_and_its_reader_follows_it_both_ways(project):
    space = {"lstm1.type": {"choice": ["LSTM", "GRU"]},
             "lstm1.bidirectional": {"choice": [False, True]}}
    out = made(project, space, {"lstm1.type": "GRU", "lstm1.bidirectional": True})
    g = out.graph
    assert g.layer("lstm1").type == "GRU" and g.layer("lstm1").params["bidirectional"]
    assert g.layer("last").params["bidirectional"] is True  # reads the backward half at step 0
    assert {(k.src, k.dst_port) for k in g.links_into("lstm1")} == \
        {("data", "x"), ("data", "lengths")}
    back = made(out, space, {"lstm1.type": "LSTM", "lstm1.bidirectional": False})
    assert back.graph.layer("last").params["bidirectional"] is False


@pytest.mark.parametrize("cell", ["MinGRU", "MinLSTM"])
def test_a_recurrent_layer_becomes_a_minimal_cell_read_both_ways(project, cell):
    space = {"lstm1.type": {"choice": ["LSTM", cell]},
             "lstm1.bidirectional": {"choice": [False, True]}}
    out = made(project, space, {"lstm1.type": cell, "lstm1.bidirectional": True})
    g = out.graph
    assert g.layer("lstm1").type == cell and g.layer("lstm1").params["bidirectional"]
    assert g.layer("last").params["bidirectional"] is True and not g.errors()


def test_a_pool_read_at_the_last_step_becomes_a_sequence_last(project):
    space = {"pool.method": {"choice": ["last", "mean", "attention"]}}
    out = made(project, space, {"pool.method": "last"})
    assert out.graph.layer("pool").type == "SequenceLast"
    assert out.graph.link_into("pool", "lengths").src == "data"
    assert made(project, space, {"pool.method": "attention"}).graph.layer("pool").params[
        "method"] == "attention"


@pytest.mark.parametrize("keep, gone, kept", [
    ("a", {"lstm1", "last", "features"}, "pool"),
    ("pool", {"lstm1", "last", "features"}, "pool"),
    ("last", {"conv1", "bn1", "relu1", "conv3", "pool", "features"}, "last"),
])
def test_a_branch_switched_off_goes_with_what_fed_only_it(project, keep, gone, kept):
    out = made(project, {"features.inputs": {"choice": ["a", "b", "pool", "last", "both"]},
                         "lstm1.num_output": {"int": [8, 16]}},
               {"features.inputs": keep, "lstm1.num_output": 16})
    g = out.graph
    assert not gone & set(g.names())
    assert "data" in g and g.link_into("drop", "x").src == kept
    assert g.errors() == []
    both = made(project, {"features.inputs": {"choice": ["a", "both"]}},
                {"features.inputs": "both"})
    assert "features" in both.graph and "lstm1" in both.graph


def test_a_convolution_block_made_residual_keeps_its_layers_and_gains_a_shortcut(project):
    space = {"conv2.residual": {"choice": [False, True]},
             "conv2.num_output": {"choice": [64, 256]}}
    out = made(project, space, {"conv2.residual": True, "conv2.num_output": 64})
    g = out.graph
    assert g.errors() == []
    assert g.link_into("relu2", "x").src == "conv2_sum"  # the drawn ReLU reads the sum
    added = {n for n in g.names() if n.startswith("conv2_")}
    assert added == {"conv2_relu1", "conv2_conv2", "conv2_bn2", "conv2_relu2", "conv2_conv3",
                     "conv2_bn3", "conv2_shortcut", "conv2_shortcut_bn", "conv2_sum"}
    assert [g.layer(f"conv2_{c}").params["kernel_size"] for c in ("conv2", "conv3",
                                                                   "shortcut")] == [5, 3, 1]
    assert {g.layer(f"conv2_{c}").params["num_output"]
            for c in ("conv2", "conv3", "shortcut")} == {64}  # the trial's filters
    assert g.link_into("conv2_shortcut", "x").src == "relu1"  # the block's own input
    for name in added - {"conv2_relu1", "conv2_relu2", "conv2_sum"}:
        assert g.link_into(name, "lengths").src == "data"  # padding still changes nothing
    assert g.output("conv2_sum", "y").shape == g.output("bn2", "y").shape
    assert len({g.layer(n).pos for n in g.names()}) == len(g)  # laid out, none on another
    plain = made(project, space, {"conv2.residual": False, "conv2.num_output": 256})
    assert not any(n.startswith("conv2_") for n in plain.graph.names())
    assert project.graph.link_into("relu2", "x").src == "bn2"  # the project is untouched


def test_a_residual_block_is_read_back_as_residual_and_made_plain_again(project):
    space = {"conv2.residual": {"choice": [False, True]},
             "conv3.residual": {"choice": [False, True]}}
    both = made(project, space, {"conv2.residual": True, "conv3.residual": True})
    from designer.search.design import drawn_values
    assert drawn_values(both, parse_space(space, both)) == {"conv2.residual": True,
                                                            "conv3.residual": True}
    again = made(both, space, {"conv2.residual": True, "conv3.residual": True})
    assert sorted(again.graph.names()) == sorted(both.graph.names())  # not nested twice
    plain = made(both, space, {"conv2.residual": False, "conv3.residual": False})
    assert sorted(plain.graph.names()) == sorted(project.graph.names())
    assert set(plain.graph.links()) == set(project.graph.links())
    assert drawn_values(project, parse_space(space, project)) == {"conv2.residual": False,
                                                                  "conv3.residual": False}


def test_a_residual_block_on_a_branch_switched_off_is_left_alone(project):
    out = made(project, {"features.inputs": {"choice": ["last", "both"]},
                         "conv1.residual": {"choice": [False, True]}},
               {"features.inputs": "last", "conv1.residual": True})
    assert "conv1" not in out.graph and not out.graph.errors()


def test_an_invalid_design_is_one_sentence(project):
    with pytest.raises(DesignError) as e:
        made(project, {"ip1.num_output": {"choice": [1, 2]}}, {"ip1.num_output": 1})
    text = str(e.value)
    assert text.startswith("the design is not valid: ") and "ip1" in text and "\n" not in text


def test_the_design_as_drawn_is_read_off_the_project_for_the_first_trial(project):
    from designer.search.design import drawn_values
    space = parse_space({"lstm1.num_output": {"int": [4, 64]},
                         "lstm1.type": {"choice": ["GRU", "LSTM"]},
                         "solver.base_lr": {"float": [1e-4, 1e-1], "log": True}}, project)
    values = drawn_values(project, space)
    assert values == {"lstm1.num_output": project.graph.layer("lstm1").params["num_output"],
                      "lstm1.type": "LSTM",
                      "solver.base_lr": project.solver_settings()["base_lr"]}
    assert made(project, space.source, values).to_json() == project.to_json()
    narrow = parse_space({"lstm1.num_output": {"int": [100, 200]}}, project)
    assert drawn_values(project, narrow) is None  # not a design this space can make


def test_trials_of_different_lengths_report_at_the_same_share_of_their_schedules():
    """The pruner compares trials at one reported step: a validation at step 120 of 750 and
    one at step 240 of 1,500 are both 160 per mille of the way."""
    from designer.search.trial import PROGRESS, progress
    assert progress(120, 750) == progress(240, 1500) == 160
    assert progress(1500, 1500) == PROGRESS and progress(7, None) == 7


def test_a_search_retypes_into_every_registered_cell_that_takes_padded_sequences():
    """The retyping targets come from the registry, in its order; the caffe-lstm layer (no
    'lengths' input, no engine, no stacking) is none, as a retype into it would let go of the
    layer's 'lengths' link."""
    from designer.graph import registry
    from designer.search.design import retyping_kinds
    kinds = retyping_kinds()
    assert kinds == tuple(k for k in registry.recurrent_kinds() if k != "LSTMSimple")
    assert {"LSTM", "GRU", "RNN", "MinGRU", "MinLSTM", "mLSTM", "sLSTM"} <= set(kinds)
