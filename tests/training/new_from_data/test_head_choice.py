"""`init` cross-validates the head over MiniRocket's features on the training sequences: the
InnerProduct solved in closed form where its accuracy over the folds is higher, Adam's
BatchNorm -> InnerProduct where that is (on a tie, the head that ranks the right class further
ahead). The project it writes says which, on the canvas and in its search section, and trains
as it says."""
import numpy as np
import pytest
import torch

from designer.graph.project import load
from designer.training.new_from_data import designs, head_choice
from designer.training.new_from_data.init import init_project
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run


def three_shapes(folder, per_class=6):
    rng = np.random.default_rng(3)
    t = np.linspace(0, 1, 48)
    waves = {"up": t, "wave": np.sin(2 * np.pi * 4 * t), "step": (t > 0.5) * 1.0}
    for name, n in (("Three_TRAIN.ts", per_class), ("Three_TEST.ts", 5)):
        lines = ["@problemName three", "@univariate true", "@classLabel true step up wave",
                 "@data"]
        for label, wave in sorted(waves.items()) * n:
            values = wave + 0.1 * rng.standard_normal(len(t))
            lines.append(",".join(f"{v:.4f}" for v in values) + f":{label}")
        (folder / name).write_text("\n".join(lines) + "\n")
    return folder / "Three_TRAIN.ts"


@pytest.fixture
def few_steps(monkeypatch):
    """Adam's head in 20 steps (quick, for the tests)."""
    monkeypatch.setattr(designs, "ROCKET_STEPS", 20)


@pytest.fixture
def adam_learns_nothing(monkeypatch):
    """Adam's head as it starts, all zeros, in every fold: the closed form wins."""
    monkeypatch.setattr(head_choice, "_adam", lambda xs, ys, classes, seed: [
        lambda z: torch.zeros(len(z), classes) for _ in xs])


def test_init_solves_the_head_in_closed_form_where_cross_validation_prefers_it(
        tmp_path, adam_learns_nothing):
    out, lines = init_project(three_shapes(tmp_path), out=tmp_path / "p.json")
    said = "\n".join(lines)
    assert "head: the InnerProduct solved in closed form (ridge): over 3 folds of the " \
           "training sequences, ridge 100.0%" in said
    assert "no steps: the head is solved in closed form" in said
    project = load(out)
    g = project.graph
    assert "bn" not in g.names() and g.layer("ip1").get("solve") == "ridge"
    assert g.link_into("ip1", "x").src == "features"
    assert {link.src for link in g.links_into("features")} == {"rockets", "hydra"}
    assert {link.src for link in g.links_into("rockets")} == {"rocket", "rocket_diff"}
    assert g.link_into("rocket_diff", "x").src == "diff" and g.layer("diff").type == "Difference"
    assert g.link_into("hydra", "x").src == "data" and g.layer("hydra").type == "Hydra"
    assert set(project.search) == {"features.inputs", "rockets.inputs", "hydra.num_features",
                                   "hydra.seed"} | {
        f"{v}.{p}" for v in ("rocket", "rocket_diff")
        for p in ("num_features", "max_dilations", "seed")}
    for view in ("rocket", "rocket_diff"):
        g.set_param(view, "num_features", 168)  # small, for the test
    g.set_param("hydra", "num_features", 256)
    records = list(train(project, RunOptions(out=tmp_path / "run", device="cpu",
                                             probe_steps=0)))
    assert records[0]["steps"] == 0 and records[-1]["reason"] == "finished"
    report = evaluate_run(tmp_path / "run", peer=False)
    assert report["accuracy"] == 1.0 and report["trained_on"]["final"]


def test_a_tie_in_accuracy_goes_to_the_head_that_ranks_the_class_further_ahead(
        tmp_path, few_steps, monkeypatch):
    same = head_choice._adam

    def barely(x, y, classes):  # Adam's classes, each barely ahead of the others
        adam = same([x], [y], classes, 0)[0]
        return lambda z: torch.nn.functional.one_hot(adam(z).argmax(1), classes) * 1e-4
    monkeypatch.setattr(head_choice, "_ridge", barely)
    out, lines = init_project(three_shapes(tmp_path), out=tmp_path / "p.json")
    project = load(out)
    assert project.graph.layer("ip1").get("solve") == "gradient"
    assert project.graph.link_into("ip1", "x").src == "bn"
    assert "head: BatchNorm -> InnerProduct learned by Adam: over 3 folds" in "\n".join(lines)
    assert "solver.base_lr" in project.search


def test_the_folds_train_one_adam_head_each_in_one_set_of_tensors(few_steps):
    """Vectorised over folds, each fold's model is the one alone would give."""
    rng = np.random.default_rng(0)
    xs = [torch.from_numpy(rng.random((12, 30))).float() for _ in range(3)]
    ys = [torch.from_numpy(rng.integers(0, 2, 12)) for _ in range(3)]
    together = head_choice._adam(xs, ys, 2, 0)
    for i in range(3):
        alone = head_choice._adam(xs[i:i + 1], ys[i:i + 1], 2, i)[0]
        assert torch.allclose(together[i](xs[i]), alone(xs[i]), atol=1e-5)


def test_classes_too_small_for_folds_get_the_closed_form_without_asking(tmp_path,
                                                                         monkeypatch):
    def never(*_):
        raise AssertionError("no fold is trained")
    monkeypatch.setattr(head_choice, "_adam", never)
    out, lines = init_project(three_shapes(tmp_path, per_class=3), out=tmp_path / "p.json")
    assert load(out).graph.layer("ip1").get("solve") == "ridge"
    assert "a class has fewer than 4 training sequences, too few for folds to tell the " \
           "heads apart" in "\n".join(lines)
