"""An InnerProduct solved in closed form (``solve: ridge``) in a run: over a frozen MiniRocket
the solve is the whole training (no gradient steps), and the run's model predicts what
scikit-learn's RidgeClassifierCV predicts from the same features; over layers that learn, the
head trains with them and is solved for every validation and checkpoint, the gradient's own
weights kept for a resumed run. The canvas says which heads are solved, and a head that
cannot be (one per step, or without its intercept) is refused while drawing."""
import numpy as np
import pytest
import torch

from designer.graph.errors import ShapeError
from designer.graph.project import load
from designer.training.data import open_source
from designer.training.new_from_data.init import init_project
from designer.training.run import checkpoint as C
from designer.training.run.loop import RunOptions, train
from designer.training.trained import evaluate as E
from designer.training.trained.evaluate import classify_arrays, evaluate_run
from designer.training.trained.generate import load_trained
from tests.conftest import DATA, need_data
from tests.training.run.test_final_model import classifier, run

ARROWHEAD = "ucr/ArrowHead_TRAIN.ts"


def ridge_project(folder):
    """``init``'s ArrowHead project with the closed-form head: MiniRocket over the series and
    over its difference (840 features each, for the test), and Hydra (512), joined ->
    InnerProduct (ridge)."""
    path, _ = init_project(DATA / ARROWHEAD, out=folder / "p.json", head="ridge")
    project = load(path)
    g = project.graph
    for view in ("rocket", "rocket_diff"):
        g.set_param(view, "num_features", 840)
    g.set_param("hydra", "num_features", 512)
    assert g.layer("ip1").get("solve") == "ridge" and g.errors() == []
    return project


@need_data(ARROWHEAD)
def test_over_frozen_features_the_solve_is_the_training_and_predicts_as_scikit_learn(
        tmp_path):
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    records = run(ridge_project(tmp_path), tmp_path / "run", refit="off")
    start = records[0]
    assert start["kind"] == "start" and start["steps"] == 0
    notes = [r["message"] for r in records if r["kind"] == "note"]
    assert any("solved in closed form is its training, so the run takes no steps" in n
               for n in notes)
    assert any(n.startswith("ip1 solved in closed form (ridge) over 2,192 inputs of 33 "
                            "training sequences: alpha ") for n in notes)
    assert not [r for r in records if r["kind"] == "train"]
    assert records[-1]["reason"] == "finished" and records[-1]["step"] == 0
    ck = C.load(tmp_path / "run", "best", with_state=False)
    assert ck.step == 0 and set(ck.meta["closed_form"]["ip1"]) >= {"alpha", "loo_accuracy"}

    # the run's own features of its training and test sequences, fed to scikit-learn
    model = load_trained(tmp_path / "run", "best", "cpu")
    source = E.test_source(model)

    def features(split):
        batch = source.batch(source.parts[split])
        with torch.no_grad():
            joined = model.net.eval()({"data.data": batch["data"],
                                       "data.lengths": batch["lengths"]},
                                      want=("features",)).blobs[("features", 0)]
        return joined.double().numpy(), source.label_ids[source.parts[split]]
    x, y = features("train")
    theirs = make_pipeline(StandardScaler(with_mean=False),
                           RidgeClassifierCV(alphas=np.logspace(-3, 3, 10))).fit(x, y)
    assert ck.meta["closed_form"]["ip1"]["alpha"] == pytest.approx(theirs[-1].alpha_)
    test_x, _ = features("test")
    ours = classify_arrays(model, source)["logits"].argmax(1)
    assert (ours == theirs.predict(test_x)).all()
    assert evaluate_run(tmp_path / "run", peer=False)["accuracy"] > 0.7


def test_over_layers_that_learn_it_is_solved_for_validation_and_checkpoints(tmp_path):
    project = classifier(tmp_path, solve="gradient", steps=20)
    project.graph.set_param("ip1", "solve", "ridge")  # BatchNorm below it learns
    records = run(project, tmp_path / "run", refit="off")
    assert records[0]["steps"] == 20 and [r for r in records if r["kind"] == "train"]
    notes = [r["message"] for r in records if r["kind"] == "note"]
    assert sum("solved in closed form (ridge)" in n for n in notes) == 1  # said once
    last = C.load(tmp_path / "run", "last")
    kept = last.state["gradient_heads"]
    assert set(kept) == {"ip1.weight", "ip1.bias"}
    assert not torch.equal(kept["ip1.weight"], last.weights["layers.ip1.linear.weight"])
    assert last.meta["closed_form"]["ip1"]["sequences"] == 2

    # continued, the head trains on from the gradient's weights, not the solved ones
    project.solver["max_steps"] = 25
    seen = {}
    from designer.training.run import session as S
    real = S.Session._prepare_steps

    def spy(self, p):
        seen["weight"] = self.net.layers["ip1"].linear.weight.detach().clone()
        return real(self, p)
    S.Session._prepare_steps = spy
    try:
        run(project, tmp_path / "run", resume=True, refit="off")
    finally:
        S.Session._prepare_steps = real
    assert torch.equal(seen["weight"], kept["ip1.weight"])


def test_the_canvas_says_which_heads_are_solved(tmp_path):
    from designer.ui.editor.describe import outputs_line
    project = classifier(tmp_path)
    assert outputs_line(project.graph, "ip1") == "(4, 2) \u00b7 ridge, closed form"
    project.graph.set_param("ip1", "solve", "gradient")
    assert outputs_line(project.graph, "ip1") == "(4, 2)"


def test_a_head_that_cannot_be_solved_is_refused_while_drawing(tmp_path):
    project = classifier(tmp_path)
    g = project.graph
    g.set_param("ip1", "bias_term", False)
    assert "with its intercept: set bias_term" in str(g.errors()[0])
    g.set_param("ip1", "bias_term", True)
    g.add_layer("InnerProduct", "per_step", {"num_output": 3, "axis": 2, "solve": "ridge"})
    g.connect("data", "data", "per_step", "x")
    problem = next(p for p in g.problems() if p.layer == "per_step")
    assert isinstance(problem, ShapeError) and "one vector a sequence" in str(problem)


def test_a_head_that_feeds_no_class_loss_is_one_sentence(tmp_path):
    from designer.training.run.errors import TrainingError
    project = classifier(tmp_path)
    g = project.graph
    g.add_layer("InnerProduct", "extra", {"num_output": 3, "solve": "ridge"})
    g.connect("rocket", "y", "extra", "x")
    with pytest.raises(TrainingError) as e:
        run(project, tmp_path / "run")
    assert "extra is solved in closed form for the classes of a SoftmaxWithLoss" in \
        str(e.value) and e.value.code == 2
    assert open_source(g.layer("data"), tmp_path).num_classes == 2
