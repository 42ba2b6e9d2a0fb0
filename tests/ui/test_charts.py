"""The charts: curves fed from growable buffers, runs compared on one chart (by step or by
wall-clock time), earlier runs added from their folders, and memory that stays flat."""
import math
import time

import numpy as np
import pytest
from PySide6.QtCore import Qt

from designer.ui.charts.chart_range import plan_x, plan_y
from designer.ui.charts.curves import compact
from designer.ui.runs.run import Run, RunError
from designer.ui.runs.run_list import new_run_dir
from designer.ui.runs.series import Series
from tests.ui.conftest import train_and_wait


# ----------------------------------------------------------------------------- the buffer --
def test_a_series_grows_in_place_and_keeps_its_order():
    s = Series(capacity=4)
    for i in range(1000):
        s.append(i, i / 10, 1000 - i)
    assert len(s) == 1000 and s.column("step")[-1] == 999 and s.column("value")[0] == 1000
    assert s.nbytes == 4 * 8 * 1024  # three columns and the smoothed copy, doubled to 1024
    with pytest.raises(ValueError):
        s.column("value")[0] = 1  # the charts get read-only views


def test_past_its_limit_a_series_thins_its_older_half_so_memory_stays_flat():
    s = Series(limit=1000)
    for i in range(100_000):
        s.append(i, i, math.sin(i))
    assert len(s) <= 1000 and s.nbytes <= 4 * 8 * 1000
    steps = s.column("step")
    assert steps[-1] == 99_999 and (np.diff(steps) > 0).all()  # still ordered, newest kept


def test_smoothing_is_kept_up_to_date_and_matches_a_fresh_computation():
    values = [4.0, 3.0, float("nan"), 2.0, 2.5, 1.0]
    live = Series()
    live.smoothed(0.6)
    for i, v in enumerate(values):
        live.append(i, i, v)
    late = Series()
    for i, v in enumerate(values):
        late.append(i, i, v)
    assert np.allclose(live.smoothed(0.6), late.smoothed(0.6))
    assert live.smoothed(0.6)[0] == 4.0  # debiased: the first point is not pulled to zero
    assert np.array_equal(late.smoothed(0), late.column("value"), equal_nan=True)


@pytest.mark.parametrize("value,spacing,text", [
    (150_000, 50_000, "150k"), (1_250_000, 250_000, "1.25M"), (12_000, 2_000, "12k"),
    (0.0015, 0.0005, "0.0015"), (0.0002, 0.0001, "2e-4"), (0.00025, 0.00005, "2.5e-4"),
    (3.5, 0.5, "3.5"), (100, 20, "100"),
    (0, 0.5, "0")])
def test_tick_labels_are_short(value, spacing, text):
    assert compact(value, spacing) == text


def test_ranges_leave_room_and_move_seldom():
    x = plan_x((10, 100), None)
    assert x[0] < 10 and x[1] == pytest.approx(127)        # 30 % room to grow into
    assert plan_x((10, 120), x) is None                     # still inside: no change
    assert plan_x((10, 140), x)[1] > 140                    # outgrown: a new range
    y = plan_y((2.0, 4.0), None)
    assert plan_y((2.1, 3.9), y) is None
    grown = plan_y((1.8, 4.0), y)                           # a new low: grows by a quarter
    assert grown[0] == pytest.approx(1.8 - 0.25 * 2.2) and grown[1] == y[1]
    assert plan_y((2.0, 2.1), y) is not None                # the data shrank: fit again


def test_run_folders_get_unique_names(tmp_path):
    when = time.mktime((2025, 1, 2, 3, 4, 5, 0, 0, -1))
    first = new_run_dir("char rnn/x", tmp_path, when)
    assert first.name == "char-rnn-x-20250102-030405"
    first.mkdir()
    assert new_run_dir("char rnn/x", tmp_path, when).name == "char-rnn-x-20250102-030405-2"


