"""Forecasting windows over a table: chronological splits, statistics from the training rows
only, gaps mended as asked, labels that turn back into the target's units, baselines, exact
resume, and one sentence for each kind of bad table."""
import os
import warnings

import numpy as np
import pytest
import torch

from designer.training.data import open_source
from designer.training.data.series import SeriesSource
from designer.training.new_from_data.init import InitError, init_project
from designer.training.new_from_data.preview import PreviewError, read_head

from tests.training.helpers import (held_out_as_plain, layer, refused, same_batches,
                                    save_and_load)

DATA = os.environ.get("RNN_DESIGNER_DATA", "")
CO2 = os.path.join(DATA, "co2_weekly.csv")
needs_data = pytest.mark.skipif(not os.path.exists(CO2), reason="RNN_DESIGNER_DATA not set")


def series(tmp_path, rows: int = 120, name: str = "s.csv", gap_at=None) -> str:
    """A weekly table: a trend plus a yearly wave, and a second column."""
    import datetime as dt
    start = dt.date(2000, 1, 1)
    lines = ["date,level,other"]
    for i in range(rows):
        day = start + dt.timedelta(weeks=i)
        level = "" if i == gap_at else f"{100 + 0.1 * i + np.sin(2 * np.pi * i / 52):.4f}"
        lines.append(f"{day.isoformat()},{level},{i % 7}")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def source(path, **params) -> SeriesSource:
    if str(path).endswith(".csv"):
        params.setdefault("target", "level")
    return open_source(layer("TimeSeries", file=str(path), **params), seed=3)


def test_windows_and_labels_line_up_in_time(tmp_path):
    s = source(series(tmp_path), seq_len=8, horizon=3, target="level", predict="level",
               normalize=False, batch_size=4)
    assert s.inputs == ["level", "other"] and s.time_column == "date"
    assert s.period == 52  # weekly dates: the same week a year before
    origin = s.origins("train")[0]
    b = s.window_batch([origin])
    assert b["data"].shape == (8, 1, 2) and b["label"].shape == (1, 3, 1)
    assert np.allclose(b["data"][:, 0, 0].numpy(), s.y[origin - 7:origin + 1, 0])
    assert np.allclose(b["label"][0, :, 0].numpy(), s.y[origin + 1:origin + 4, 0])


def test_splits_follow_time_and_statistics_come_from_training_rows_only(tmp_path):
    s = source(series(tmp_path, 200), seq_len=10, horizon=2, val_fraction=0.2,
               test_fraction=0.2)
    assert s.bounds == {"train": (0, 120), "val": (120, 160), "test": (160, 200)}
    for split in ("train", "val", "test"):
        lo, hi = s.bounds[split]
        o = s.origins(split)
        assert o.min() + 1 >= lo and o.max() + 2 < hi  # every forecast row inside the split
    assert np.allclose(s.stats["x_mean"][0], s.y[:120, 0].mean())
    assert np.allclose(s.stats["y_std"][0], s.y[:120, 0].std())


@pytest.mark.parametrize("predict", ["level", "change", "season"])
def test_labels_turn_back_into_the_targets_units(tmp_path, predict):
    s = source(series(tmp_path, 200), seq_len=8, horizon=4, predict=predict)
    o = s.origins("test")
    label = s.window_batch(o)["label"].numpy()
    assert np.allclose(s.to_units(label, o), s.truth(o)[0], atol=1e-4)
    data = s.window_batch(o)["data"].numpy()
    if predict == "change":  # the target's history is told relative to its last value
        assert np.allclose(data[-1, :, 0], 0.0)
    if predict == "season":  # ... or to its value one season before, step by step
        std = s.stats["x_std"][0]
        assert np.allclose(data[-1, :, 0] * std, s.y[o, 0] - s.y[o - 52, 0], atol=1e-4)
        assert s.origins("train")[0] == 8 - 1 + 52  # a season of history before the window
        assert np.allclose(s.to_units(np.zeros_like(label), o), s.baseline(o, "seasonal_naive"))


def test_a_season_is_needed_to_forecast_from_one(tmp_path):
    f = tmp_path / "a.npy"
    np.save(f, np.arange(300.0))
    refused(layer("TimeSeries", file=str(f), predict="season"), f, "has no season")
    assert source(f, predict="season", season=12).period == 12


