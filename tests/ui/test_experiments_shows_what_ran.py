"""Experiments shows what ran: a search with a fixed number of steps a trial leaves
solver.max_steps alone, the table shows the steps each trial trained and Use Best writes them;
an objective scored over folds is labelled as their mean, each fold's value on hover; a trial
training says how far it is; the trials' axis counts in whole numbers and the parallel
coordinates' names are never cut."""
import warnings

import pytest

from designer.search import analysis as A
from designer.search import charts as C
from designer.ui.experiments.launch import SearchOptions
from tests.ui.experiments_fakes import search_project

STEPS = 3


def cell(view, row: int, header: str, role=None):
    from PySide6.QtCore import Qt
    model = view.table.trials
    index = model.index(row, model.headers().index(header))
    return model.data(index, Qt.DisplayRole if role is None else role)


@pytest.mark.timeout(300)
def test_a_search_with_steps_shows_the_steps_trained_and_use_best_writes_them(window,
                                                                               tmp_path,
                                                                               qtbot):
    w = window
    w.notices = []
    w.notify = lambda title, text, details="": w.notices.append((title, text))
    project = search_project(tmp_path, search={
        "lstm1.num_output": {"int": [8, 16]},
        "solver.max_steps": {"int": [1000, 2000], "step": 1000}})
    assert w.files.open_path(project, confirmed=True)
    view = w.show_experiments()
    messages = []
    view.message.connect(messages.append)
    with qtbot.waitSignal(view.search_ended, timeout=280_000) as ended:
        assert view.start_search(SearchOptions(trials=2, device="cpu", steps=STEPS))
    assert ended.args == [0], view.status.text()
    qtbot.waitUntil(lambda: len(view.rows) == 2 and all(r.state == "COMPLETE"
                                                          for r in view.rows), timeout=30_000)
    qtbot.waitUntil(lambda: "solver.max_steps" not in view.table.trials.headers())
    assert any("solver.max_steps is left out" in m for m in messages)
    for i, row in enumerate(view.rows):  # the steps each trial trained, not 1000 or 2000
        assert row.steps == STEPS and row.max_steps == STEPS
        assert "solver.max_steps" not in row.params
        assert cell(view, i, "steps") == str(STEPS)
    assert w.doc.project.solver_settings()["max_steps"] == 10  # as the tiny project says
    assert view.use_best()
    assert w.doc.project.solver["max_steps"] == STEPS
    assert any(f"max_steps {STEPS}, as trial" in m for m in messages)
    w.doc.stack.undo()  # one step, as every Use Best
    assert w.doc.project.solver_settings()["max_steps"] == 10