# --------------------------------------------------------------------------- comparing --
def legend_names(charts) -> list[str]:
    """The runs as the table under the plots names them (it is the plots' legend)."""
    rows = [charts.table.topLevelItem(i) for i in range(charts.table.topLevelItemCount())]
    return [" \u00b7 ".join(row.text(c) for c in range(3)) for row in rows]


def test_two_engines_side_by_side_on_one_chart(qtbot, tiny):
    w = tiny
    picker = w.training.engine_picker
    picker.select("cudnn")
    fused = train_and_wait(qtbot, w)
    picker.select("caffe")
    unrolled = train_and_wait(qtbot, w)
    charts = w.training.charts.panel
    charts.refresh()
    names = legend_names(charts)
    assert len(names) == 2 and "#1 tiny \u00b7 cuDNN \u00b7 CPU" in names[0]
    assert "#2 tiny \u00b7 unrolled \u00b7 CPU" in names[1]
    table = charts.table
    assert table.topLevelItemCount() == 2
    for row, run in enumerate((fused, unrolled)):
        item = table.topLevelItem(row)
        assert item.text(4) == f"{run.tokens_per_s():,.0f}"  # speed per run, side by side
        assert item.text(6) == "finished" and item.text(3) == "10 / 10"

    charts.x_axis.setCurrentIndex(1)  # wall-clock seconds
    x, _ = charts.curves[id(unrolled)].items["loss"].getData()
    assert np.array_equal(x, unrolled.series["loss"].column("time"))

    charts.units.setCurrentIndex(1)   # bits
    _, y = charts.curves[id(fused)].items["loss"].getData()
    assert np.allclose(y, fused.series["loss"].column("value") / math.log(2))

    charts.smoothing.setValue(60)
    _, y = charts.curves[id(fused)].items["loss"].getData()
    _, raw = charts.curves[id(fused)].items["loss_raw"].getData()
    assert len(y) == len(raw) == 5 and not np.allclose(y, raw)  # smoothed over faint raw

    charts.log_x.setChecked(True)
    assert charts.loss.ctrl.logXCheck.isChecked()

    table.topLevelItem(0).setCheckState(0, Qt.Unchecked)  # untick run #1: its curves hide
    assert not fused.visible and not charts.curves[id(fused)].items["loss"].isVisible()


def test_a_previous_run_folder_is_added_to_the_chart(qtbot, tiny, tmp_path):
    w = tiny
    run = train_and_wait(qtbot, w)
    w.training.runs.remove(run)
    assert w.training.charts.add_folder(str(run.run_dir))
    (added,) = list(w.training.runs)
    assert added.state == "loaded" and added.engines == {"lstm1": "CUDNN"}
    assert added.device == "cpu" and added.name == "tiny"
    assert len(added.series["loss"]) == 5 and len(added.series["val_loss"]) == 2
    assert added.best_val_loss == run.best_val_loss
    assert w.training.output.generate.current_run() is added  # it can write, too
    assert not w.training.charts.add_folder(str(tmp_path))    # no metrics.jsonl there
    assert "holds no training run" in w.notices[-1][1]


def test_a_run_reads_a_damaged_metrics_file(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        '{"kind": "train", "step": 10, "loss": 4.0, "lr": 0.1, "tokens_per_s": 100, '
        '"time": 1.0}\n{"kind": "train", "step": 20, "loss": nul\n'
        '{"kind": "val", "step": 20, "val_loss": 3.5, "best_val_loss": 3.5, "time": 2}\n')
    run = Run.from_folder(tmp_path, 3)
    assert len(run.series["loss"]) == 1 and run.best_val_loss == 3.5 and run.step == 20
    with pytest.raises(RunError):
        Run.from_folder(tmp_path / "missing", 4)


