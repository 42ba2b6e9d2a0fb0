"""Strong non-deep peers beside every evaluation: MiniRocket and MultiRocket-Hydra beside a
classifier (the better named), AutoETS beside a forecaster, scored on the same test split;
without the extra, one line on how to get it; a peer that fails, one sentence, and the rest of
the report stands."""
import builtins
import json
from pathlib import Path

import numpy as np
import pytest

from designer.cli import main
from designer.graph.project import load
from designer.training.data import open_source
from designer.training.new_from_data.init import init_project
from designer.training.trained import peers
from designer.training.trained.evaluate import error_scores, evaluate_run, format_report
from tests.conftest import need_data
from tests.training.helpers import tiny_init_run
from tests.training.trained import test_sequence_commands as sequence_commands

pytest.importorskip("aeon")
pytest.importorskip("statsforecast")


def two_classes(folder, lengths=(12, 30)) -> str:
    """A TRAIN/TEST .ts pair of two classes (a bump early or late), lengths drawn from
    ``lengths`` (one value: all of one length)."""
    rng = np.random.default_rng(3)
    for name, n in (("Bumps_TRAIN.ts", 30), ("Bumps_TEST.ts", 20)):
        lines = ["@problemName bumps", "@univariate true",
                 f"@equalLength {'true' if lengths[0] == lengths[-1] else 'false'}",
                 "@classLabel true early late", "@data"]
        for i in range(n):
            label = ("early", "late")[i % 2]
            length = int(rng.integers(lengths[0], lengths[-1] + 1))
            t = np.arange(length) / length
            centre = 0.25 if label == "early" else 0.75
            x = np.exp(-((t - centre) / 0.08) ** 2) + rng.normal(0, 0.1, length)
            lines.append(",".join(f"{v:.3f}" for v in x) + f":{label}")
        (folder / name).write_text("\n".join(lines) + "\n")
    return str(folder / "Bumps_TRAIN.ts")


def weekly(folder, rows=200) -> str:
    """A weekly table with a trend and a yearly season (the sequence commands' own)."""
    return sequence_commands.weekly(folder, rows)


def source_of(data, folder, **init):
    init.setdefault("head", "adam")  # not cross-validated: the data is what is looked at
    path, _ = init_project(data, out=folder / f"{Path(data).stem}.json", **init)
    project = load(path)
    layer = project.graph.layer(project.graph.sources()[0])
    return open_source(layer, path.parent)




