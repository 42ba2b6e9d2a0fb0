"""The window with the user's own sequences: New from Data previews a file and opens the project
``init`` makes of it; a forecasting run shows its forecasts, baselines and roll-out, a
classifier its confusion matrix; the charts draw RMSE while a forecaster trains."""
import importlib.util
import json
import warnings

import numpy as np
import pytest
from PySide6.QtCore import Qt

from designer.ui.output.generate_panel import GeneratePanel
from designer.ui.runs.run_list import RunList
from designer.ui.runs.run import Run
from designer.ui.sequences import menu as sequences_menu
from tests.training.helpers import tiny_init_run


# ------------------------------------------------------------------------------ data --
def weekly(folder, rows=120, gaps=(4, 40, 41)):
    lines = ["date,sales"]
    for i in range(rows):
        day = np.datetime64("2010-01-03") + np.timedelta64(7 * i, "D")
        value = "" if i in gaps else f"{50 + 6 * np.sin(i / 8.3) + 0.02 * i:.3f}"
        lines.append(f"{day},{value}")
    path = folder / "sales.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def toy_ts(folder):
    rng = np.random.default_rng(1)
    for name, n in (("Toy_TRAIN.ts", 36), ("Toy_TEST.ts", 12)):
        lines = ["@problemName toy", "@dimensions 2", "@classLabel true down flat up", "@data"]
        for i in range(n):
            label = ("up", "flat", "down")[i % 3]
            slope = {"up": 1, "flat": 0, "down": -1}[label]
            length = int(rng.integers(4, 9))
            a = (slope * np.arange(length) + rng.normal(0, 0.3, length)).round(3)
            b = rng.normal(0, 1, length).round(3)
            lines.append(",".join(map(str, a)) + ":" + ",".join(map(str, b)) + f":{label}")
        (folder / name).write_text("\n".join(lines) + "\n")
    return folder / "Toy_TRAIN.ts"




