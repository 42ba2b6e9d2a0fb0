"""The Inspect view (finished runs and live ones), surprise colouring in the output window,
and the parity chart under the unrolled view."""
import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from designer.ui.inspect.search import PatternError, find_units
from designer.ui.shell import actions
from tests.ui.conftest import train_and_wait


def wait_inspected(qtbot, view, title_starts="", timeout=60_000, text=None):
    """Wait for the next drawn result whose title starts with ``title_starts`` (and, given
    ``text``, that read it: an inspection asked for earlier may still arrive first)."""
    def wanted(r) -> bool:
        if not r.get("title", "").startswith(title_starts):
            return False
        return text is None or "inspection" not in r or r["inspection"].probe.text == text

    with qtbot.waitSignal(view.inspected, timeout=timeout, check_params_cb=wanted) as blocker:
        pass
    return blocker.args[0]


@pytest.fixture
def inspected(qtbot, tiny):
    """A finished tiny run shown in the Inspect view."""
    run = train_and_wait(qtbot, tiny)
    view = tiny.show_inspect(run)
    if view.result is None:  # the result comes through the event loop, not before the wait
        wait_inspected(qtbot, view)
    return tiny, run, view


def test_a_finished_run_is_shown_step_by_step(inspected):
    w, run, view = inspected
    assert w.tabs.currentWidget() is view and view.current_run() is run
    seen = view.result["inspection"]
    text = seen.probe.text
    assert seen.probe.origin == "held-out text of corpus.txt" and 2 <= len(text) <= 100
    assert view.result["title"] == "best checkpoint, step 10"
    assert [view.level.itemData(i) for i in range(view.level.count())] == ["lstm1"]
    assert [view.quantity.itemData(i) for i in range(view.quantity.count())] == \
        ["i", "f", "o", "g", "c", "h"]
    assert view.quantity.currentData() == "c"
    image = view.charts.image.image
    assert image.shape == (len(text), 16)
    np.testing.assert_array_equal(image, seen.layers[0].c)
    assert view.charts.heat_axis.labels == list(text)  # the characters along x
    assert "mean surprise" in view.status.text() and "run #1" in view.status.text()
    view.quantity.setCurrentIndex(view.quantity.findData("f"))
    f = view.charts.image.image
    assert ((f >= 0) & (f <= 1)).all() and view.charts.bar.levels() == (0.0, 1.0)
    assert view.saturation.curves and not view.saturation.empty.isVisible()
    x, y = view.saturation.curves["all"].getData()
    assert list(x) == [5.0, 10.0] and ((0 <= y) & (y <= 100)).all()


def test_clicking_a_unit_draws_it_over_the_text(qtbot, inspected):
    w, run, view = inspected
    charts = view.charts
    heat = charts.heat
    point = heat.vb.mapViewToScene(QPointF(3.5, 7.5))  # step 3, unit 7
    charts.hovered.emit("")
    charts._moved(point)
    assert view.hover.text().startswith("step 3 reads") and "unit 7" in view.hover.text()

    class Click:
        def scenePos(self):
            return point

        def button(self):
            return Qt.LeftButton
    charts._clicked(Click())
    assert charts.unit == 7 and charts.marker.isVisible()
    panel = view.unit_panel
    assert panel.unit.value() == 7 and "Unit 7" in panel.title.text()
    doc = panel.text.document()
    assert doc.toPlainText().replace("\u21b5", "") == view.result["inspection"].probe.text
    cursor = QTextCursor(doc)
    cursor.setPosition(1)
    assert "unit 7" in cursor.charFormat().toolTip()


def test_units_that_follow_a_pattern_are_found(inspected):
    w, run, view = inspected
    panel = view.unit_panel
    panel.pattern.setEditText("[aeiou]")
    assert panel.search() and panel.results.count() == 10
    rs = [abs(float(panel.results.item(i).text().split("r = ")[1].split()[0]))
          for i in range(10)]
    assert rs == sorted(rs, reverse=True)
    panel._result_clicked(panel.results.item(0))
    assert view.charts.unit == panel.results.item(0).data(Qt.UserRole)
    panel.pattern.setEditText("(")
    assert not panel.search() and "is not a regular expression" in panel.message.text()


