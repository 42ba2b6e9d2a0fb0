"""A search on a set of 2 training sequences a class (GunPoint cut down, as
tests/benchmarks/small_sets.py cuts it): its validation split holds one sequence of a class
(too few for folds), too few to tell designs apart, so the search trains the design ``init``
drew alone and says why (the rule that keeps it, when a study's other trials exist, is
tests/search/test_pick.py's)."""
import sys

from designer.graph import project as P
from designer.search.folds import plan_folds
from designer.training.new_from_data.init import init_project
from tests.conftest import DATA, ROOT, need_data
from tests.search.helpers import lines, load, search

sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
from small_sets import cut, read  # noqa: E402

pytestmark = need_data("ucr/GunPoint_TRAIN.ts")


def cut_set(folder, per_class: int):
    train = DATA / "ucr" / "GunPoint_TRAIN.ts"
    head, rows = read(train)
    out = folder / f"GunPoint-{per_class}_TRAIN.ts"
    out.write_text("\n".join(head + [line for line, _ in cut(rows, per_class)]) + "\n")
    (folder / f"GunPoint-{per_class}_TEST.ts").write_text(
        (DATA / "ucr" / "GunPoint_TEST.ts").read_text())
    return out


def ridge_project(folder, data):
    """init's closed-form classifier, its MiniRocket views made small, searched over their
    kernels' seeds and which view the head reads."""
    path, _ = init_project(data, out=folder / f"{data.stem}.json", head="ridge")
    project = P.load(path)
    for view in ("rocket", "rocket_diff"):
        project.graph.set_param(view, "num_features", 168)
    project.graph.set_param("hydra", "num_features", 256)
    project.search = {"rocket.seed": {"choice": [0, 1, 2, 3]},
                      "rockets.inputs": {"choice": ["both", "rocket", "rocket_diff"]}}
    project.save()
    return project


def test_the_folds_say_how_few_sequences_of_a_class_validate(tmp_path):
    two = plan_folds(ridge_project(tmp_path, cut_set(tmp_path, 2)), "auto")
    assert (two.count, two.fewest) == (1, 1)  # 4 sequences: no folds, one a class validates
    three = plan_folds(ridge_project(tmp_path, cut_set(tmp_path, 3)), "auto")
    assert (three.count, three.fewest) == (3, 3)  # each validates once over the 3 folds
    whole = ridge_project(tmp_path, DATA / "ucr" / "GunPoint_TRAIN.ts")
    folds = plan_folds(whole, "auto")
    assert folds.count == 3 and folds.fewest == 24  # every training sequence validates once


def test_a_search_on_two_a_class_trains_the_design_drawn_alone_and_says_why(tmp_path):
    project = ridge_project(tmp_path, cut_set(tmp_path, 2))
    out = search(project.path, "--trials", 6, "--device", "cpu", "--seed", 1, "--json",
                 "--pruner", "none", timeout=600)
    assert out.returncode == 0, out.stderr
    assert "a class has 1 sequence to validate on, too few to tell designs apart (fewer " \
        "than 4): the search trains the design as drawn (trial 0) alone, not 6 trials" in \
        out.stderr
    rows = lines(out.stdout)
    assert rows[0]["trials"] == 1
    best = rows[-1]
    study = load(project.path)
    trials = study.get_trials()
    assert [t.number for t in trials] == [0] and trials[0].user_attrs["drawn"]
    assert trials[0].user_attrs["fewest_validating"] == 1
    assert best["number"] == 0 and best["complete"] == 1
    assert best["run_dir"] != best["trial_run_dir"]  # its final model saw every sequence
