"""A MiniRocket classifier end to end on the CPU: ``init``'s project for a UCR file rewritten as
data -> MiniRocket -> BatchNorm -> InnerProduct -> SoftmaxWithLoss/Accuracy trains, its
checkpoints hold the biases fitted before the first step, ``evaluate`` scores it, a resumed
run goes on without fitting them again, and a project of another size refuses the
checkpoint in one sentence."""
import json

import pytest
import torch

from designer.cli import main
from designer.engines.net.rocket import MiniRocket
from designer.graph.project import load
from designer.training.new_from_data.init import init_project
from designer.training.run import checkpoint as C
from designer.training.run.errors import TrainingError
from designer.training.run.loop import RunOptions, train
from tests.conftest import DATA, need_data

TRAIN, TEST = "ucr/ArrowHead_TRAIN.ts", "ucr/ArrowHead_TEST.ts"


def rocket_project(folder, num_features: int = 840):
    """``init``'s ArrowHead project with its LSTM-FCN replaced by MiniRocket -> BatchNorm
    (251 steps of one channel, 16 sequences a batch, Adam at 1e-3)."""
    folder.mkdir(exist_ok=True)
    path, _ = init_project(DATA / TRAIN, out=folder / "p.json", head="adam")
    project = load(path)
    g = project.graph
    for name in [n for n in g.names() if n not in ("data", "ip1", "loss", "accuracy")]:
        g.remove_layer(name)
    g.set_param("data", "frame", 1)
    g.set_param("data", "batch_size", 16)
    g.add_layer("MiniRocket", "rocket", {"num_features": num_features, "max_dilations": 16})
    g.add_layer("BatchNorm", "bn")
    for link in (("data", "data", "rocket", "x"), ("data", "lengths", "rocket", "lengths"),
                 ("rocket", "y", "bn", "x"), ("bn", "y", "ip1", "x")):
        g.connect(*link)
    assert g.errors() == [] and g.output("rocket", "y").shape == (16, num_features)
    project.solver.update(type="Adam", base_lr=1e-3, lr_policy="fixed", weight_decay=0.0)
    project.training.update(eval_interval=15, eval_batches=1, checkpoint_interval=15,
                            log_interval=5)
    return project


def rocket_weights(run) -> dict:
    weights = C.load(run, "last", with_state=False).weights
    return {k.removeprefix("layers.rocket."): v for k, v in weights.items()
            if k.startswith("layers.rocket.")}


def run_to(project, run, steps: int, resume: bool = False, **opts) -> list[dict]:
    return list(train(project, RunOptions(out=run, steps=steps, device="cpu", probe_steps=0,
                                          resume=resume, **opts)))


@need_data(TRAIN, TEST)
def test_a_mini_rocket_classifier_trains_evaluates_and_resumes_without_refitting(
        tmp_path, capsys, monkeypatch):
    project, run = rocket_project(tmp_path), tmp_path / "run"
    records = run_to(project, run, 30)
    assert records[-1]["kind"] == "done" and records[-1]["reason"] == "finished"
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert losses[-1] < 0.5 * losses[0]  # the classifier learns from the fixed features
    fitted = rocket_weights(run)
    assert bool(fitted["fitted"]) and fitted["biases"].abs().sum() > 0
    assert fitted["biases"].shape == (840,) and fitted["dilations"][:2].tolist() == [1, 2]
    assert fitted["masks"].sum() > 0

    assert main(["evaluate", str(run), "--checkpoint", "last", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == "classify" and 0.0 <= report["accuracy"] <= 1.0

    fits = []
    real = MiniRocket.fit
    monkeypatch.setattr(MiniRocket, "fit", lambda self, *a: fits.append(1) or real(self, *a))
    run_to(project, run, 40, resume=True, refit="off")  # (a final model is a new net)
    assert fits == []  # the checkpoint's biases are the run's, not the next batch's
    after = rocket_weights(run)
    assert C.load(run, "last").step == 40
    for key in ("biases", "masks", "dilations", "counts"):
        assert torch.equal(after[key], fitted[key]), key

    bigger = rocket_project(tmp_path / "bigger", num_features=1680)
    with pytest.raises(TrainingError) as e:
        run_to(bigger, run, 50, resume=True)
    assert str(e.value).endswith("does not fit the project: rocket.biases is (840,) in the "
                                 "checkpoint but (1680,) in the project")
