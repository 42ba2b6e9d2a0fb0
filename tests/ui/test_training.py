"""Click-to-train: the Train button trains a snapshot in a worker thread, the charts fill,
pause/resume/stop work, closing mid-run saves a checkpoint, and errors stay in the window."""
import json

import pytest
from PySide6.QtWidgets import QApplication

from designer.ui.runs.run import Run
from tests.ui.conftest import snapshot, tiny_project, train_and_wait


def curve_points(w, run, name="loss") -> int:
    w.training.charts.panel.refresh()
    x, _ = w.training.charts.panel.curves[id(run)].items[name].getData()
    return 0 if x is None else len(x)


def test_train_runs_in_the_background_and_the_charts_fill(qtbot, tiny):
    w = tiny
    before = snapshot(w.doc.graph)
    run = train_and_wait(qtbot, w)
    assert run.state == "finished" and run.step == 10
    assert run.engines == {"lstm1": "CUDNN"} and run.device == "cpu"
    assert curve_points(w, run) == 5                 # log_interval 2 over 10 steps
    assert curve_points(w, run, "val_loss") == 2     # eval_interval 5
    assert curve_points(w, run, "tokens_per_s") == 5 and curve_points(w, run, "lr") == 5
    assert run.run_dir.parent.name == "runs" and (run.run_dir / "last.json").exists()
    lines = (run.run_dir / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 7
    # the user's project is untouched, and the log says what happened
    assert snapshot(w.doc.graph) == before and not w.isWindowModified()
    log = w.training.output.log.toPlainText()
    assert "Run #1" in log and "validation loss" in log and "sample at step 5" in log
    assert "finished at step 10" in log and str(run.run_dir) in log
    assert w.act.train.isEnabled() and not w.act.stop.isEnabled() and w.banner.isHidden()


def test_the_run_trains_a_snapshot_so_edits_cannot_race_it(qtbot, tiny):
    w = tiny
    w.training.pause()  # nothing to pause yet: Pause only works on a run
    run = w.training.train()
    w.training.pause()  # hold the run at its first step while we edit
    assert not w.banner.isHidden() and "snapshot" in w.banner.text()
    w.doc.set_param("lstm1", "num_output", 24)
    w.training.resume()
    qtbot.waitSignal(w.training.run_ended, timeout=60_000).wait()
    saved = json.loads((run.run_dir / "project.json").read_text())
    lstm = next(la for la in saved["graph"]["layers"] if la["name"] == "lstm1")
    assert lstm["params"]["num_output"] == 16 and run.state == "finished"
    assert w.doc.graph.layer("lstm1").params["num_output"] == 24


def test_pause_holds_the_run_and_resume_finishes_it(qtbot, tiny):
    w = tiny
    run = w.training.train()
    w.act.pause.trigger()
    assert w.act.resume.isVisible() and not w.act.pause.isVisible()
    qtbot.waitUntil(lambda: run.state == "paused", timeout=60_000)
    step = run.step
    for _ in range(20):
        QApplication.processEvents()
    assert run.step == step and w.training.busy
    w.act.resume.trigger()
    assert w.act.pause.isVisible() and not w.act.resume.isVisible()
    qtbot.waitSignal(w.training.run_ended, timeout=60_000).wait()
    assert run.state == "finished" and run.step == 10
    assert "paused at step" in w.training.output.log.toPlainText()


def test_stop_ends_the_run_with_a_checkpoint(qtbot, tiny):
    from designer.training.run import checkpoint
    w = tiny
    run = w.training.train(steps=100_000)
    qtbot.waitUntil(lambda: run.step >= 2, timeout=60_000)
    with qtbot.waitSignal(w.training.run_ended, timeout=60_000):
        w.act.stop.trigger()
    assert run.state == "stopped" and 2 <= run.step < 100_000
    assert checkpoint.load(run.run_dir, "last").step == run.step


def test_closing_the_window_mid_run_stops_it_and_saves_a_checkpoint(qtbot, tiny):
    from designer.training.run import checkpoint
    w = tiny
    run = w.training.train(steps=100_000)
    qtbot.waitUntil(lambda: run.step >= 2, timeout=60_000)
    assert w.close()
    assert not w.training.busy and run.state == "stopped"
    assert checkpoint.load(run.run_dir, "last").step == run.step


def test_a_second_train_waits_for_the_first(qtbot, tiny):
    w = tiny
    first = w.training.train(steps=100_000)
    assert w.training.train() is None and not w.act.train.isEnabled()
    assert "already training" in w.statusBar().currentMessage()
    with qtbot.waitSignal(w.training.run_ended, timeout=60_000):
        w.training.stop()
    assert first.state in ("stopped", "ended")


def test_an_invalid_net_is_not_trained(qtbot, tiny):
    w = tiny
    w.doc.disconnect(next(k for k in w.doc.graph.links() if k.dst == "loss"))
    assert w.training.train() is None
    assert "cannot train yet" in w.statusBar().currentMessage()
    assert len(w.training.runs) == 0


def test_bad_data_is_reported_in_the_window_and_the_app_goes_on(qtbot, tiny, tmp_path):
    w = tiny
    (tmp_path / "corpus.txt").unlink()
    before = snapshot(w.doc.graph)
    run = train_and_wait(qtbot, w)
    assert run.state == "failed"
    assert w.notices and w.notices[0][0] == "Training failed"
    assert "corpus.txt" in w.notices[0][1]
    assert "corpus.txt" in w.training.output.log.toPlainText()
    assert "Training failed" in w.statusBar().currentMessage()
    assert snapshot(w.doc.graph) == before and w.act.train.isEnabled()
    (tmp_path / "corpus.txt").write_text("abc " * 400)  # fixed: the next run trains
    assert train_and_wait(qtbot, w).state == "finished"


def test_an_unexpected_error_in_the_worker_is_caught_with_its_traceback(qtbot, tiny,
                                                                        monkeypatch):
    import designer.training.run.loop as loop

    def broken(project, opts, token):
        yield {"kind": "note", "step": 0, "message": "about to fail"}
        raise ZeroDivisionError("a bug in the trainer")

    monkeypatch.setattr(loop, "train", broken)
    run = train_and_wait(qtbot, tiny)
    assert run.state == "failed"
    log = tiny.training.output.log.toPlainText()
    assert "unexpected ZeroDivisionError" in log and "Traceback" in log
    assert "Traceback" not in tiny.notices[0][1]  # the message is a sentence...
    assert tiny.isVisible()                        # ...and the app is still here


def test_a_nan_stop_is_shown_as_an_error(qtbot, tiny, monkeypatch):
    import designer.training.run.loop as loop

    def diverging(project, opts, token):
        yield {"kind": "start", "step": 0, "steps": 10, "device": "cpu", "device_name": "CPU",
               "run_dir": opts.out, "engines": {}, "params": 1, "data": "", "notes": [],
               "seed": 1, "resumed": False}
        yield {"kind": "error", "step": 4, "message": "the loss was not a finite number for "
               "5 steps in a row"}
        yield {"kind": "done", "step": 4, "reason": "nan", "best_val_loss": None, "time": 0.1,
               "run_dir": opts.out}

    monkeypatch.setattr(loop, "train", diverging)
    run = train_and_wait(qtbot, tiny)
    assert run.state == "nan"
    assert tiny.notices == [("Training stopped", "the loss was not a finite number for 5 "
                                                 "steps in a row")]
    assert "stopped: NaN" in [tiny.training.charts.panel.table.topLevelItem(0).text(6)]


def test_a_diverging_run_is_told_in_the_log_the_table_and_on_the_loss_chart(qtbot, tiny,
                                                                            monkeypatch):
    import designer.training.run.loop as loop
    message = ("the loss has been above 5 times its best (1.000) since step 4 (now 9.000): "
               "the run has probably diverged")

    def diverging(project, opts, token):
        yield {"kind": "start", "step": 0, "steps": 10, "device": "cpu", "device_name": "CPU",
               "run_dir": opts.out, "engines": {}, "params": 1, "data": "", "notes": [],
               "seed": 1, "resumed": False}
        for step, loss in ((2, 1.0), (4, 6.0), (6, 9.0)):
            yield {"kind": "train", "step": step, "loss": loss, "lr": 0.1, "tokens_per_s": 1.0,
                   "ms_per_step": 1.0, "grad_norm": 1.0, "skipped": 0, "time": 0.1 * step}
        yield {"kind": "warning", "step": 6, "since": 4, "loss": 9.0, "best_loss": 1.0,
               "message": message, "time": 0.6}
        yield {"kind": "done", "step": 10, "reason": "finished", "best_val_loss": None,
               "time": 1.0, "run_dir": opts.out}

    monkeypatch.setattr(loop, "train", diverging)
    run = train_and_wait(qtbot, tiny)
    assert run.state == "finished" and run.events == [("diverging", 6.0, 0.6, message)]
    assert "warning: " + message in tiny.training.output.log.toPlainText()
    assert "diverged" in tiny.training.charts.panel.table.topLevelItem(0).text(6)
    panel = tiny.training.charts.panel
    panel.refresh()
    markers = panel.curves[id(run)].markers
    assert len(markers) == 1 and markers[0].value() == 6.0 and markers[0] in panel.loss.items
    panel.x_axis.setCurrentIndex(1)  # wall-clock time: the marker follows
    assert markers[0].value() == pytest.approx(0.6)


def test_engine_and_device_pickers_set_the_run(qtbot, tiny):
    w = tiny
    c = w.training
    assert [c.device_picker.itemData(i).device for i in range(2)] == ["auto", "cpu"]
    assert c.device_picker.device() == "cpu"  # the project's setting
    c.engine_picker.select("caffe")
    run = train_and_wait(qtbot, w)
    assert run.engines == {"lstm1": "CAFFE"} and "unrolled" in run.label
    assert w.doc.graph.layer("lstm1").params["engine"] == "CUDNN"  # the project is unchanged


@pytest.mark.parametrize("device", ["cuda:3"])
def test_a_missing_gpu_is_a_clear_error(qtbot, tiny, device):
    run = train_and_wait(qtbot, tiny, steps=2, device=device)
    assert run.state == "failed"
    assert "CUDA" in tiny.notices[0][1] or "GPU" in tiny.notices[0][1]
    assert isinstance(run, Run)


def test_closing_mid_run_exits_the_process_with_code_0(tmp_path):
    """The whole app, in its own process: start a long run, close the window as a user
    would; the process ends normally (no abort from a running thread) with a checkpoint."""
    import os
    import subprocess
    import sys
    from tests.conftest import ROOT
    code = (
        "import sys\n"
        "from PySide6.QtCore import QTimer\n"
        "from designer.ui.shell.app import make_app\n"
        "from designer.ui.shell.main_window import MainWindow\n"
        "app = make_app()\n"
        "w = MainWindow(restore=False)\n"
        f"w.files.open_path({str(tiny_project(tmp_path))!r})\n"
        "w.show()\n"
        "run = w.training.train(steps=100_000)\n"
        "def check():\n"
        "    if run.step >= 2: w.close()\n"
        "    else: QTimer.singleShot(20, check)\n"
        "QTimer.singleShot(20, check)\n"
        "code = app.exec()\n"
        "print(run.state, run.step, run.run_dir)\n"
        "sys.exit(code)\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Destroyed while thread" not in done.stderr
    state, step, folder = done.stdout.split()
    assert state == "stopped" and int(step) >= 2
    assert json.loads((tmp_path / "runs" / folder.split("/")[-1] / "last.json").read_text()
                      )["step"] == int(step)


def test_a_corpus_download_shows_its_progress(qtbot, tiny, monkeypatch):
    import time
    import designer.training.run.loop as loop

    def downloading(project, opts, token):
        opts.download_progress(3 * 2**20, 6 * 2**20)
        while not token.stopped:  # "downloading" until the test has looked
            time.sleep(0.005)
        return
        yield

    monkeypatch.setattr(loop, "train", downloading)
    w = tiny
    w.training.train()
    qtbot.waitUntil(lambda: "Downloading" in w.training.status.text(), timeout=30_000)
    assert w.training.status.text() == "Downloading the corpus: 3.0 of 6.0 MiB\u2026"
    assert w.training.progress.maximum() == 6 * 2**20
    with qtbot.waitSignal(w.training.run_ended, timeout=30_000):
        w.training.stop()


def test_the_device_picker_keeps_the_users_choice_across_setting_edits(tiny):
    c = tiny.training
    c.device_picker.select("auto")
    tiny.doc.set_setting("training", "eval_interval", 7)
    assert c.device_picker.device() == "auto"          # the user's pick stays
    tiny.doc.set_setting("training", "device", "auto")
    tiny.doc.set_setting("training", "device", "cpu")
    assert c.device_picker.device() == "cpu"           # the project's new setting is shown


def test_the_engine_set_in_the_properties_panel_is_the_one_that_trains(qtbot, tiny):
    w = tiny
    w.scene.select_layers(["lstm1"])
    editor = w.properties.layer_panel.form().editors["engine"]
    editor.setCurrentIndex(editor.choices.index("CAFFE"))  # as a user picks it
    assert w.doc.graph.layer("lstm1").params["engine"] == "CAFFE"
    run = train_and_wait(qtbot, w)
    assert run.engines == {"lstm1": "CAFFE"} and "unrolled" in run.label


def test_the_status_line_says_what_the_first_step_does_until_a_step_is_logged(qtbot, tiny,
                                                                              monkeypatch):
    from designer.training.run.record_format import first_steps_text
    shown = []
    set_text = type(tiny.training.status).setText
    monkeypatch.setattr(tiny.training.status, "setText",
                        lambda text: (shown.append(text), set_text(tiny.training.status, text)))
    train_and_wait(qtbot, tiny)
    first = shown.index(first_steps_text("cpu"))
    assert shown[first - 1].startswith("Starting:") and shown[first + 1].startswith("Run #1: step 2/")
    assert "compiles and times its kernels" in first_steps_text("cuda:0")
    assert "compiles" not in first_steps_text("cpu")


def test_the_status_bar_names_where_the_checkpoints_went_in_a_line_that_fits(qtbot, tiny):
    run = train_and_wait(qtbot, tiny)
    message = tiny.statusBar().currentMessage()
    assert message.startswith("Run #1 finished at step 10; checkpoints in \u2026/")
    assert "/".join(run.run_dir.parts[-3:]) in message and str(run.run_dir) not in message
    assert str(run.run_dir) in tiny.training.output.log.toPlainText()