def test_typed_text_is_inspected_and_unknown_characters_are_refused(qtbot, inspected):
    w, run, view = inspected
    view.text.setText("Speak, speak.")
    view.refresh()
    result = wait_inspected(qtbot, view, text="Speak, speak.")
    assert result["inspection"].probe.text == "Speak, speak."
    assert view.charts.heat_axis.labels == list("Speak, speak.")
    view.text.setText("Speak, Zorro!")
    view.refresh()
    with qtbot.waitSignal(view.inspected, timeout=60_000) as blocker:
        pass
    assert "which the model never saw" in blocker.args[0]["message"]
    assert "which the model never saw" in view.status.text()


def test_find_units_ranks_by_correlation_with_the_pattern():
    text = "ab ab ab ab"
    follows = np.array([1.0 if c == " " else 0.0 for c in text])
    values = np.stack([np.zeros(len(text)), -follows, np.linspace(0, 1, len(text)),
                       follows * 0.5 + 0.1], axis=1)
    marks, ranked = find_units(values, text, " ", count=4)
    assert list(marks) == list(follows)
    assert [u for u, _ in ranked[:2]] in ([1, 3], [3, 1])
    assert dict(ranked)[1] == pytest.approx(-1.0) and dict(ranked)[3] == pytest.approx(1.0)
    assert dict(ranked)[0] == 0.0
    with pytest.raises(PatternError, match="matches nothing"):
        find_units(values, text, "z")
    with pytest.raises(PatternError, match="matches every character"):
        find_units(values, text, ".")


def test_the_saturation_note_stands_in_for_the_plot_and_the_legend_sits_below_it(qtbot):
    from designer.ui.inspect.charts import SaturationChart
    chart = SaturationChart()
    qtbot.addWidget(chart)
    chart.resize(460, 280)
    chart.show()
    qtbot.waitExposed(chart)
    assert chart.set_history([], "lstm1") == 0
    assert chart.empty.isVisible() and not chart.plot_widget.isVisible()
    assert "No measurement yet" in chart.empty.text()
    history = [(50, {"lstm1": {"i": 0.3, "f": 0.1, "all": 0.2}})]
    assert chart.set_history(history, "lstm1", "lstm1 level 1 of 2") == 1
    assert chart.plot_widget.isVisible() and not chart.empty.isVisible()
    plot = chart.plot_widget.getPlotItem()
    box = plot.getViewBox()

    def legend_below_the_plot() -> None:  # polled: the plot lays itself out after the event
        assert len(chart.legend.items) == 3
        legend = chart.legend.sceneBoundingRect()
        assert legend.top() >= box.sceneBoundingRect().bottom()
        assert chart.plot_widget.rect().contains(
            chart.plot_widget.mapFromScene(legend).boundingRect())

    qtbot.waitUntil(legend_below_the_plot, timeout=60_000)
    (x0, x1), (y0, y1) = box.viewRange()
    assert x0 <= 0 and x1 >= 50 and -5 < y0 <= 0 and y1 >= 30  # a share: from 0 up
    assert chart.set_history(history, "lstm2") == 0 and chart.empty.isVisible()


def test_the_view_follows_a_training_run_live(qtbot, tiny):
    w = tiny
    view = w.show_inspect()
    assert "Train a run" in view.status.text()
    # a run that goes on until it is stopped: however slow the machine, the view has the
    # time to follow it (a 30-step run could end before its first live inspection)
    w.training.train(steps=100_000)
    result = wait_inspected(qtbot, view, "live", timeout=120_000)
    run = w.training.run
    assert view.current_run() is run and result["inspection"].step >= 1
    assert any(step == result["inspection"].step for step, _ in run.saturation)
    best = lambda r: r.get("title", "").startswith("best")  # noqa: E731
    with qtbot.waitSignal(view.inspected, timeout=120_000, check_params_cb=best) as ended:
        w.training.stop()  # the run's end: its best checkpoint is inspected
    assert ended.args[0]["inspection"].step % 5 == 0  # a validation step