def test_the_baselines_look_back_one_season_or_one_step(tmp_path):
    s = source(series(tmp_path, 200), seq_len=60, horizon=3)
    o = s.origins("test")[:2]
    naive = s.baseline(o, "seasonal_naive")
    assert np.allclose(naive[:, :, 0], [s.y[t + 1 - 52:t + 4 - 52, 0] for t in o])
    assert np.allclose(s.baseline(o, "persistence")[:, :, 0], [[s.y[t, 0]] * 3 for t in o])


def test_gaps_are_interpolated_dropped_or_named(tmp_path):
    f = series(tmp_path, gap_at=30)
    s = source(f, seq_len=8, missing="interpolate")
    assert np.isclose(s.y[30, 0], (s.y[29, 0] + s.y[31, 0]) / 2, atol=1e-3)
    assert "1 empty cell filled in linearly" in s.notes[0]
    _, seen = s.truth(np.array([29]))
    assert not seen[0, 0, 0]  # the filled-in cell is not scored
    assert len(source(f, seq_len=8, missing="drop").y) == 119
    refused(layer("TimeSeries", file=f, missing="error"), f,
            "row 31 (line 32), column 'level' is empty", "set the data layer's missing")


@needs_data
def test_the_co2_series_names_its_first_empty_cell():
    text = refused(layer("TimeSeries", file=CO2, missing="error"), CO2, "is empty")
    with open(CO2) as f:
        rows = f.read().splitlines()[1:]
    first = next(i for i, r in enumerate(rows) if r.endswith(","))
    assert f"row {first + 1} (line {first + 2}), column 'co2'" in text
    assert "59 empty cells" in text


def test_bad_tables_get_one_sentence(tmp_path):
    words = tmp_path / "words.csv"
    words.write_text("name,colour\nada,red\nbob,blue\n")
    refused(layer("TimeSeries", file=str(words)), words, "has no numeric column")
    f = series(tmp_path, 60)
    refused(layer("TimeSeries", file=f, target="price"), f,
            "has no column 'price' for the target")
    refused(layer("TimeSeries", file=f, seq_len=52, horizon=4), f,
            "holds 60 rows, of which 42 train", "lower seq_len or horizon")
    text = tmp_path / "text.csv"
    text.write_text("t,v\n1,2\n2,3\n3,abc\n" + "".join(f"{i},{i}\n" for i in range(4, 300)))
    refused(layer("TimeSeries", file=str(text), seq_len=4), text,
            "row 3 (line 4), column 'v' holds 'abc', which is not a number")


def scaled(tmp_path, values, name: str = "big.csv") -> str:
    """A table of one column, ``value``, holding these values."""
    p = tmp_path / name
    p.write_text("step,value\n" + "".join(f"{i},{v!r}\n" for i, v in enumerate(values)))
    return str(p)


def wave(rows: int = 200) -> np.ndarray:
    return 2 + np.sin(np.arange(rows) / 5)


def test_values_too_large_to_normalise_name_the_column_and_warn_nothing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warnings would fail the test
        f = scaled(tmp_path, (wave() * 0.5e308).tolist())
        refused(layer("TimeSeries", file=f, seq_len=8), f,
                "column 'value' holds values up to 1.5e+308, too large to normalise (their "
                "spread overflows); rescale the column")
        f = scaled(tmp_path, (wave() * 1e200).tolist(), "e200.csv")  # its squares overflow
        refused(layer("TimeSeries", file=f, seq_len=8), f, "spread overflows")
        # without normalising, the values themselves are more than float32 holds
        f = scaled(tmp_path, (wave() * 1.5e38).tolist(), "e38.csv")
        refused(layer("TimeSeries", file=f, seq_len=8, normalize=False), f,
                "column 'value' holds values up to 4.5e+38", "normalize on")
        # the training rows' spread is small, and the last rows are far beyond it
        values = wave().tolist()
        values[-5:] = [3e38] * 5
        f = scaled(tmp_path, values, "late.csv")
        refused(layer("TimeSeries", file=f, seq_len=8), f,
                "holds values up to 3e+38, too large to normalise by the spread of the "
                "training rows")


