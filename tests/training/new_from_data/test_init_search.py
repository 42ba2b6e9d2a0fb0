"""The projects ``init`` writes carry a ``search`` section: what ``rnn-designer search``
varies around them, every key valid for the project and every sampled design a valid net."""
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
                                         "rocket_diff.num_features", "features.inputs"}),
    ("ucr/GunPoint_TRAIN.ts", "rocket+ridge", {"rocket.num_features", "rocket.seed",
                                               "rocket.max_dilations", "rocket_diff.seed",
                                               "features.inputs"}),
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