def test_the_view_asks_for_no_weights_while_it_is_hidden(qtbot, tiny):
    w = tiny
    view = w.show_inspect()
    w.tabs.setCurrentIndex(0)  # the Design tab: the view is hidden
    seen = []
    w.training.train(steps=12)
    tap = w.training.tap
    view.inspected.connect(seen.append)
    qtbot.waitSignal(w.training.run_ended, timeout=60_000).wait()
    assert not tap.armed and not any(r.get("title", "").startswith("live") for r in seen)


def test_samples_and_the_held_out_snippet_are_coloured_by_surprise(qtbot, tiny):
    train_and_wait(qtbot, tiny)
    log = tiny.training.output.log
    text = log.toPlainText()
    assert "held-out snippet at step 5: mean surprise" in text
    assert "Surprise per character, nats" in text
    doc = log.document()
    found = 0
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if "top 5 guesses here" in fmt.toolTip():
                found += 1
            it += 1
        block = block.next()
    assert found > 50  # every scored character carries its guesses


def test_generated_text_is_coloured_and_hover_shows_the_top_guesses(qtbot, tiny):
    train_and_wait(qtbot, tiny)
    actions.show_generate(tiny)
    panel = tiny.training.output.generate
    panel.prime.setText("First")
    panel.length.setValue(200)
    panel.seed.setValue(3)
    with qtbot.waitSignal(panel.busy_changed, timeout=60_000,
                          check_params_cb=lambda busy: not busy):
        assert panel.generate()
    assert "the model's own surprise" in panel.status.text()
    view = panel.texts.views[0]
    doc = view.document()
    cursor = QTextCursor(doc)
    cursor.setPosition(len("First") + 1)  # the first generated character
    fmt = cursor.charFormat()
    assert "top 5 guesses here" in fmt.toolTip() and fmt.background().color().alpha() >= 0
    view.resize(600, 300)
    rect = view.cursorRect(cursor)  # the position just after that character
    pos = QPoint(rect.x() - 3, rect.center().y())
    assert panel.texts.tips[0].char_at(pos) == len("First")
    assert panel.texts.tips[0].tip_at(pos) == fmt.toolTip()


def test_parity_per_step_is_charted_under_the_unrolled_view(qtbot, tiny):
    run = train_and_wait(qtbot, tiny)
    assert tiny._weights_for("lstm1") == (run.run_dir, "run #1")
    view = tiny.show_unrolled("lstm1")
    view.toggle_parity(True)
    panel = view.parity
    with qtbot.waitSignal(panel.service.finished, timeout=60_000):
        pass
    assert "cuDNN vs unrolled, weights of run #1 at step 10" in panel.status.text()
    assert "within the tolerance of 1e-05" in panel.status.text()
    x, y = panel.chart.output.getData()
    assert len(x) == panel.result["report"]["steps"] and (np.asarray(y) <= 1e-5).all()
    view.toggle_parity(False)
    assert not panel.isVisible()
    QApplication.processEvents()


def test_without_a_run_the_parity_uses_fresh_weights(qtbot, tiny):
    view = tiny.show_unrolled("lstm1")
    view.toggle_parity(True)
    with qtbot.waitSignal(view.parity.service.finished, timeout=60_000):
        pass
    assert "freshly initialised weights" in view.parity.status.text()


def test_closing_the_view_stops_its_thread_for_good(qtbot, inspected):
    w, run, view = inspected
    w._close_tab(w.tabs.indexOf(view))
    assert w.inspect_view is None and view.service.closed and view.service.thread is None
    view.refresh()  # a timer that fires after the close starts nothing
    assert view.service.submit({"what": "checkpoint"}) == -1 and view.service.thread is None


