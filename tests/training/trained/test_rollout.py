"""The forecast view of a run: the test split's forecasts with evaluate's numbers, and a roll-out
that feeds each horizon's forecasts back as the history of the next."""
import datetime as dt

import numpy as np
import pytest

from designer.training.trained import rollout
from designer.training.data.series import SeriesSource

PARAMS = {"target": "sales", "inputs": "", "time_column": "", "seq_len": 6, "horizon": 3,
          "stride": 1, "batch_size": 8, "val_fraction": 0.15, "test_fraction": 0.15,
          "normalize": True, "predict": "change", "missing": "interpolate", "season": 0}


def table(tmp_path, rows=120, with_temp=False, dates=True):
    rng = np.random.default_rng(0)
    head = ["week"] + (["temp"] if with_temp else []) + ["sales"]
    lines = [",".join(head)]
    for i in range(rows):
        when = str(dt.date(2010, 1, 3) + dt.timedelta(weeks=i)) if dates else str(1990 + i)
        temp = [f"{10 + rng.normal():.3f}"] if with_temp else []
        lines.append(",".join([when] + temp + [f"{50 + 8 * np.sin(i / 8.3):.3f}"]))
    path = tmp_path / "sales.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def steady_rise(model, source, batch):
    """A stand-in net that forecasts +1 deviation at every step ahead (as a change)."""
    import torch
    n = batch["data"].shape[1]
    return torch.ones(n, source.horizon * len(source.targets))


def test_a_roll_out_feeds_each_horizon_back_as_history(tmp_path, monkeypatch):
    monkeypatch.setattr(rollout, "outputs", steady_rise)
    source = SeriesSource(table(tmp_path), PARAMS)
    std = source.stats["y_std"][0]
    origin = int(source.origins("test")[0])
    out = rollout.roll_out(None, source, origin, rounds=4)
    assert out["origin"] == origin and out["values"].shape == (12, 1)
    # each horizon starts from the last value of the one before, not from the file's
    expected = source.y[origin, 0] + std * np.repeat(np.arange(1, 5), 3)
    assert np.allclose(out["values"][:, 0], expected)
    assert list(out["rows"]) == list(range(origin + 1, origin + 13))
    truth = source.y[origin + 1:origin + 13, 0]
    assert np.allclose(out["truth"][:, 0], truth)
    assert out["rmse"][0] == pytest.approx(np.sqrt(np.mean((expected - truth) ** 2)))
    assert out["note"] is None


def test_a_roll_out_of_a_net_that_reads_only_its_targets_goes_past_the_files_end(
        tmp_path, monkeypatch):
    monkeypatch.setattr(rollout, "outputs", steady_rise)
    source = SeriesSource(table(tmp_path), PARAMS)
    last = len(source.x) - 1
    out = rollout.roll_out(None, source, 10**6, rounds=2)  # clamped to the last row
    assert out["origin"] == last and list(out["rows"]) == list(range(last + 1, last + 7))
    assert np.isnan(out["truth"]).all() and out["rmse"] == [None]
    axis, is_date = rollout.time_axis(source)
    week = 7 * 86400.0
    assert is_date and np.allclose(out["x"], axis[-1] + week * np.arange(1, 7))


def test_a_roll_out_stops_at_the_files_end_when_the_net_reads_an_input_it_does_not_forecast(
        tmp_path, monkeypatch):
    monkeypatch.setattr(rollout, "outputs", steady_rise)
    source = SeriesSource(table(tmp_path, with_temp=True), PARAMS)
    assert source.inputs == ["temp", "sales"]
    last = len(source.x) - 1
    out = rollout.roll_out(None, source, last - 7, rounds=5)
    assert len(out["values"]) == 6  # two whole horizons fit before the end
    assert "stops at the file's end after 2 horizons" in out["note"] and "temp" in out["note"]


def test_the_time_axis_reads_dates_numbers_or_counts_rows(tmp_path):
    dated = SeriesSource(table(tmp_path), PARAMS)
    axis, is_date = rollout.time_axis(dated)
    assert is_date and axis[1] - axis[0] == 7 * 86400.0
    (tmp_path / "years").mkdir()
    years = SeriesSource(table(tmp_path / "years", dates=False), PARAMS)
    axis, is_date = rollout.time_axis(years)
    assert not is_date and axis[0] == 1990 and axis[-1] == 1990 + 119


def test_the_forecast_view_scores_as_evaluate_does(tmp_path):
    from designer.graph.project import load
    from designer.training.trained.evaluate import evaluate_run
    from designer.training.new_from_data.init import init_project
    from designer.training.run.loop import RunOptions, train
    path, _ = init_project(table(tmp_path), horizon=2, out=tmp_path / "p.json")
    project = load(path)
    project.graph.set_param("data", "seq_len", 8)
    project.graph.set_param("lstm1", "num_output", 8)
    project.solver["max_steps"] = 12
    project.training.update(eval_interval=6, checkpoint_interval=6, log_interval=3)
    for _ in train(project, RunOptions(out=tmp_path / "run", device="cpu", probe_steps=0)):
        pass
    view = rollout.forecast_view(tmp_path / "run", rounds=3)
    report = evaluate_run(tmp_path / "run")
    assert view["report"]["rmse"] == pytest.approx(report["rmse"])
    assert [b["rmse"] for b in view["report"]["baselines"]] == \
        pytest.approx([b["rmse"] for b in report["baselines"]])
    n = report["n"]
    assert view["pred"].shape == (n, 2, 1) and view["origins"].shape == (n,)
    assert view["lead_rmse"].shape == (2, 1) and set(view["lead_baseline_rmse"]) == \
        {"seasonal_naive", "persistence"}
    # the roll-out's first horizon is the plain forecast from the same origin
    ro = view["rollout"]
    assert ro["origin"] == view["origins"][0] and ro["values"].shape == (6, 1)
    assert np.allclose(ro["values"][:2, 0], view["pred"][0, :, 0])
    lo, hi = view["splits"]["test"]
    assert hi == len(view["y"]) and view["origins"][0] == lo - 1
    again = rollout.forecast_view(tmp_path / "run", rounds=1, origin=lo + 5, scores=False)
    assert "report" not in again and again["rollout"]["origin"] == lo + 5
