"""The small things a user trips over: the status bar's zoom is labelled, a paused run says the
step it paused at, the stop message is never cut, the charts' legend never covers the curves,
and Enter in New from Data's file field reads that file instead of opening Browse."""
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog

from designer.ui.runs.run import Run
from designer.ui.sequences import menu as sequences_menu


def settle(qtbot, ms: int = 50) -> None:
    qtbot.wait(ms)
    QApplication.processEvents()


def test_the_zoom_in_the_status_bar_says_it_is_the_zoom(char_rnn):
    w = char_rnn
    w.view.set_zoom(0.74)
    assert w.zoom_label.text() == "Zoom 74%" and "zoom" in w.zoom_label.toolTip().lower()


def test_a_paused_run_shows_the_step_it_paused_at_and_the_stop_message_is_never_cut(qtbot,
                                                                                     tiny):
    w = tiny
    w.resize(1366, 768)  # a laptop's width: everything in the status bar competes for it
    run = w.training.train(steps=100_000)
    qtbot.waitUntil(lambda: run.step >= 2, timeout=60_000)
    w.training.pause()
    qtbot.waitUntil(lambda: run.state == "paused", timeout=60_000)
    status = w.training.status
    assert status.text() == f"Run #1: step {run.step:,}/100,000  \u00b7  paused"
    assert "Paused at" not in w.statusBar().currentMessage()
    with qtbot.waitSignal(w.training.run_ended, timeout=60_000):
        w.training.stop()
        assert status.text().endswith("stopping after this step and saving a checkpoint\u2026")
        settle(qtbot)
        assert status.width() >= status.fontMetrics().horizontalAdvance(status.text())
        assert w.summary.is_cut() or w.summary.width() >= \
            w.summary.fontMetrics().horizontalAdvance(w.summary.text())


def test_the_runs_table_is_the_charts_legend_and_nothing_lies_over_the_curves(tiny):
    w = tiny
    w.training.show_docks()
    charts = w.training.charts.panel
    for name in ("first", "second"):
        run = Run(w.training.runs.next_number(), name, None)
        w.training.runs.add(run)
        for i in range(20):
            run.add({"kind": "train", "step": i + 1, "loss": 3 - i / 10, "lr": 1e-3,
                     "tokens_per_s": 5e4, "time": i * 0.01})
    charts.refresh()
    over = [item for item in charts.loss.getViewBox().allChildren()
            if isinstance(item, pg.LegendItem)]
    assert over == [] and charts.table.topLevelItemCount() == 2
    assert [charts.table.topLevelItem(i).text(0) for i in range(2)] == ["#1 first",
                                                                         "#2 second"]
    assert "table below names them" in charts.loss_widget.toolTip()


def test_enter_in_the_data_file_field_reads_the_file_and_never_opens_browse(window, qtbot,
                                                                             tmp_path,
                                                                             monkeypatch):
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: asked.append(a) or ("", "")))
    path = tmp_path / "weekly.csv"
    path.write_text("week,co2\n" + "".join(f"{i},{350 + i * 0.1}\n" for i in range(60)))
    dialog = sequences_menu.new_from_data(window)
    dialog.data_edit.setFocus()
    dialog.data_edit.setText(str(path))
    qtbot.keyClick(dialog.data_edit, Qt.Key_Return)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=30_000)
    assert asked == [] and dialog.isVisible() and dialog.created is None
    qtbot.keyClick(dialog.data_edit, Qt.Key_Return)  # again: still no Browse, nothing made
    settle(qtbot)
    assert asked == [] and dialog.isVisible() and dialog.created is None
    dialog.reject()


def test_a_message_in_the_status_bar_gets_the_room_the_summary_gives_up(char_rnn, qtbot):
    w = char_rnn
    w.resize(1366, 768)
    settle(qtbot)
    text = ("Run #2 finished at step 300; checkpoints in \u2026/window-clicks-kwxpbf5m/runs/"
            "char-rnn-small-20261129-040525")
    w.statusBar().showMessage(text, 20_000)
    settle(qtbot)
    room = w.summary.geometry().left() - (w.training.status.width() if
                                          w.training.status.isVisible() else 0)
    assert room >= w.statusBar().fontMetrics().horizontalAdvance(text)
    assert w.summary.is_cut() and w.summary.text() in w.summary.toolTip()
    w.statusBar().clearMessage()
    settle(qtbot)
    assert not w.summary.is_cut()