def test_a_digit_run_is_followed_live_too(qtbot, window, tmp_path):
    """Not only text: an MNIST run is inspected on a held-out digit, row by row."""
    from designer.graph import Graph
    from designer.graph.project import Project
    from tests.training.data.test_data_mnist import write_set
    write_set(tmp_path, "t10k", 120)
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": str(tmp_path), "batch_size": 10,
                                      "holdout": 30})
    g.add_layer("GRU", "gru1", {"num_output": 8, "batch_first": True})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10, "axis": 1})
    g.add_layer("SoftmaxWithLoss", "loss", {"axis": 1})
    for a, b in [("data.data", "gru1.x"), ("gru1.y", "ip1.x"), ("ip1.y", "loss.logits"),
                 ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    path = Project(g, "digits", "", {"type": "Adam", "max_steps": 20},
                   {"log_interval": 2, "eval_interval": 10, "eval_batches": 1,
                    "device": "cpu"}).save(tmp_path / "digits.json")
    window.notify = lambda *a, **k: None
    assert window.files.open_path(path, confirmed=True)
    view = window.show_inspect()
    window.training.train()
    result = wait_inspected(qtbot, view, "live")
    seen = result["inspection"]
    assert seen.probe.kind == "mnist" and seen.steps == 28 and seen.surprise is None
    assert [view.quantity.itemData(i) for i in range(view.quantity.count())] == \
        ["r", "z", "n", "h"]
    assert view.charts.heat_axis.labels is None  # rows, not characters: step numbers on x
    # a newer inspection (the run's end, its checkpoint) may be on its way: its status too
    # names the digit once drawn
    qtbot.waitUntil(lambda: "the digit is" in view.status.text(), timeout=60_000)
    assert not view.unit_panel.find.isEnabled()
    if window.training.busy:  # let the run end before the window goes
        with qtbot.waitSignal(window.training.run_ended, timeout=60_000):
            pass


# ------------------------------------------------------------- sequences and series --
@pytest.fixture(scope="module")
def classifier_dir(tmp_path_factory):
    """A sequence classifier (a tiny UEA .ts pair) trained a few steps on the CPU."""
    from tests.training.trained.test_inspect_run import sequence_run
    from tests.training.trained.test_sequence_commands import vowels_like
    tmp = tmp_path_factory.mktemp("classes")
    return sequence_run(tmp, vowels_like(tmp), "--net", "lstm-fcn")[0]  # a recurrent one


@pytest.fixture(scope="module")
def forecaster_dir(tmp_path_factory):
    """A forecaster (a tiny weekly CSV) trained a few steps on the CPU."""
    from tests.training.trained.test_inspect_run import sequence_run
    from tests.training.trained.test_sequence_commands import weekly
    tmp = tmp_path_factory.mktemp("series")
    return sequence_run(tmp, weekly(tmp, 160), "--horizon", "3")[0]


def show_folder(qtbot, window, folder):
    run = window.training.runs.add_folder(folder)
    view = window.show_inspect(run)
    if view.result is None or view.result.get("run") != run.number:
        wait_inspected(qtbot, view)
    return run, view


def test_a_classifier_shows_the_class_it_leans_to_after_every_step(qtbot, window,
                                                                   classifier_dir):
    run, view = show_folder(qtbot, window, classifier_dir)
    seen = view.result["inspection"]
    probe = seen.probe
    assert probe.kind == "classes" and probe.origin.startswith("test sequence 0 of 15")
    assert view.controls.text_label.text() == "Sequence"
    assert "class NAME" in view.text.placeholderText()
    charts = view.charts
    assert charts.reading.isVisible() and not charts.surprise.isVisible()
    assert sorted(charts.reading_curves) == [0, 1, 2]  # a line per class: up, flat, down
    x, y = charts.reading_curves[probe.target].getData()
    np.testing.assert_allclose(x, np.arange(probe.steps) + 0.5)
    np.testing.assert_allclose(y, seen.leaning[:, probe.target])
    assert "(true)" in charts.reading.titleLabel.text
    assert charts.image.image.shape == (probe.steps, 8)
    assert charts.heat_axis.labels == [str(t) for t in range(probe.steps)]
    x, y = charts.grad_mean.getData()
    assert len(x) == probe.steps and charts.one_loss  # the one loss at the sequence's end
    assert "the net says" in view.status.text()
    assert not view.unit_panel.find.isEnabled()
    view.text.setText("class down")
    view.refresh()

    def picked_down() -> None:  # an inspection asked for earlier may be drawn first
        picked = view.result["inspection"].probe
        assert picked.info["classes"][picked.target] == "down"
        assert "class down" in view.status.text()

    qtbot.waitUntil(picked_down, timeout=60_000)


def test_a_forecaster_shows_the_window_with_the_forecast_and_the_truth(qtbot, window,
                                                                      forecaster_dir):
    run, view = show_folder(qtbot, window, forecaster_dir)
    seen = view.result["inspection"]
    probe, curves = seen.probe, view.charts.reading_curves
    assert probe.kind == "series" and view.controls.text_label.text() == "Window"
    t_ = probe.steps
    x, y = curves["history"].getData()
    np.testing.assert_allclose(y, np.asarray(probe.info["history"])[:, 0])
    x, y = curves["forecast"].getData()  # from the last value read, on after the window
    np.testing.assert_allclose(x, np.arange(t_ - 1, t_ + 3) + 0.5)
    np.testing.assert_allclose(y[1:], seen.forecast[:, 0])
    x, y = curves["truth"].getData()
    np.testing.assert_allclose(y, np.asarray(probe.info["truth"])[:, 0])
    assert "forecast RMSE" in view.status.text()
    assert view.charts.image.image.shape == (t_, 8)


def test_a_run_that_cannot_be_inspected_leaves_nothing_of_the_last_one(qtbot, window,
                                                                      classifier_dir,
                                                                      forecaster_dir, tmp_path):
    import shutil
    run, view = show_folder(qtbot, window, forecaster_dir)
    assert view.charts.reading_curves and view.level.count()
    broken = tmp_path / "broken"
    shutil.copytree(classifier_dir, broken)
    shutil.rmtree(broken / "checkpoints")
    shutil.rmtree(broken / "final", ignore_errors=True)  # the final model's checkpoint too
    (broken / "final.json").unlink(missing_ok=True)
    other = window.training.runs.add_folder(broken)
    window.show_inspect(other)
    with qtbot.waitSignal(view.inspected, timeout=60_000) as blocker:
        pass
    assert "message" in blocker.args[0]

    def nothing_left(v) -> None:
        assert v.result is None and v.charts.values is None
        assert v.charts.image.image is None and not v.charts.reading_curves
        assert not v.charts.reading.isVisible() and v.level.count() == v.quantity.count() == 0
        assert v.unit_panel.values is None and v.unit_panel.text.toPlainText() == ""

    nothing_left(view)
    status = view.status.text()
    assert status.startswith(f"Run #{other.number} cannot be inspected: ") and "the checkpoint " \
        "is incomplete" in status and status.endswith(".") and status.count(". ") == 0
    # a pick that names no sequence: said, and the run shown before is not left standing
    view.select_run(run)
    wait_inspected(qtbot, view)
    view.text.setText("99")
    view.refresh()
    with qtbot.waitSignal(view.inspected, timeout=60_000):
        pass
    nothing_left(view)
    assert view.status.text().startswith(f"Run #{run.number} cannot be inspected: there is no "
                                         "test window 99")


def test_a_classifier_is_followed_live_on_its_first_test_sequence(qtbot, window, tmp_path):
    from designer.cli import main
    from designer.graph import project as P
    from tests.training.trained.test_sequence_commands import vowels_like
    path = tmp_path / "toy.json"
    assert main(["init", "--data", vowels_like(tmp_path), "--net", "lstm-fcn", "--out",
                 str(path)]) == 0
    p = P.load(path)
    p.graph.set_param("lstm1", "num_output", 8)
    p.solver["max_steps"] = 20
    p.training.update(eval_interval=10, log_interval=2, device="cpu")
    p.save(path)
    window.notify = lambda *a, **k: None
    assert window.files.open_path(path, confirmed=True)
    view = window.show_inspect()
    window.training.train()
    result = wait_inspected(qtbot, view, "live")
    seen = result["inspection"]
    assert seen.probe.kind == "classes" and seen.probe.origin.startswith("test sequence 0")
    assert seen.leaning.shape == (seen.steps, 3) and view.charts.reading_curves
    if window.training.busy:  # let the run end before the window goes
        with qtbot.waitSignal(window.training.run_ended, timeout=60_000):
            pass
    run = window.training.runs.runs[-1]
    assert run.saturation  # the gates were measured at the validations
