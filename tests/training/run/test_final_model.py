"""The final model of a small labelled set sees every training sequence: once validation has
chosen the steps, the run trains its design again on train + validation for those steps, and
that model is the run's (evaluate, the window and an ensemble score it). On a set where each
class comes in two shapes and validation holds one of them out, it is what makes the test
sequences of that shape right. The run records it; ``refit off`` leaves the validated model."""
import json

import numpy as np
import pytest

from designer.cli import main
from designer.graph.model import Graph
from designer.graph.project import Project, load
from designer.training.run import checkpoint as C
from designer.training.run import final
from designer.training.run.loop import RunOptions, train
from designer.training.trained.evaluate import evaluate_run, format_report


def shape(kind: str, rng, steps: int = 40) -> np.ndarray:
    """Four shapes: two per class."""
    t = np.linspace(0, 1, steps)
    wave = {"a1": np.sin(2 * np.pi * 2 * t), "a2": np.where(t < 0.5, 1.0, -1.0),
            "b1": np.sin(2 * np.pi * 7 * t), "b2": np.abs(np.sin(2 * np.pi * 3 * t)) * 2 - 1}
    return wave[kind] + 0.05 * rng.standard_normal(steps)


def two_shapes_a_class(folder) -> str:
    """X_TRAIN.ts: one sequence of each shape of each class (4); X_TEST.ts: 10 of each."""
    rng = np.random.default_rng(0)
    for name, each in (("Shapes_TRAIN.ts", 1), ("Shapes_TEST.ts", 10)):
        lines = ["@problemName shapes", "@univariate true", "@classLabel true a b", "@data"]
        for kind in ("a1", "a2", "b1", "b2") * each:
            lines.append(",".join(f"{v:.4f}" for v in shape(kind, rng)) + f":{kind[0]}")
        (folder / name).write_text("\n".join(lines) + "\n")
    return str(folder / "Shapes_TRAIN.ts")


def classifier(folder, solve: str = "ridge", steps: int = 0) -> Project:
    """data -> MiniRocket (168 features) [-> BatchNorm] -> InnerProduct -> loss, half the
    training sequences validating (one of each class: one shape of each)."""
    g = Graph(project_dir=folder)
    g.add_layer("SequenceClasses", "data", {"file": two_shapes_a_class(folder),
                                            "val_fraction": 0.5, "batch_size": 4})
    g.add_layer("MiniRocket", "rocket", {"num_features": 168, "max_dilations": 8})
    g.connect("data", "data", "rocket", "x")
    g.connect("data", "lengths", "rocket", "lengths")
    below = "rocket"
    if solve == "gradient":
        g.add_layer("BatchNorm", "bn")
        g.connect("rocket", "y", "bn", "x")
        below = "bn"
    g.add_layer("InnerProduct", "ip1", {"num_output": 2, "solve": solve,
                                        "weight_filler": "zero"})
    g.connect(below, "y", "ip1", "x")
    for kind, name in (("SoftmaxWithLoss", "loss"), ("Accuracy", "accuracy")):
        g.add_layer(kind, name)
        g.connect("ip1", "y", name, "logits")
        g.connect("data", "label", name, "label")
    assert g.errors() == []
    project = Project(g, name="shapes", solver={"type": "Adam", "base_lr": 0.01,
                                                "max_steps": max(steps, 1)},
                      training={"eval_interval": 5, "log_interval": 5,
                                "checkpoint_interval": 10})
    project.path = folder / "shapes.json"
    project.save()
    return load(project.path)


def run(project, out, **opts) -> list[dict]:
    return list(train(project, RunOptions(out=out, device="cpu", probe_steps=0, seed=1,
                                          **opts)))


def test_the_final_model_sees_the_shape_validation_held_out(tmp_path):
    project = classifier(tmp_path)
    records = run(project, tmp_path / "run")
    stages = [(r["stage"], r["sequences"]) for r in records if r["kind"] == "final"]
    assert stages == [("start", 4), ("done", 4)]
    assert records[-1]["kind"] == "done" and records[-1]["reason"] == "finished"
    pointer = json.loads((tmp_path / "run" / "final.json").read_text())
    assert pointer["checkpoint"].startswith("final/checkpoints/") and pointer["sequences"] == 4
    kept = evaluate_run(tmp_path / "run", peer=False)
    held = evaluate_run(tmp_path / "run", which="validated", peer=False)
    assert kept["trained_on"] == {"sequences": 4, "held": 0, "final": True, "steps": 0}
    assert held["trained_on"] == {"sequences": 2, "held": 2, "final": False, "steps": 0}
    assert kept["accuracy"] == 1.0 and held["accuracy"] <= 0.8  # one shape of each unseen
    assert "trained again on all 4 training sequences (train + validation)" in \
        format_report(kept)
    assert "trained on 2 of the 4 training sequences (2 held out to validate)" in \
        format_report(held)


def test_refit_off_leaves_the_validated_model_as_the_runs(tmp_path):
    project = classifier(tmp_path)
    records = run(project, tmp_path / "run", refit="off")
    assert not [r for r in records if r["kind"] == "final"]
    assert not (tmp_path / "run" / "final.json").exists()
    assert evaluate_run(tmp_path / "run", peer=False)["trained_on"]["held"] == 2


def test_a_net_trained_by_gradient_trains_again_for_the_step_validation_chose(tmp_path):
    project = classifier(tmp_path, solve="gradient", steps=20)
    records = run(project, tmp_path / "run")
    chosen = json.loads((tmp_path / "run" / "best.json").read_text())["step"]
    start = next(r for r in records if r["kind"] == "final")
    assert start["steps"] == chosen and "for" in start["message"]
    progress = [r["step"] for r in records if r.get("stage") == "progress"]
    assert progress and progress[-1] == chosen
    ck = C.load(tmp_path / "run", "best", with_state=False)
    assert ck.step == chosen and ck.meta["final"]["sequences"] == 4
    assert ck.meta["data"]["split"]["train"] == 4  # its statistics are all four's
    assert C.load(tmp_path / "run", "validated", with_state=False).path.parent == \
        tmp_path / "run" / "checkpoints"


def test_the_command_says_so_and_a_stop_during_it_is_continued(tmp_path, capsys):
    classifier(tmp_path, solve="gradient", steps=20)
    assert main(["train", str(tmp_path / "shapes.json"), "--out", str(tmp_path / "run"),
                 "--device", "cpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "training again on all 4 training sequences (train + validation) for" in out
    assert "the final model, trained on all 4 training sequences, is the run's best" in out
    # a run whose final training was cut short goes on with it when continued
    (tmp_path / "run" / "final.json").unlink()
    assert main(["train", str(tmp_path / "shapes.json"), "--resume", str(tmp_path / "run"),
                 "--device", "cpu", "--quiet"]) == 0
    assert (tmp_path / "run" / "final.json").is_file()
    assert main(["evaluate", str(tmp_path / "run")]) == 0
    assert "model: trained again on all 4" in capsys.readouterr().out


def test_only_small_sets_of_labelled_sequences_train_one_by_default(tmp_path, monkeypatch):
    project = classifier(tmp_path)
    monkeypatch.setattr(final, "AUTO_BELOW", 4)  # 4 training sequences are not fewer
    assert not [r for r in run(project, tmp_path / "a") if r["kind"] == "final"]
    assert [r for r in run(project, tmp_path / "b", refit="on") if r["kind"] == "final"]