@pytest.fixture(scope="module")
def forecaster(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("forecaster")
    return tiny_init_run(folder, weekly(folder), horizon=2)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("classifier")
    return tiny_init_run(folder, toy_ts(folder))


# ----------------------------------------------------------------------- New from Data --
def open_dialog(window, qtbot, path):
    dialog = sequences_menu.new_from_data(window, path)
    qtbot.waitUntil(lambda: dialog.error is not None or (
        dialog.preview is not None and dialog.preview.scanned), timeout=60_000)
    return dialog


def test_new_from_data_previews_a_table_and_opens_the_project_init_makes(window, qtbot,
                                                                        tmp_path):
    from designer.training.new_from_data.init import init_project
    data = weekly(tmp_path)
    file_menu = window.menuBar().actions()[0].menu().actions()
    assert file_menu.index(window.act.new_from_data) == file_menu.index(window.act.open) - 1
    dialog = open_dialog(window, qtbot, data)
    assert dialog.summary.text() == ("120 rows of 2 columns, weekly rows (a season of 52); 3 "
                                     "empty cells, the first at row 5 (line 6), column 'sales'")
    model = dialog.table.preview_model
    assert model.rowCount() == 20 and model.columnCount() == 2
    assert model.headerData(0, Qt.Horizontal) == "date\ntime"
    assert model.headerData(1, Qt.Horizontal) == "sales\nnumber, 3 empty"
    assert model.data(model.index(4, 1)) == "(empty)"
    assert dialog.choice.forecast.isChecked() and dialog.choice.chosen_targets() == ["sales"]
    assert "guessed from the file" in dialog.choice.guess.text()
    assert dialog.out_edit.text() == str(tmp_path / "sales.json")
    dialog.choice.horizon.setValue(3)
    with qtbot.waitSignal(dialog.finished, timeout=60_000):
        dialog.create_button.click()
    out = tmp_path / "sales.json"
    assert window.doc.project.path == out and not window.doc.is_modified()
    data_layer = window.doc.graph.layer("data")
    assert data_layer.type == "TimeSeries" and data_layer.params["horizon"] == 3
    # the very project the command writes
    same, _ = init_project(data, "forecast", "sales", tmp_path / "cli.json", 3)
    assert out.read_bytes() == same.read_bytes()
    log = window.training.output.log.toPlainText()
    assert "task: forecast (as asked)" in log and "LSTM 64 -> SequenceLast" in log


def test_the_dialog_never_writes_over_a_file_without_asking(window, qtbot, tmp_path):
    data = weekly(tmp_path)
    taken = tmp_path / "sales.json"
    taken.write_text("keep me")
    dialog = open_dialog(window, qtbot, data)
    assert dialog.out_edit.text() == str(tmp_path / "sales-2.json")  # a free name
    dialog.out_edit.setText(str(taken))
    asked = []
    dialog.ask_replace = lambda path: asked.append(path) or False
    assert not dialog.create() and asked == [taken]
    assert taken.read_text() == "keep me" and dialog.isVisible()
    dialog.ask_replace = lambda path: True
    with qtbot.waitSignal(dialog.finished, timeout=60_000):
        assert dialog.create()
    assert json.loads(taken.read_text())["graph"]["layers"][0]["type"] == "TimeSeries"
    assert window.doc.project.path == taken


def test_a_bad_file_is_one_sentence_in_the_dialog_and_a_ts_file_is_classified(
        window, qtbot, tmp_path):
    bad = tmp_path / "photo.csv"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    dialog = open_dialog(window, qtbot, bad)
    text = dialog.message.text()
    assert dialog.message.isVisible() and "is a binary file" in text and str(bad) in text
    assert "Traceback" not in text and text.count(". ") == 0
    assert not dialog.create_button.isEnabled() and dialog.table.preview_model.rowCount() == 0
    dialog.set_data_path(toy_ts(tmp_path))
    qtbot.waitUntil(lambda: dialog.preview is not None and dialog.preview.scanned)
    assert dialog.choice.classify.isChecked() and not dialog.choice.forecast.isEnabled()
    assert dialog.summary.text().startswith("36 sequences of 2 channels, 4 to 8 steps long, "
                                            "3 classes; Toy_TEST.ts beside it holds 12 more")
    assert dialog.choice.classes.text() == "3: down (12), flat (12), up (12) (sequences each)"
    assert not dialog.message.isVisible() and dialog.create_button.isEnabled()
    dialog.reject()


def test_data_init_cannot_learn_from_is_one_sentence_when_the_project_is_made(
        window, qtbot, tmp_path):
    huge = tmp_path / "co2.csv"  # values near float64's limit: their spread overflows
    huge.write_text("t,value\n" + "".join(f"{i},{float(2 + np.sin(i / 5)) * 0.5e308!r}\n"
                                          for i in range(200)))
    rng = np.random.default_rng(0)
    one = tmp_path / "one_TRAIN.ts"  # three classes in the header, one in the series
    one.write_text("@problemName one\n@classLabel true a b c\n@data\n" + "".join(
        ",".join(f"{v:.3f}" for v in rng.normal(size=12)) + ":a\n" for _ in range(30)))
    want = {huge: "column 'value' holds values up to 1.5e+308, too large to normalise (their "
                  "spread overflows); rescale the column.",
            one: "every series in the training split is of class 'a' (its header lists a, b, "
                 "c); a classifier needs at least two classes."}
    for data, sentence in want.items():
        dialog = open_dialog(window, qtbot, data)
        assert dialog.create_button.isEnabled(), dialog.why_not()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert dialog.create()
            qtbot.waitUntil(lambda d=dialog: d.init_job is None, timeout=30_000)
        assert dialog.message.text() == f"{data}: {sentence}"
        assert dialog.isVisible() and dialog.create_button.isEnabled()
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not list(tmp_path.glob("*.json"))  # no project written
        dialog.reject()


def test_picking_another_file_abandons_the_scan_of_the_first(window, qtbot, tmp_path):
    big = tmp_path / "big.csv"
    big.write_text("t,x\n" + "".join(f"{i},{i % 13}\n" for i in range(150_000)))
    dialog = sequences_menu.new_from_data(window, big)
    small = weekly(tmp_path)
    dialog.set_data_path(small)
    qtbot.waitUntil(lambda: dialog.preview is not None and dialog.preview.scanned)
    qtbot.waitUntil(lambda: not dialog.jobs, timeout=60_000)
    assert dialog.preview.path == small and dialog.preview.rows == 120
    dialog.reject()


# ------------------------------------------------------------------------- results --
def panel_on(qtbot, folder) -> tuple[GeneratePanel, Run]:
    runs = RunList()
    run = runs.add_folder(folder)
    panel = GeneratePanel(runs)
    qtbot.addWidget(panel)
    panel.resize(1000, 520)
    panel.show()
    panel.select_run(run)
    return panel, run


PEERS = all(importlib.util.find_spec(m) for m in ("aeon", "statsforecast"))


def evaluate(qtbot, panel, **extra):
    # the non-deep peer's numba kernels compile on their first use: 1.5 minutes on a loaded
    # 2-core machine (then cached with the package)
    with qtbot.waitSignal(panel.busy_changed, check_params_cb=lambda busy: not busy,
                          timeout=300_000):
        assert panel.generate(extra or None)


def test_a_forecasting_run_draws_its_test_forecasts_and_rolls_them_out(qtbot, forecaster):
    from designer.training.trained.evaluate import evaluate_run
    panel, run = panel_on(qtbot, forecaster)
    chart = panel.sequences.forecast
    assert run.kind == "series" and panel.go.text() == "Evaluate"
    assert panel.pages.currentWidget() is chart and chart.controls.isVisibleTo(panel)
    evaluate(qtbot, panel)
    report = evaluate_run(forecaster)
    assert chart.view["report"]["rmse"] == pytest.approx(report["rmse"])
    assert f"Test RMSE {report['rmse']:.4g}</b> sales" in chart.headline.text()
    assert "persistence" in chart.headline.text() and "seasonal naive (52 steps)" in \
        chart.headline.text()
    peer = report["peer"]   # the non-deep peer beside it, in the headline and the status line
    if PEERS:
        assert f"non-deep peer AutoETS RMSE {peer['rmse']:.4g}" in chart.headline.text()
        assert f"; AutoETS RMSE {peer['rmse']:.4g}" in panel.status.text()
    else:
        assert "rnn-designer[peers]" in chart.headline.text()
    assert chart.lead.maximum() == 2 and chart.lead.value() == 2
    for key in ("history", "truth", "model", "roll-out"):
        assert key in chart.legend.text()
    curves = chart.plot_widget.getPlotItem().listDataItems()
    assert len(curves) == 6  # history, truth, baseline, model, roll-out and its horizon ends
    lo, _ = chart.view["splits"]["test"]
    first = chart.view["rollout"]
    assert first["origin"] == lo - 1 and len(first["values"]) == 2 * chart.rounds.value()
    assert "Click the plot to roll out" in chart.note.text()
    # a click later on: the roll-out starts there, the scores stay
    later = float(chart.view["x"][lo + 6])
    with qtbot.waitSignal(panel.busy_changed, check_params_cb=lambda busy: not busy,
                          timeout=30_000):
        chart.request_at(later)
    assert chart.view["rollout"]["origin"] == lo + 6 and "report" in chart.view
    chart.rounds.setValue(2)
    qtbot.waitUntil(lambda: len(chart.view["rollout"]["values"]) == 4, timeout=30_000)
    assert "Roll-out: 2 horizons of 2" in chart.note.text()


def test_a_classifier_shows_its_confusion_matrix_and_per_class_accuracy(qtbot, classifier):
    from designer.training.trained.evaluate import evaluate_run
    panel, run = panel_on(qtbot, classifier)
    chart = panel.sequences.confusion
    assert run.kind == "classes" and panel.pages.currentWidget() is chart
    assert not panel.sequences.forecast.controls.isVisibleTo(panel)
    evaluate(qtbot, panel)
    report = evaluate_run(classifier)
    assert chart.report["confusion"] == report["confusion"]
    assert chart.report["classes"] == ["down", "flat", "up"]
    assert f"Test accuracy {report['accuracy']:.2%}" in chart.headline.text()
    ticks = chart.heat.getAxis("bottom")._tickLevels[0]
    assert [name for _, name in ticks] == ["down", "flat", "up"]
    image = next(i for i in chart.heat.items if type(i).__name__ == "ImageItem")
    assert image.image.shape == (3, 3)
    rows = np.asarray(report["confusion"], dtype=float)
    assert np.allclose(image.image, rows / rows.sum(1, keepdims=True))
    assert panel.status.text().startswith(f"Test accuracy {report['accuracy']:.2%} on 12 "
                                          "sequences")
    peer = report["peer"]   # the non-deep peer beside it, in the headline and the status line
    if PEERS:
        assert f"non-deep peer MiniRocket {peer['accuracy']:.2%}" in chart.headline.text()
        assert f"; MiniRocket {peer['accuracy']:.2%}" in panel.status.text()
    else:
        assert "rnn-designer[peers]" in chart.headline.text()


def test_picking_another_run_clears_the_result_of_the_one_before(qtbot, forecaster,
                                                                 classifier):
    runs = RunList()
    a, b = runs.add_folder(forecaster), runs.add_folder(classifier)
    panel = GeneratePanel(runs)
    qtbot.addWidget(panel)
    panel.select_run(a)
    evaluate(qtbot, panel)
    assert panel.sequences.forecast.view is not None
    panel.select_run(b)
    assert panel.pages.currentWidget() is panel.sequences.confusion
    panel.select_run(a)
    assert panel.sequences.forecast.view is None
    assert panel.sequences.forecast.headline.text().startswith("Press Evaluate")


# --------------------------------------------------------------------------- charts --
def test_the_charts_draw_rmse_for_a_forecaster_and_accuracy_for_a_classifier(qtbot,
                                                                            forecaster):
    from designer.ui.charts.plots import ChartsPanel
    runs = RunList()
    charts = ChartsPanel(runs)
    qtbot.addWidget(charts)
    charts.show()
    run = runs.add_folder(forecaster)
    assert run.targets == ["sales"] and run.has("rmse") and run.has("val_rmse")
    charts.refresh()
    assert charts.rmse_widget.isVisible() and not charts.accuracy_widget.isVisible()
    assert "RMSE of sales" in charts.rmse.titleLabel.text
    assert "Loss (squared error / 2, z-scored)" in charts.loss.titleLabel.text  # not nats
    x, y = charts.curves[id(run)].items["val_rmse"].getData()
    assert len(x) == 2 and np.allclose(y, run.series["val_rmse"].column("value"))
    live = Run(runs.next_number(), "live", {"graph": {"layers": [
        {"name": "data", "type": "SequenceClasses"}]}})
    runs.add(live)
    live.add({"kind": "start", "run_dir": str(forecaster), "steps": 10, "targets": None})
    live.add({"kind": "train", "step": 2, "loss": 1.0, "accuracy": 0.5, "lr": 0.1,
              "tokens_per_s": 10.0})
    charts.refresh()
    assert charts.rmse_widget.isVisible() and charts.accuracy_widget.isVisible()
    assert live.kind == "classes" and "Loss (nats)" in charts.loss.titleLabel.text


def test_a_classifier_is_created_with_the_net_chosen(window, qtbot, tmp_path):
    """The Net choice under Classify is init's ``--net``: MiniRocket's features by default,
    the LSTM-FCN when picked; the file is the one the command writes."""
    from designer.training.new_from_data.init import init_project
    data = toy_ts(tmp_path)
    dialog = open_dialog(window, qtbot, data)
    assert dialog.choice.classify.isChecked()
    assert dialog.choice.net.currentData() == "rocket"
    dialog.choice.net.setCurrentIndex(dialog.choice.net.findData("lstm-fcn"))
    out = tmp_path / "toy.json"
    dialog.out_edit.setText(str(out))
    with qtbot.waitSignal(dialog.finished, timeout=60_000):
        dialog.create_button.click()
    assert {"conv1", "lstm1"} <= set(window.doc.graph.names())
    same, _ = init_project(data, "classify", None, tmp_path / "cli.json", net="lstm-fcn")
    assert out.read_bytes() == same.read_bytes()
    dialog = open_dialog(window, qtbot, data)
    out = tmp_path / "toy-rocket.json"
    dialog.out_edit.setText(str(out))
    # init computes two MiniRockets' features and cross-validates both heads over them (about
    # 30 s on 2 busy cores)
    with qtbot.waitSignal(dialog.finished, timeout=180_000):
        dialog.create_button.click()
    assert window.doc.graph.layer("rocket").type == "MiniRocket"


def test_a_ucr_archive_tsv_is_offered_as_sequences_labelled_by_its_first_column(
        window, qtbot, tmp_path):
    from tests.training.data.test_ucr_formats import write_pair
    dialog = open_dialog(window, qtbot, write_pair(tmp_path, ".tsv", "\t"))
    choice = dialog.choice
    assert choice.classify.isChecked() and not choice.forecast.isEnabled()
    assert not choice.classes_form.isRowVisible(choice.label)  # no other column to pick
    assert choice.classes.text() == "3: 1 (4), 2 (4), 3 (4) (sequences each)"
    assert dialog.summary.text().startswith("12 sequences of 1 channel, 15 to 20 steps long")
    with qtbot.waitSignal(dialog.finished, timeout=180_000):  # init cross-validates its heads
        dialog.create_button.click()
    layer = window.doc.graph.layer("data")
    assert layer.type == "SequenceClasses" and layer.params["layout"] == "wide"


def test_a_table_that_could_hold_either_task_is_asked_about(window, qtbot, tmp_path):
    rows = [f"{10 + i}," + ",".join(f"{v:.3f}" for v in np.linspace(0, 1, 12) * i)
            for i in range(0, 8, 2)]
    path = tmp_path / "numbers.csv"
    path.write_text("\n".join(rows) + "\n")
    dialog = open_dialog(window, qtbot, path)
    choice = dialog.choice
    assert not choice.classify.isChecked() and not choice.forecast.isChecked()
    assert not dialog.create_button.isEnabled() and dialog.message.isVisible()
    assert dialog.message.text().startswith("Say what to learn: ")
    choice.classify.setChecked(True)
    assert dialog.create_button.isEnabled() and not dialog.message.isVisible()
    assert choice.init_args(dialog.preview)["target"] == ""
    dialog.reject()