def test_large_values_with_a_finite_spread_normalise_and_train(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = source(scaled(tmp_path, (wave() * 1e30).tolist()), target="value", seq_len=8)
        assert np.isfinite(s.stats["x_std"]).all() and 0.5e30 < s.stats["y_std"][0] < 1e30
        b = s.next_batch()
        assert torch.isfinite(b["data"]).all() and torch.isfinite(b["label"]).all()
        assert float(b["data"].abs().max()) < 10


def test_a_npy_array_is_a_table_too(tmp_path):
    f = tmp_path / "a.npy"
    np.save(f, np.stack([np.arange(100.0), np.arange(100.0) ** 0.5], 1))
    s = source(f, seq_len=5, horizon=2)
    assert s.inputs == ["col1", "col2"] and s.targets == ["col2"] and s.period == 0


def test_resume_draws_the_same_windows(tmp_path):
    f = series(tmp_path, 150)
    a = source(f, seq_len=6, batch_size=8)
    for _ in range(13):  # past the end of a pass
        a.next_batch()
    state = save_and_load(a.state_dict(), tmp_path)
    want = [a.next_batch() for _ in range(5)]
    b = source(f, seq_len=6, batch_size=8)
    b.load_state_dict(state)
    assert same_batches([b.next_batch() for _ in range(5)], want)


# ------------------------------------------------------------ augmentation (issue 25) --
AUGMENTED = {"jitter": 0.1, "scaling": 0.2, "window_slice": 0.7}


def test_augmentation_is_off_by_default_and_off_changes_nothing(tmp_path):
    f = series(tmp_path, 150)
    plain = source(f, seq_len=6, batch_size=8)
    off = source(f, seq_len=6, batch_size=8, jitter=0.0, scaling=0.0, window_slice=1.0)
    assert not plain.augmentation.active
    assert same_batches([plain.next_batch() for _ in range(15)],
                        [off.next_batch() for _ in range(15)])
    assert "augment" not in plain.state_dict()


def test_augmented_training_windows_vary_the_same_way_for_the_same_seed(tmp_path):
    f = series(tmp_path, 150)
    plain, a, b = (source(f, seq_len=6, batch_size=8, **p) for p in ({}, AUGMENTED, AUGMENTED))
    for _ in range(10):
        p, x, y = plain.next_batch(), a.next_batch(), b.next_batch()
        assert same_batches([x], [y])
        assert not torch.equal(x["data"], p["data"])
        assert torch.equal(x["label"], p["label"])  # the forecast is what it was


def test_a_window_slice_ends_where_the_forecast_starts(tmp_path):
    f = series(tmp_path, 150)
    params = dict(seq_len=10, batch_size=8, predict="level", inputs="other", target="level")
    plain, cut = source(f, **params), source(f, window_slice=0.5, **params)
    for _ in range(5):
        p, c = plain.next_batch()["data"], cut.next_batch()["data"]
        assert torch.allclose(c[-1], p[-1])  # the last step seen is kept as it was
        assert not torch.allclose(c, p)


def test_held_out_windows_are_never_augmented(tmp_path):
    f = series(tmp_path, 200)
    plain, aug = source(f, seq_len=6, batch_size=4), source(f, seq_len=6, batch_size=4,
                                                            **AUGMENTED)
    assert held_out_as_plain(aug, plain)


def test_a_resumed_augmented_run_draws_what_an_uninterrupted_one_would(tmp_path):
    f = series(tmp_path, 150)
    a = source(f, seq_len=6, batch_size=8, **AUGMENTED)
    for _ in range(13):  # past the end of a pass
        a.next_batch()
    state = save_and_load(a.state_dict(), tmp_path)
    want = [a.next_batch() for _ in range(5)]
    b = source(f, seq_len=6, batch_size=8, **AUGMENTED)
    b.load_state_dict(state)
    assert same_batches([b.next_batch() for _ in range(5)], want)
    old = {k: v for k, v in state.items() if k != "augment"}  # a checkpoint from before
    c = source(f, seq_len=6, batch_size=8, **AUGMENTED)
    c.next_batch()
    c.load_state_dict(old)  # resumes its place and varies from the seed's first draw
    fresh = source(f, seq_len=6, batch_size=8, **AUGMENTED).augmentation.generator
    assert torch.equal(c.augmentation.generator.get_state(), fresh.get_state())
    assert torch.equal(c.next_batch()["label"], want[0]["label"])


@pytest.mark.timeout(10)
def test_a_named_pipe_is_refused_at_once_not_waited_on(tmp_path):
    pipe = tmp_path / "live.csv"
    os.mkfifo(pipe)  # no writer ever comes: reading it would wait for ever
    refused(layer("TimeSeries", file=str(pipe)), pipe, "is a named pipe, not a regular file")
    with pytest.raises(InitError, match="live.csv is a named pipe, not a regular file"):
        init_project(pipe, out=tmp_path / "p.json")
    with pytest.raises(PreviewError, match="live.csv is a named pipe, not a regular file"):
        read_head(pipe)
