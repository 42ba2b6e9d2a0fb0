"""Continuing a run from its last checkpoint: from the runs table (or File > Open Run...),
on the engine picked in the toolbar, in the same folder, its curves going on."""
import json

from designer.ui.resume import continue_run
from tests.ui.conftest import train_and_wait


def test_a_finished_run_continues_on_the_other_engine_in_its_own_folder(qtbot, tiny):
    w = tiny
    first = train_and_wait(qtbot, w)                  # 10 steps on cuDNN
    assert first.state == "finished" and first.step == 10
    w.training.engine_picker.select("caffe")
    w.doc.set_param("lstm1", "num_output", 24)        # the window's project differs now
    with qtbot.waitSignal(w.training.run_ended, timeout=60_000):
        run = continue_run(w.training, first.run_dir, until=16)
    assert run is first and len(w.training.runs) == 1  # the same row goes on
    assert run.state == "finished" and run.step == 16 and run.engines == {"lstm1": "CAFFE"}
    steps = run.series["loss"].column("step").tolist()
    assert steps == [2, 4, 6, 8, 10, 12, 14, 16]      # nothing twice, nothing lost
    times = run.series["loss"].column("time").tolist()
    assert times == sorted(times)                      # its clock goes on too
    log = w.training.output.log.toPlainText()
    assert f"continuing {first.run_dir} from its last checkpoint" in log
    assert "weights were converted to the lstm1 CAFFE engine" in log
    records = [json.loads(x) for x in (first.run_dir / "metrics.jsonl").read_text()
               .splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == steps
    saved = json.loads((first.run_dir / "project.json").read_text())  # its own project
    assert next(la for la in saved["graph"]["layers"]
                if la["name"] == "lstm1")["params"]["num_output"] == 16


def test_the_runs_table_menu_asks_until_when_and_continues(qtbot, tiny, monkeypatch):
    from designer.ui.resume import dialog
    w = tiny
    first = train_and_wait(qtbot, w)
    asked = []

    def ask(window, folder, meta, project, default, controller):
        asked.append((folder, meta["step"], default))
        return 14

    monkeypatch.setattr(dialog, "ask_until", ask)
    with qtbot.waitSignal(w.training.run_ended, timeout=60_000):
        w.training.runs.continue_requested.emit(first)  # "Continue Training..." in its menu
    assert asked == [(first.run_dir, 10, 20)]          # at max_steps: as many again
    assert first.step == 14 and first.state == "finished"


def test_a_folder_without_a_checkpoint_is_refused_in_a_sentence(qtbot, tiny, tmp_path):
    w = tiny
    said = []
    w.alert = lambda title, text, details="": said.append(text)
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    assert continue_run(w.training, empty) is None
    assert said == [f"{empty.resolve()} holds no run to continue (no last checkpoint)"]
    assert not w.training.busy and len(w.training.runs) == 0
