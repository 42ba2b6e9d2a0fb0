"""The Experiments view in the window: trials from a search's JSON lines and from a real
SQLite study, Use Best as one undo step, a trial's run opened in the charts, a search run,
stopped and resumed (a fake `rnn-designer search` playing its command line, and the real one),
and a search that cannot start saying why in one sentence."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from designer.search import analysis as A
from designer.ui.experiments.launch import SearchOptions
from designer.ui.experiments.process import error_sentence, search_command
from designer.ui.experiments.use_best import use_params
from designer.ui.train.pickers import device_choices
from tests.conftest import DATA, ROOT, need_data
from tests.ui.conftest import not_blank, snapshot
from tests.ui.experiments_fakes import make_study, search_project

FAKE = [sys.executable, str(Path(__file__).with_name("experiments_fakes.py"))]
HEADERS = ["#", "state", "val_loss", "lstm1.num_output", "embed.num_output",
           "solver.base_lr", "solver.type", "steps", "seconds", "ms/step", "device",
           "reason"]


@pytest.fixture
def searching(window, tmp_path):
    """The window with the tiny Char-RNN open, its search section set, no study yet."""
    window.notices = []
    window.notify = lambda title, text, details="": window.notices.append((title, text))
    assert window.files.open_path(search_project(tmp_path), confirmed=True)
    return window


@pytest.fixture
def studied(window, tmp_path, qtbot):
    """The window with a project that has a study of 12 trials, read into the view."""
    project = search_project(tmp_path)
    make_study(project, 12)
    window.notices = []
    window.notify = lambda title, text, details="": window.notices.append((title, text))
    assert window.files.open_path(project, confirmed=True)
    view = window.experiments_view
    assert view is not None, "a project with a study opens the Experiments tab"
    qtbot.waitUntil(lambda: len(view.rows) == 12 and bool(view.importances), timeout=60000)
    return window


def cell(view, row: int, header: str) -> str:
    model = view.table.trials
    return model.data(model.index(row, model.headers().index(header)))


def test_the_table_fills_from_the_searchs_json_lines(searching, tmp_path):
    view = searching.show_experiments()
    assert searching.tabs.currentWidget() is view
    view.take_event({"kind": "study", "study": "tiny", "trials": 3,
                     "storage": f"sqlite:///{tmp_path / 'none.db'}",
                     "objectives": ["val_loss"], "directions": ["minimize"]})
    view.take_event({"kind": "trial", "number": 0, "state": "COMPLETE",
                     "params": {"lstm1.num_output": 64, "embed.num_output": 16,
                                "solver.base_lr": 0.003, "solver.type": "Adam"},
                     "values": [1.875], "run_dir": str(tmp_path / "trial-0"),
                     "device": "cuda:1", "seconds": 42.5, "ms_per_step": 3.2, "reason": None,
                     "steps": 40, "max_steps": 40})
    view.take_event({"kind": "trial", "number": 1, "state": "FAIL",
                     "params": {"lstm1.num_output": 128, "embed.num_output": 32,
                                "solver.base_lr": 0.09, "solver.type": "SGD"},
                     "values": None, "run_dir": None, "device": "cuda:0", "seconds": 3.0,
                     "ms_per_step": None, "reason": "the loss became NaN at step 40"})
    assert view.table.trials.headers() == HEADERS
    assert [cell(view, 0, h) for h in HEADERS] == [
        "0", "COMPLETE", "1.875", "64", "16", "0.003", "Adam", "40", "42.5", "3.2", "cuda:1",
        ""]
    assert cell(view, 1, "state") == "FAIL"
    assert cell(view, 1, "reason") == "the loss became NaN at step 40"
    assert cell(view, 1, "val_loss") == ""
    assert view.status.text() == "2 trials, 1 complete, 1 failed, best val_loss 1.875 (trial 0)."
    # a trial told again updates its row
    view.take_event({"kind": "trial", "number": 1, "state": "FAIL", "params": {},
                     "values": None, "run_dir": str(tmp_path / "trial-1"), "reason": ""})
    assert len(view.rows) == 2 and view.rows[1].run_dir == str(tmp_path / "trial-1")
    assert view.rows[1].reason == "the loss became NaN at step 40"
    assert view.use_button.isEnabled() and view.best().number == 0


def test_a_project_with_a_study_shows_it_when_opened(studied, qtbot):
    w = studied
    view = w.experiments_view
    assert w.tabs.currentWidget() is w.view  # the tab opens beside the canvas, not over it
    states = [r.state for r in view.rows]
    assert states.count("PRUNED") == 2 and states.count("FAIL") == 1
    assert cell(view, 5, "reason") == "lstm1 ran out of memory on cpu"
    best = view.best()
    assert view.table.trials.best == best.number
    assert view.status.text().endswith(f"best val_loss {A.fmt(best.values['val_loss'])} "
                                       f"(trial {best.number}).")
    shelf = view.charts
    x, y = shelf.history.points.getData()
    assert len(x) == 9 and min(y) == best.values["val_loss"]
    assert len(shelf.parallel.data.numbers) == 9
    assert shelf.importance.caption.text().startswith("Toward val_loss")
    assert "needs two objectives" in shelf.pareto.caption.text()
    w.tabs.setCurrentWidget(view)
    qtbot.wait(50)
    assert not_blank(view.grab().toImage())


def test_use_best_is_one_undo_step(studied):
    w = studied
    view, doc = w.experiments_view, w.doc
    before, solver, count = snapshot(doc.graph), dict(doc.project.solver), doc.stack.count()
    best = view.best()
    assert view.use_best()
    assert doc.stack.count() == count + 1
    assert doc.stack.undoText() == f"Use trial {best.number}'s parameters"
    assert doc.graph.layer("lstm1").params["num_output"] == best.params["lstm1.num_output"]
    assert doc.graph.layer("embed").params["num_output"] == best.params["embed.num_output"]
    assert doc.project.solver["base_lr"] == best.params["solver.base_lr"]
    assert doc.project.solver["type"] == best.params["solver.type"]
    w.act.undo.trigger()
    assert snapshot(doc.graph) == before and doc.project.solver == solver
    w.act.redo.trigger()
    assert doc.project.solver["base_lr"] == best.params["solver.base_lr"]
    assert use_params(doc, best.params, "again") == 0 and doc.stack.count() == count + 1


def test_a_trial_that_retypes_a_layer_is_one_undo_step_too(searching):
    doc = searching.doc
    before, links = snapshot(doc.graph), set(doc.graph.links())
    assert use_params(doc, {"lstm1.type": "GRU", "lstm1.num_output": 24}, "Use trial 3") >= 2
    assert doc.graph.layer("lstm1").type == "GRU"
    assert doc.graph.layer("lstm1").params["num_output"] == 24
    assert set(doc.graph.links()) == links and not doc.graph.errors()
    doc.stack.undo()
    assert snapshot(doc.graph) == before
    with pytest.raises(Exception, match="lstm9"):
        use_params(doc, {"lstm9.num_output": 24}, "Use trial 4")
    assert snapshot(doc.graph) == before and doc.stack.canRedo()


def test_clicking_a_trial_opens_its_run_in_the_training_charts(studied, qtbot):
    w = studied
    view = w.show_experiments()
    qtbot.wait(50)
    row = next(i for i, r in enumerate(view.rows) if r.state == "COMPLETE")
    index = view.table.proxy.mapFromSource(view.table.trials.index(row, 0))
    rect = view.table.visualRect(index)
    qtbot.mouseClick(view.table.viewport(), Qt.LeftButton, pos=rect.center())
    folder = Path(view.rows[row].run_dir).resolve()
    assert [r.run_dir for r in w.training.runs] == [folder]
    assert w.charts_dock.isVisible() and w.training.charts.panel is not None
    assert w.notices == []


def test_a_search_that_cannot_start_says_why_in_one_sentence(searching, monkeypatch, qtbot):
    w = searching
    view = w.show_experiments()
    view.launcher = FAKE
    monkeypatch.setenv("FAKE_SEARCH", "fail")
    with qtbot.waitSignal(view.search_ended, timeout=60000):
        assert view.start_search(SearchOptions(trials=3))
    path = w.doc.path.resolve()
    said = (f"{path}: lstm1.num_output is searched from 8 to 4; the low end must not exceed "
            "the high end")
    assert view.status.text() == said[0].upper() + said[1:]
    assert w.statusBar().currentMessage() == view.status.text()
    assert view.search_button.isEnabled() and not view.stop_button.isEnabled()
    # a launcher that is not there
    view.launcher = [str(Path(w.doc.path).parent / "no-such-program")]
    with qtbot.waitSignal(view.search_ended, timeout=60000):
        view.start_search(SearchOptions(trials=3))
    assert view.status.text().startswith("The search could not be started (")
    assert "Traceback" not in view.status.text()
    # nothing marked: said before anything starts
    w.doc.project.search.clear()
    assert not view.start_search(SearchOptions(trials=3))
    assert view.status.text().startswith("Nothing to search over: mark parameters")


def test_a_search_runs_stops_and_goes_on(searching, monkeypatch, qtbot):
    w = searching
    view = w.show_experiments()
    view.launcher = FAKE
    monkeypatch.setenv("FAKE_SEARCH", "slow")
    gpus = [SimpleNamespace(index=i, uuid=f"GPU-{i}", name="H100", memory_total_mib=81559)
            for i in range(2)]
    monkeypatch.setattr(w, "_device_choices", lambda: device_choices(gpus, environ={}))
    assert view.start_search(SearchOptions(trials=40))
    assert not view.search_button.isEnabled() and w.act.stop_search.isEnabled()
    assert w.device_dock.isVisible()  # the device panel shows every GPU while it runs
    assert w.training.device.target == (0, 1)
    qtbot.waitUntil(lambda: len(view.rows) >= 1, timeout=60000)
    assert view.facts.trials == 40
    w._close_tab(w.tabs.indexOf(view))  # not while it runs
    assert w.experiments_view is view and w.tabs.indexOf(view) > 0
    assert w.statusBar().currentMessage() == "A search is running: stop it before closing its tab"
    assert view.status.text().startswith("Searching: ") and " of 40, " in view.status.text()
    with qtbot.waitSignal(view.search_ended, timeout=60000):
        view.stop_search()
    assert view.status.text().startswith("Search stopped; Search goes on with the same study.")
    done = len(view.rows)
    monkeypatch.setenv("FAKE_SEARCH", "")
    with qtbot.waitSignal(view.search_ended, timeout=60000):
        assert view.start_search(SearchOptions(trials=2))
    qtbot.waitUntil(lambda: len(view.rows) == done + 2, timeout=60000)
    assert [r.number for r in view.rows] == list(range(done + 2))  # the same study, resumed
    assert not w.act.stop_search.isEnabled()
    assert w.training.device.target == w.training.device_picker.choice().monitor


@pytest.mark.skipif(not (ROOT / "designer" / "search" / "command.py").exists(),
                    reason="rnn-designer search is not in this tree")
def test_a_real_search_fills_the_view(searching, qtbot):
    view = searching.show_experiments()
    with qtbot.waitSignal(view.search_ended, timeout=300000) as ended:
        assert view.start_search(SearchOptions(trials=2, device="cpu", steps=6))
    assert ended.args == [0], view.status.text()
    with qtbot.waitSignal(view.study_read, timeout=60000):  # then read from its storage
        pass
    assert len(view.rows) == 2 and view.facts.objectives == ["val_loss"]
    for row in view.rows:
        assert row.state in ("COMPLETE", "PRUNED") and Path(row.run_dir).is_dir()
        assert row.device == "cpu" and row.seconds > 0
    assert view.status.text().startswith("Search finished. 2 trials")


def test_the_command_line_and_the_sentences():
    cmd = search_command("/p/tiny.json", launcher=["rd"],
                         **SearchOptions(trials=30, device="cuda", gpus=2, per_gpu=3,
                                         steps=500, objectives=["val_loss", "ms_per_step"],
                                         refit_seeds=5).arguments())
    assert cmd == ["rd", "search", "/p/tiny.json", "--json", "--trials", "30", "--device",
                   "cuda", "--gpus", "2", "--per-gpu", "3", "--steps", "500",
                   "--refit-seeds", "5", "--objective", "val_loss,ms_per_step"]
    cpu = SearchOptions(trials=5, device="cpu", workers=2).arguments()
    assert cpu == {"trials": 5, "objectives": ["val_loss"], "steps": None, "device": "cpu",
                   "workers": 2}
    assert error_sentence("rnn-designer: x.json: the net is not valid\n", 2) == \
        "x.json: the net is not valid"
    assert error_sentence("Traceback (most recent call last):\n  File x\nKeyError: 'a'\n",
                          1) == "the search stopped with an error: KeyError: 'a'"
    assert error_sentence("", 9) == "the search ended with exit code 9"
    note = "rnn-designer: note: the space pairs Adam with weight decay; ...\n"
    assert error_sentence(note + "Traceback (most recent call last):\nKeyError: 'a'\n", 1) \
        == "the search stopped with an error: KeyError: 'a'"
    assert error_sentence(note, 3) == "the search ended with exit code 3"


def test_the_charts_stand_side_by_side_when_there_is_room_else_as_tabs(studied, qtbot):
    view = studied.show_experiments()
    shelf = view.charts
    view.resize(800, 700)
    shelf.resize(800, 300)
    qtbot.waitUntil(lambda: shelf.currentWidget() is shelf.tabs, timeout=10000)
    assert shelf.tabs.count() == 4
    shelf.resize(1400, 300)
    qtbot.waitUntil(lambda: shelf.currentWidget() is shelf.row, timeout=10000)
    assert all(chart.isVisibleTo(shelf) for chart in shelf.charts())


@need_data("ucr/GunPoint_TRAIN.ts")
def test_use_best_switches_a_branch_off_and_one_undo_brings_it_back(window, tmp_path):
    from designer.training.new_from_data.init import init_project
    path, _ = init_project(DATA / "ucr/GunPoint_TRAIN.ts", out=tmp_path / "gunpoint.json",
                           net="lstm-fcn")
    assert window.files.open_path(path, confirmed=True)
    doc = window.doc
    before, solver = snapshot(doc.graph), dict(doc.project.solver)
    trial = {"features.inputs": "pool", "pool.method": "last", "lstm1.num_output": 24,
             "solver.base_lr": 0.003}
    assert use_params(doc, trial, "Use trial 7's parameters") == 4
    g = doc.graph
    assert "features" not in g and "lstm1" not in g and g.layer("pool").type == "SequenceLast"
    assert g.errors() == [] and doc.stack.count() == 1
    window.act.undo.trigger()
    assert snapshot(doc.graph) == before and doc.project.solver == solver


@need_data("ucr/GunPoint_TRAIN.ts")
def test_use_best_makes_a_block_residual_and_one_undo_brings_the_plain_one_back(window,
                                                                                tmp_path):
    from designer.training.new_from_data.init import init_project
    path, _ = init_project(DATA / "ucr/GunPoint_TRAIN.ts", out=tmp_path / "gunpoint.json",
                           net="lstm-fcn")
    assert window.files.open_path(path, confirmed=True)
    doc = window.doc
    before = snapshot(doc.graph)
    assert use_params(doc, {"conv2.residual": True, "conv2.num_output": 64},
                      "Use trial 5's parameters") > 9
    g = doc.graph
    assert g.link_into("relu2", "x").src == "conv2_sum" and g.errors() == []
    assert g.layer("conv2_conv3").params == {"num_output": 64, "kernel_size": 3}
    assert doc.stack.count() == 1
    assert use_params(doc, {"conv2.residual": True, "conv2.num_output": 64}, "again") == 0
    window.act.undo.trigger()
    assert snapshot(doc.graph) == before and not any(n.startswith("conv2_")
                                                     for n in doc.graph.names())


def test_the_dialog_asks_for_the_picks_seeds_and_the_status_names_their_runs(qapp):
    from designer.ui.experiments.launch import SearchDialog
    from designer.ui.experiments.table import ensemble_note
    dialog = SearchDialog(SearchOptions(trials=10, refit_seeds=3), gpus=0, project="p.json")
    assert dialog.seeds.value() == 3
    dialog.seeds.setValue(4)
    assert dialog.options().refit_seeds == 4
    assert dialog.options().arguments()["refit_seeds"] == 4
    dialog.seeds.setValue(1)
    assert "refit_seeds" not in dialog.options().arguments()   # one run: today's search
    assert ensemble_note(["/r/best-trial-3"]) == ""
    note = ensemble_note(["/r/best-trial-3", "/r/best-trial-3-seed-2"])
    assert "2 seeds (best-trial-3, best-trial-3-seed-2)" in note and "evaluate" in note
    note = ensemble_note(["/r/best-trial-3", "/r/ensemble-trial-8"],
                         {"trials": [3, 8], "seeds": 1})
    assert "designs of trials 3, 8 were trained again (best-trial-3, ensemble-trial-8)" in note


def test_the_dialog_asks_how_many_designs_make_the_ensemble(qapp):
    from designer.ui.experiments.launch import SearchDialog, SearchOptions
    from designer.ui.experiments.process import search_command
    dialog = SearchDialog(SearchOptions(trials=10, refit_top=3), gpus=0, project="p.json")
    assert dialog.top.value() == 3 and dialog.top.isEnabled()
    assert dialog.options().arguments()["refit_top"] == 3
    assert search_command("p.json", **dialog.options().arguments())[-4:-2] == \
        ["--refit-top", "3"]
    dialog.second.setCurrentIndex(dialog.second.findData("ms_per_step"))
    assert not dialog.top.isEnabled()  # two objectives: a Pareto front, no ranking
    assert "refit_top" not in dialog.options().arguments()
    dialog.second.setCurrentIndex(0)
    dialog.top.setValue(1)
    assert "refit_top" not in dialog.options().arguments()  # one design: today's search


def test_a_note_on_the_searchs_stderr_reaches_the_log_and_is_never_the_failure(qtbot):
    import sys

    from designer.ui.experiments.process import SearchProcess
    script = ("import sys, json; "
              "print('rnn-designer: note: the space pairs Adam with weight decay', "
              "file=sys.stderr, flush=True); "
              "print(json.dumps({'kind': 'study', 'study': 's'}), flush=True); "
              "print('rnn-designer: x.json: the storage cannot be reached', file=sys.stderr); "
              "sys.exit(2)")
    proc, notes, failed, events = SearchProcess(), [], [], []
    proc.note.connect(notes.append)
    proc.failed.connect(failed.append)
    proc.event.connect(events.append)
    with qtbot.waitSignal(proc.ended, timeout=30000):
        proc.start([sys.executable, "-c", script])
    assert notes == ["note: the space pairs Adam with weight decay"]
    assert failed == ["x.json: the storage cannot be reached"]
    assert events == [{"kind": "study", "study": "s"}]
