"""Seed ensembles: ``evaluate RUN RUN2`` and ``predict RUN RUN2 --input FILE`` average the
runs' class probabilities (or forecasts), score the mean as one run's output is scored, give
each run's own score beside it, fit the peer once, and refuse runs of another task or data in
one sentence (exit 2)."""
import csv
import io
import json

import numpy as np
import pytest

from designer.training.trained import evaluate as E
from designer.training.trained.ensemble import evaluate_ensemble
from designer.training.trained.generate import load_trained
from tests.training.helpers import tiny_init_runs
from tests.training.trained.test_sequence_commands import one_line_exit_2, run, vowels_like, \
    weekly


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("classifiers")
    return tiny_init_runs(folder, vowels_like(folder), (1, 2))


@pytest.fixture(scope="module")
def forecasters(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("forecasters")
    return tiny_init_runs(folder, weekly(folder, 120), (1, 2), horizon=2)


@pytest.fixture
def counted_peers(monkeypatch) -> list[str]:
    """The peers replaced by a fixed score, each fit counted (fast, and without the extra)."""
    fits = []

    def classify(source, learn=None, peer="MiniRocket"):
        fits.append(f"classify {peer}")
        return {"name": peer, "accuracy": 0.5, "fitted_on": 1, "seconds": 0.0}

    def forecast(source, origins, learn=None):
        fits.append("forecast")
        pred = np.zeros((len(origins), source.horizon, len(source.targets)))
        return {"name": "AutoETS", "model": "ETS", "fitted_on": 1, "seconds": 0.0}, pred
    monkeypatch.setattr(E, "classify_peer", classify)
    monkeypatch.setattr(E, "forecast_peer", forecast)
    return fits


def probabilities(run_dir) -> np.ndarray:
    model = load_trained(run_dir, device="cpu")
    return E.classify_arrays(model, E.test_source(model))["probs"].astype(np.float64)


def test_a_classifier_ensemble_scores_the_mean_of_its_members_probabilities(
        classifiers, capsys, counted_peers):
    each = [probabilities(r) for r in classifiers]
    assert not np.allclose(each[0], each[1])  # two seeds, two models
    mean = (each[0] + each[1]) / 2
    report = evaluate_ensemble(classifiers, peer=False)
    truth = np.array([["up", "flat", "down"].index(c) for c in ["up", "flat", "down"] * 5])
    confusion = np.zeros((3, 3), int)
    np.add.at(confusion, (truth, mean.argmax(1)), 1)
    assert report["confusion"] == confusion.tolist()
    assert report["accuracy"] == pytest.approx(np.mean(mean.argmax(1) == truth))

    code, out, err = run(capsys, "evaluate", *classifiers, "--json")
    assert code == 0, err
    scored = json.loads(out)
    # each peer is fitted once, not once a run
    assert counted_peers == ["classify MiniRocket", "classify MultiRocket-Hydra"]
    assert scored["accuracy"] == report["accuracy"] and scored["n"] == 15
    assert {"confusion", "per_class_accuracy", "peer", "file", "checkpoint_step"} <= set(scored)
    for r, member in zip(classifiers, scored["members"]):
        code, out, _ = run(capsys, "evaluate", r, "--json")
        single = json.loads(out)
        assert "members" not in single
        assert member == {"run_dir": r, "accuracy": single["accuracy"], "checkpoint_step": 12}

    code, out, err = run(capsys, "evaluate", *classifiers)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "ensemble of 2 runs, their class probabilities averaged; each run alone:"
    for r, line, m in zip(classifiers, lines[1:3], scored["members"]):
        assert r in line and f"accuracy {m['accuracy']:.2%}" in line
    assert f"accuracy {scored['accuracy']:.2%} over 15 sequences" in lines[3]


def test_predict_writes_the_mean_of_the_members_probabilities(classifiers, tmp_path, capsys):
    test_file = f"{classifiers[0].rsplit('/', 1)[0]}/Toy_TEST.ts"
    tables = []
    for runs in ([classifiers[0]], [classifiers[1]], classifiers):
        code, out, err = run(capsys, "predict", *runs, "--input", test_file)
        assert code == 0, err
        tables.append(list(csv.DictReader(io.StringIO(out))))
    p = [np.array([[float(row[f"p_{c}"]) for c in ("up", "flat", "down")] for row in t])
         for t in tables]
    assert np.allclose(p[2], (p[0] + p[1]) / 2, atol=1.5e-4)  # written to 4 decimals
    exact = (probabilities(classifiers[0]) + probabilities(classifiers[1])) / 2
    assert np.allclose(p[2], exact, atol=5.1e-5)
    assert [r["predicted"] for r in tables[2]] == \
        [("up", "flat", "down")[k] for k in exact.argmax(1)]
    code, out, err = run(capsys, "predict", *classifiers, "--input", test_file, "--out",
                         tmp_path / "p.csv")
    assert code == 0, err
    assert f"by the ensemble of 2 runs ({classifiers[0]}, {classifiers[1]})" in out
    assert "each run alone: " in out


def test_a_forecaster_ensemble_averages_the_predictions(forecasters, capsys, counted_peers):
    arrays = [E.forecast_arrays(m, E.test_source(m))
              for m in (load_trained(r, device="cpu") for r in forecasters)]
    mean = (arrays[0]["pred"] + arrays[1]["pred"]) / 2
    code, out, err = run(capsys, "evaluate", *forecasters, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert counted_peers == ["forecast"]
    expected = E.error_scores(mean, arrays[0]["truth"], arrays[0]["mask"])
    assert report["rmse"] == pytest.approx(expected["rmse"])
    assert report["mae"] == pytest.approx(expected["mae"])
    for a, r, member in zip(arrays, forecasters, report["members"]):
        own = E.error_scores(a["pred"], a["truth"], a["mask"])
        assert member["run_dir"] == r and member["rmse"] == pytest.approx(own["rmse"])
        assert member["mae"] == pytest.approx(own["mae"])
    code, out, err = run(capsys, "evaluate", *forecasters)
    assert code == 0, err
    assert out.startswith("ensemble of 2 runs, their forecasts averaged; each run alone:")
    assert "ensemble of 2        RMSE" in out

    data = f"{forecasters[0].rsplit('/', 1)[0]}/sales.csv"
    rows = []
    for runs in ([forecasters[0]], [forecasters[1]], forecasters):
        code, out, err = run(capsys, "predict", *runs, "--input", data)
        assert code == 0, err
        rows.append([r for r in csv.reader(io.StringIO(out)) if r[1] == "forecast"])
    values = [np.array([float(r[2]) for r in t]) for t in rows]
    assert len(values[2]) == 2 and not np.allclose(values[0], values[1])
    assert np.allclose(values[2], (values[0] + values[1]) / 2, rtol=2e-5)
    assert [r[0] for r in rows[2]] == [r[0] for r in rows[0]]


def test_runs_of_other_classes_or_another_task_are_refused_in_one_sentence(
        classifiers, forecasters, tmp_path, capsys):
    vowels_like(tmp_path)
    for name in ("TRAIN", "TEST"):  # the same sequences, another name for a class
        (tmp_path / f"Two_{name}.ts").write_text(
            (tmp_path / f"Toy_{name}.ts").read_text().replace("up", "rise"))
    other = tmp_path / "Two_TRAIN.ts"
    odd = tiny_init_runs(tmp_path, other, (1,))[0]
    err = one_line_exit_2(capsys, "evaluate", classifiers[0], odd,
                          must=(odd, "classes rise, flat, down, not up, flat, down"))
    assert classifiers[0] in err
    one_line_exit_2(capsys, "predict", classifiers[0], odd, "--input", other, must=(odd,))
    one_line_exit_2(capsys, "evaluate", *forecasters, classifiers[1],
                    must=(classifiers[1], "must share one task"))
    one_line_exit_2(capsys, "evaluate", classifiers[0], classifiers[0],
                    must=("is given twice",))