def studied(tmp_path, folds=(), running=None):
    """A study of two complete trials (with ``folds``: scored over them), and a third
    trial training, reported ``running`` per mille of the way (``None``: no third)."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    project = search_project(tmp_path)
    storage = A.default_storage(project)
    A.storage_file(storage).parent.mkdir(parents=True, exist_ok=True)
    study = optuna.create_study(study_name=A.default_study(project), storage=storage)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.set_metric_names(["val_loss"])
    if folds:
        study.set_user_attr("folds", len(folds))
    dist = {"lstm1.num_output": optuna.distributions.IntDistribution(8, 128)}
    for number, value in enumerate((0.2541, 0.31)):
        attrs = {"run_dir": str(tmp_path / "runs" / f"trial-{number}"), "steps": 40,
                 "max_steps": 40}
        if folds:
            attrs["val_loss_folds"] = [value - 0.06, value + 0.02, value + 0.04]
        study.add_trial(optuna.trial.create_trial(
            params={"lstm1.num_output": 16 * (number + 1)}, distributions=dist, value=value,
            user_attrs=attrs))
    if running is not None:
        trial = study.ask(dist)
        trial.report(0.4, running)
    return project


def test_a_fold_mean_is_labelled_as_one_and_each_folds_value_shows_on_hover(window,
                                                                            tmp_path, qtbot):
    from PySide6.QtCore import Qt
    project = studied(tmp_path, folds=(1, 2, 3))
    assert window.files.open_path(project, confirmed=True)
    view = window.experiments_view
    qtbot.waitUntil(lambda: len(view.rows) == 2, timeout=30_000)
    model = view.table.trials
    column = model.headers().index("val_loss")
    assert model.headerData(column, Qt.Horizontal) == "val_loss (mean of 3 folds)"
    tip = cell(view, 0, "val_loss", Qt.ToolTipRole)
    assert tip.startswith("The mean of 3 folds: fold 1 0.1941, fold 2 0.2741, fold 3 0.2941")
    assert "trial-0 is fold 1's" in tip
    assert cell(view, 0, "val_loss") == "0.2541"


def test_a_trial_training_says_how_far_it_is(window, tmp_path, qtbot):
    from PySide6.QtCore import Qt
    project = studied(tmp_path, running=450)
    assert window.files.open_path(project, confirmed=True)
    view = window.experiments_view
    qtbot.waitUntil(lambda: len(view.rows) == 3, timeout=30_000)
    assert cell(view, 2, "state") == "RUNNING 45%"
    assert "45% done" in cell(view, 2, "state", Qt.ToolTipRole)
    assert "trial 2 at 45%" in view._summary(running=True)


def test_the_trials_axis_counts_in_whole_numbers_and_no_axis_name_is_cut(qtbot):
    import numpy as np

    from designer.ui.experiments.charts import HistoryChart
    from designer.ui.experiments.parallel import ParallelChart
    history = HistoryChart()
    qtbot.addWidget(history)
    axis = history.plot.getAxis("bottom")
    for low, high in ((0, 2), (0, 7), (3, 160)):
        ticks = [v for _, values in axis.tickValues(low, high, 300) for v in values]
        assert ticks and all(float(v).is_integer() for v in ticks), (low, high, ticks)
    chart = ParallelChart()
    qtbot.addWidget(chart)
    chart.resize(300, 220)  # short: the names above the axes would have been cut
    rows = [A.TrialRow(i, "COMPLETE", {"lstm1.num_output": 8 * (i + 1),
                                       "solver.base_lr": 0.01 * (i + 1)}, {"val_loss": 2.0 - i})
            for i in range(3)]
    axes = {"lstm1.num_output": A.Axis("lstm1.num_output", "int", 8, 24),
            "solver.base_lr": A.Axis("solver.base_lr", "float", 0.01, 0.03)}
    chart.show_parallel(C.parallel_coordinates(rows, axes, "val_loss"))
    chart.show()
    qtbot.waitExposed(chart)
    names = chart.plot.getAxis("top")
    assert names.isVisible() and [t for _, t in names._tickLevels[0]] == \
        ["lstm1\nnum_output", "solver\nbase_lr", "val_loss \u2193"]
    assert names.height() >= 2 * chart.fontMetrics().height() * 0.8
    low, high = chart.plot.viewRange()[1]
    assert high <= 1.06 and np.nanmax(chart.data.lines) <= high


def test_the_history_and_pareto_legends_sit_under_their_plots_off_every_point(qtbot):
    """The last trial's point, at the top right where a legend used to float, stays in
    sight: each chart's legend is a row of its own under the plot."""
    import numpy as np

    from designer.ui.experiments.charts import HistoryChart, ParetoChart
    values = np.array([2.49, 2.48, 2.50, 2.94, 2.34, 3.34])
    h = C.History(np.arange(6.0), values, np.minimum.accumulate(values))
    history, pareto = HistoryChart(), ParetoChart()
    history.show_history(h, "val_loss", "minimize")
    for chart in (history, pareto):
        qtbot.addWidget(chart)
        chart.resize(700, 300)
        chart.show()
        qtbot.waitExposed(chart)
        plotted = chart.plot.vb.sceneBoundingRect()
        legend = chart.legend.sceneBoundingRect()
        assert not legend.intersects(plotted), (type(chart).__name__, legend, plotted)
        assert legend.width() > 40 and legend.bottom() <= chart.widget.height()


@pytest.mark.timeout(120)
def test_a_running_search_is_followed_only_once_it_has_opened_its_study(window, tmp_path,
                                                                         qtbot, monkeypatch):
    """The study is read every few seconds while a search runs, to show how far its trials
    are, but never before the search says its study is open: a read while the search is
    still making its database could meet it half made."""
    import sys
    from pathlib import Path
    fake = [sys.executable, str(Path(__file__).with_name("experiments_fakes.py"))]
    assert window.files.open_path(search_project(tmp_path), confirmed=True)
    view = window.show_experiments()
    view.launcher = fake
    heard = []
    read, take = view.reader.read, view.take_event
    monkeypatch.setattr(view.reader, "read", lambda *a, **k: (heard.append("read"),
                                                              read(*a, **k)))
    monkeypatch.setattr(view, "take_event", lambda e: (heard.append(e.get("kind")), take(e)))
    view._follow.setInterval(20)
    monkeypatch.setenv("FAKE_SEARCH", "slow")
    with qtbot.waitSignal(view.search_ended, timeout=100_000):
        assert view.start_search(SearchOptions(trials=2))
        qtbot.waitUntil(lambda: heard.count("read") >= 3, timeout=60_000)
        view.stop_search()
    assert heard[0] == "study", heard[:5]
    assert len(view.rows) >= 1
