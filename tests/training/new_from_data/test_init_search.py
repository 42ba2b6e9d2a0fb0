"""The projects ``init`` writes carry a ``search`` section: what ``rnn-designer search``
varies around them, every key valid for the project and every sampled design a valid net."""
import itertools

import optuna
import pytest

from designer.graph import project as P
from designer.search.design import apply
from designer.search.space import parse_space
from designer.training.new_from_data.init import init_project
from tests.conftest import DATA, need_data


@need_data("ucr/GunPoint_TRAIN.ts", "co2_weekly.csv")
@pytest.mark.parametrize("data, net, keys", [
    ("ucr/GunPoint_TRAIN.ts", "rocket", {"solver.base_lr", "solver.max_steps", "data.batch_size",
                                         "rocket.num_features", "rocket.seed",
                                         "rocket_diff.num_features", "features.inputs",
                                         "rockets.inputs", "hydra.seed"}),
    ("ucr/GunPoint_TRAIN.ts", "rocket+ridge", {"rocket.num_features", "rocket.seed",
                                               "rocket.max_dilations", "rocket_diff.seed",
                                               "features.inputs", "rockets.inputs",
                                               "hydra.num_features"}),
    ("ucr/GunPoint_TRAIN.ts", "lstm-fcn", {
        "solver.base_lr", "solver.weight_decay", "conv2.num_output", "lstm1.num_output",
        "lstm1.type", "lstm1.bidirectional", "pool.method", "drop.dropout_ratio",
        "features.inputs", "solver.max_steps", "data.frame"}),
    ("co2_weekly.csv", "rocket", {"solver.base_lr", "lstm1.type", "lstm1.num_output",
                                  "data.seq_len"}),
])
def test_init_writes_a_search_section_whose_designs_are_valid(tmp_path, data, net, keys):
    net, _, head = net.partition("+")  # the head as asked: nothing cross-validated
    path, _ = init_project(DATA / data, out=tmp_path / "p.json", net=net, head=head or "adam")
    project = P.load(path)
    assert keys <= set(project.search)
    space = parse_space(project.search, project, path)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(12):
        trial = study.ask()
        assert apply(project, space, space.suggest(trial)).graph.errors() == []
        study.tell(trial, 0.0)


@need_data("ucr/GunPoint_TRAIN.ts")
def test_every_choice_of_views_of_the_joined_joins_is_a_valid_net(tmp_path):
    """``features`` joins ``rockets`` (itself a join of the two MiniRockets) and Hydra: a
    design may keep any view of either join, and what fed only the dropped views goes."""
    path, _ = init_project(DATA / "ucr/GunPoint_TRAIN.ts", out=tmp_path / "p.json",
                           head="ridge")
    project = P.load(path)
    space = parse_space(project.search, project, path)
    for outer, inner in itertools.product(("both", "rockets", "hydra"),
                                          ("both", "rocket", "rocket_diff")):
        g = apply(project, space, {"features.inputs": outer, "rockets.inputs": inner}).graph
        assert g.errors() == []
        minis = {n for n in ("rocket", "rocket_diff") if n in g}
        assert ("hydra" in g) == (outer != "rockets")
        assert minis == (set() if outer == "hydra" else
                         {"rocket", "rocket_diff"} if inner == "both" else {inner})
        assert ("diff" in g) == ("rocket_diff" in minis)