@pytest.fixture(scope="module")
def classifier(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("classifier")
    return tiny_init_run(folder, two_classes(folder))


@pytest.fixture(scope="module")
def forecaster(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("forecaster")
    return tiny_init_run(folder, weekly(folder), horizon=2)


def hide_peer_packages(monkeypatch):
    real = builtins.__import__

    def refuse(name, *args, **kw):
        if name.split(".")[0] in ("aeon", "statsforecast"):
            raise ModuleNotFoundError(f"No module named '{name.split('.')[0]}'")
        return real(name, *args, **kw)
    monkeypatch.setattr(builtins, "__import__", refuse)


# --------------------------------------------------------------------- the peers alone --
def test_minirocket_pads_sequences_of_different_lengths_and_tells_the_classes_apart(
        tmp_path):
    source = source_of(two_classes(tmp_path, (6, 30)), tmp_path)
    peer = peers.classify_peer(source)
    assert peer["name"] == "MiniRocket" and peer["n"] == 20
    assert peer["fitted_on"] == 30          # the sequences the run trains and validates on
    assert peer["length"] == 30 and peer["accuracy"] >= 0.9 and peer["seconds"] > 0
    again = peers.classify_peer(source)    # a fixed seed: the same answer
    assert again["accuracy"] == peer["accuracy"]


def test_multirocket_hydra_pads_sequences_of_different_lengths_as_minirocket_does(tmp_path):
    source = source_of(two_classes(tmp_path, (6, 30)), tmp_path)
    peer = peers.classify_peer(source, peer="MultiRocket-Hydra")
    assert peer["name"] == "MultiRocket-Hydra" and peer["n"] == 20
    assert peer["fitted_on"] == 30 and peer["length"] == 30 and peer["accuracy"] >= 0.9


def test_minirocket_takes_sequences_of_one_length_as_they_are(tmp_path):
    source = source_of(two_classes(tmp_path, (40,)), tmp_path)
    peer = peers.classify_peer(source)
    assert peer["length"] is None and peer["accuracy"] >= 0.9


def test_autoets_forecasts_the_same_windows_as_the_model(tmp_path):
    source = source_of(weekly(tmp_path), tmp_path, horizon=3)
    origins = source.origins("test")
    info, pred = peers.forecast_peer(source, origins)
    assert pred.shape == (len(origins), 3, 1) and np.isfinite(pred).all()
    assert info["name"] == "AutoETS" and info["season"] == 52 and "MSTL(52)" in info["model"]
    assert info["fitted_on"] == source.bounds["test"][0]   # never a test row
    truth, mask = source.truth(origins)
    mine = error_scores(pred, truth, mask)["rmse"]
    persistence = error_scores(source.baseline(origins, "persistence"), truth, mask)["rmse"]
    assert 0 < mine < persistence   # a seasonal series: the peer keeps the season


def test_autoets_forecasts_each_target_of_a_table(tmp_path):
    rng = np.random.default_rng(2)
    lines = ["month,a,b"]
    for i in range(120):
        month = f"{2000 + i // 12}-{i % 12 + 1:02d}-01"
        a = 10 + np.sin(2 * np.pi * i / 12) + rng.normal(0, 0.1)
        lines.append(f"{month},{a:.3f},{5 + 0.1 * i + rng.normal(0, 0.2):.3f}")
    (tmp_path / "two.csv").write_text("\n".join(lines) + "\n")
    source = source_of(str(tmp_path / "two.csv"), tmp_path, target="a,b", horizon=2)
    info, pred = peers.forecast_peer(source, source.origins("test"))
    assert pred.shape == (len(source.origins("test")), 2, 2) and np.isfinite(pred).all()
    assert info["season"] == 12     # a season ETS keeps itself


def test_too_much_for_a_peer_is_one_sentence(tmp_path, monkeypatch):
    source = source_of(weekly(tmp_path), tmp_path)
    monkeypatch.setattr(peers, "MAX_ETS_STEPS", 100)
    report = peers.peer_beside({"task": "forecast", "rmse": 1.0},
                               lambda: peers.forecast_peer(source, source.origins("test"))[0])
    assert report["peer"]["error"].startswith("AutoETS could not be scored here (running it")
    classes = source_of(two_classes(tmp_path), tmp_path)
    monkeypatch.setattr(peers, "MAX_FIT_SEQUENCES", 12)
    peer = peers.classify_peer(classes)
    assert peer["fitted_on"] == 12 and "12 of the 30 training sequences" in peer["note"]
    assert "drawn at random" in peers.peer_words(peer, "classify", long=True)


# ------------------------------------------------------------------ beside evaluations --
def test_evaluate_puts_minirocket_beside_a_classifier(classifier, capsys):
    report = evaluate_run(classifier)
    peer = report["peer"]
    assert peer["name"] == "MiniRocket" and peer["n"] == report["n"]
    assert peer["ratio"] == pytest.approx(report["accuracy"] / peer["accuracy"])
    text = format_report(report)
    assert f"MiniRocket (non-deep peer): accuracy {peer['accuracy']:.2%}" in text
    assert "model / peer accuracy" in text
    assert main(["evaluate", classifier, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["peer"]["name"] == "MiniRocket"


def test_evaluate_names_the_better_of_minirocket_and_multirocket_hydra(classifier, capsys,
                                                                      monkeypatch):
    report = evaluate_run(classifier)
    both = report["peers"]
    assert [p["name"] for p in both] == ["MiniRocket", "MultiRocket-Hydra"]
    assert report["peer"] is max(both, key=lambda p: p["accuracy"])
    tie = both[0]["accuracy"] == both[1]["accuracy"]
    assert sum(bool(p.get("better")) for p in both) == (0 if tie else 1)
    text = format_report(report)
    assert all(f"{p['name']} (non-deep peer" in text for p in both)
    if not tie:
        assert f"{report['peer']['name']} (non-deep peer, the better): accuracy" in text
    marked = peers.peer_beside({"task": "classify", "accuracy": 0.8}, lambda: [
        {"name": "MiniRocket", "accuracy": 0.9}, {"name": "MultiRocket-Hydra",
                                                  "accuracy": 0.95}])
    assert marked["peer"]["name"] == "MultiRocket-Hydra" and marked["peer"]["better"]
    assert marked["peer"]["ratio"] == pytest.approx(0.8 / 0.95)
    # one that fails is said, and the other still stands beside the model
    real = peers.classify_peer
    monkeypatch.setattr("designer.training.trained.evaluate.classify_peer",
                        lambda *a, peer, **k: real(*a, peer=peer, **k) if peer ==
                        "MiniRocket" else (_ for _ in ()).throw(ValueError("too short")))
    report = evaluate_run(classifier)
    assert report["peer"]["name"] == "MiniRocket" and "better" not in report["peer"]
    assert report["peers"][1] == {"name": "MultiRocket-Hydra", "error":
                                  "MultiRocket-Hydra could not be scored here (too short)"}


def test_evaluate_puts_autoets_beside_a_forecaster(forecaster):
    report = evaluate_run(forecaster)
    peer = report["peer"]
    assert peer["name"] == "AutoETS" and peer["rmse"] > 0 and peer["mae"] > 0
    assert peer["ratio"] == pytest.approx(report["rmse"] / peer["rmse"])
    text = format_report(report)
    assert "AutoETS (peer)" in text and f"RMSE {peer['rmse']:.4g}" in text
    assert "model / peer RMSE" in text and "rows before the test split" in text
    assert [b["name"] for b in report["baselines"]] != []    # the baselines stay


def test_scoring_another_file_the_peer_learns_from_the_runs_own(forecaster, tmp_path):
    other = weekly(tmp_path, rows=120)
    report = evaluate_run(forecaster, other)
    assert report["split"] == "all" and report["peer"]["name"] == "AutoETS"
    assert report["peer"]["fit_file"].endswith("sales.csv") and report["peer"]["rmse"] > 0


def test_without_the_extra_the_report_says_how_to_get_it(classifier, forecaster,
                                                          monkeypatch, capsys):
    hide_peer_packages(monkeypatch)
    for run in (classifier, forecaster):
        report = evaluate_run(run)
        assert report["peer"] == {"missing": peers.MISSING}
        assert main(["evaluate", run]) == 0
        out = capsys.readouterr()
        assert "pip install 'rnn-designer[peers]'" in out.out and "Traceback" not in out.err
        assert out.out.count("rnn-designer[peers]") == 1


def test_a_peer_that_fails_is_one_sentence_and_the_report_stands(classifier, monkeypatch):
    def broken(*_, **__):
        raise ValueError("kernels\nand more")
    monkeypatch.setattr("designer.training.trained.evaluate.classify_peer", broken)
    report = evaluate_run(classifier)
    assert report["peer"] == {"name": "MiniRocket",
                              "error": "MiniRocket could not be scored here (kernels)"}
    text = format_report(report)
    assert "peer: MiniRocket could not be scored here (kernels)" in text
    assert text.startswith(report["file"]) and "per class" in text


# ------------------------------------------------------------------------- public data --
@need_data("ucr/GunPoint_TRAIN.ts", "ucr/GunPoint_TEST.ts")
def test_minirocket_on_gunpoint(data_dir, tmp_path):
    source = source_of(data_dir / "ucr" / "GunPoint_TRAIN.ts", tmp_path)
    peer = peers.classify_peer(source)
    assert peer["n"] == 150 and peer["fitted_on"] == 50
    assert peer["accuracy"] >= 0.95      # MiniRocket: about 0.99 here
    report = peers.peer_beside({"task": "classify", "accuracy": 0.9}, lambda: peer)
    assert "MiniRocket (non-deep peer): accuracy" in peers.peer_words(report["peer"],
                                                                     "classify", long=True)


@need_data("co2_weekly.csv")
def test_autoets_on_the_co2_table(data_dir, tmp_path):
    source = source_of(data_dir / "co2_weekly.csv", tmp_path)
    origins = source.origins("test")
    info, pred = peers.forecast_peer(source, origins)
    truth, mask = source.truth(origins)
    scores = error_scores(pred, truth, mask)
    persistence = error_scores(source.baseline(origins, "persistence"), truth, mask)
    assert 0 < scores["rmse"] < persistence["rmse"]
    line = peers.peer_words({**info, **scores, "ratio": None}, "forecast", long=True)
    assert line.startswith("  AutoETS (peer)") and f"RMSE {scores['rmse']:.4g}" in line