def test_reading_a_run_folder_clears_what_a_run_killed_mid_write_left(tmp_path):
    import os
    import time
    (tmp_path / "metrics.jsonl").write_text('{"kind": "train", "step": 10, "loss": 4.0}\n')
    left = tmp_path / ".last.json.k3j_9x2a.tmp"   # as an atomic write names its temporary
    mine = tmp_path / ".my notes.tmp"
    for f in (left, mine):
        f.write_text("{}")
        os.utime(f, (time.time() - 60,) * 2)
    Run.from_folder(tmp_path, 1)
    assert not left.exists() and mine.exists()


# ----------------------------------------------------------------------------- memory --
def test_a_curve_of_100000_points_draws_a_few_points_a_pixel_in_bounded_memory(qtbot, tiny):
    """Chart memory stays flat: 100,000 points live in numpy buffers (no object per point),
    and clipping plus peak downsampling keep what a redraw draws bounded by the width."""
    import tracemalloc
    w = tiny
    w.training.show_docks()
    charts = w.training.charts.panel
    run = Run(w.training.runs.next_number(), "long", None)
    w.training.runs.add(run)
    view = charts.loss_widget

    def feed(n, start=0):
        for i in range(start, start + n):
            run.add({"kind": "train", "step": i + 1, "loss": 3 + math.sin(i / 50), "lr": 1e-3,
                     "tokens_per_s": 5e4, "time": i * 0.01})

    def redraw_ms():
        times = []
        for _ in range(5):
            t = time.perf_counter()
            charts.refresh()
            view.repaint()
            times.append(time.perf_counter() - t)
            run.series["loss"].version += 1  # force the next redraw
        return 1e3 * sorted(times)[2]

    feed(1_000)
    small = redraw_ms()
    tracemalloc.start()
    feed(99_000, 1_000)
    grown, _ = tracemalloc.get_traced_memory()
    big = redraw_ms()
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"redraw {small:.1f} ms at 1,000 points, {big:.1f} ms at 100,000; buffers {grown / 2**20:.1f} MiB")
    assert len(run.series["loss"]) == 100_000
    assert grown < 16 * 2**20            # the buffers: 4 metrics x 4 columns x 8 B x 131,072
    assert after - grown < 4 * 2**20     # redraws add nothing that stays
    # What keeps a redraw cheap is what it draws: clipped and downsampled by peaks, a curve of
    # 100,000 points puts a few per pixel of width on screen (bench_charts.py times the redraw).
    item = charts.curves[id(run)].items["loss"]
    shown = len(item.curve.xData)
    assert 0 < shown <= 4 * max(view.width(), 1) < 100_000, shown


def test_a_forecaster_loss_is_never_shown_in_bits(qtbot, tiny):
    """nats or bits describe a cross-entropy; a forecaster's loss is a squared error, so the
    choice hides while only forecasters are charted and never rescales their loss."""
    tiny.training.show_docks()
    charts = tiny.training.charts.panel
    charts.units.setCurrentIndex(1)   # bits, chosen for a text model earlier
    series = {"graph": {"layers": [{"type": "TimeSeries"}]}}
    run = Run(tiny.training.runs.next_number(), "co2", series)
    tiny.training.runs.add(run)
    for i in range(5):
        run.add({"kind": "train", "step": i + 1, "loss": 0.5 / (i + 1), "lr": 1e-3,
                 "tokens_per_s": 1e3, "time": i * 0.1})
    charts.refresh()
    _, y = charts.curves[id(run)].items["loss"].getData()
    assert np.allclose(y, run.series["loss"].column("value"))   # not divided by ln 2
    assert charts.units.isHidden() and charts.units_label.isHidden()
    assert "squared error" in charts.loss.titleLabel.text
    text = Run(tiny.training.runs.next_number(), "words", {"graph": {"layers": [
        {"type": "CharText"}]}})
    tiny.training.runs.add(text)
    assert not charts.units.isHidden()   # a cross-entropy on the chart: the choice is back
    tiny.training.runs.remove(text)
    assert charts.units.isHidden()
