""""Search over" in the Properties form: a parameter's range written into the project's
search section and taken out again, each an undoable step, marked in the form; a range the
search would refuse is refused in the editor with the search's own sentence; a renamed layer
takes its search entries along."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from designer.ui.forms import search_over
from designer.ui.forms.search_over import SearchRangeDialog
from tests.conftest import DATA, need_data


def answer(monkeypatch, fill):
    """The range editor, when it opens, is filled by ``fill(dialog)`` instead of a user."""
    def exec_(dialog):
        fill(dialog)
        return QDialog.Accepted if dialog.result_entry is not None else QDialog.Rejected
    monkeypatch.setattr(SearchRangeDialog, "exec", exec_)


def test_a_layer_parameter_is_searched_over_and_back_undoably(tiny, monkeypatch, qtbot):
    w = tiny
    doc, panel = w.doc, w.properties.layer_panel
    assert doc.project.search == {}
    w.scene.select_layers(["lstm1"])
    form = panel.form()
    button = form.searches["num_output"]
    assert not button.isChecked() and not form.searched["num_output"].isVisibleTo(form)

    def range_16_to_64(d):
        assert d.low.text() == "4" and d.high.text() == "64"  # around the value, 16
        d.low.setText("16")
        d.log.setChecked(True)
        d._accept()
    answer(monkeypatch, range_16_to_64)
    button.click()
    assert doc.project.search == {"lstm1.num_output": {"int": [16, 64], "log": True}}
    assert doc.stack.undoText() == "Search over lstm1.num_output (16 to 64, log scale)"
    assert button.isChecked() and form.searched["num_output"].isVisibleTo(form)
    assert form.searched["num_output"].text() == \
        "\u21c4 searched over: 16 to 64, log scale"
    assert w.isWindowModified()
    w.act.undo.trigger()
    assert doc.project.search == {} and not button.isChecked()
    assert not form.searched["num_output"].isVisibleTo(form)
    w.act.redo.trigger()
    assert doc.project.search["lstm1.num_output"] == {"int": [16, 64], "log": True}

    answer(monkeypatch, lambda d: d._remove())  # Stop Searching
    button.click()
    assert doc.project.search == {} and not button.isChecked()
    assert doc.stack.undoText() == "Stop searching over lstm1.num_output"
    w.act.undo.trigger()
    assert "lstm1.num_output" in doc.project.search and button.isChecked()

    answer(monkeypatch, lambda d: d.reject())  # cancelled: nothing changes
    count = doc.stack.count()
    button.click()
    assert doc.stack.count() == count and button.isChecked()


def test_a_solver_setting_is_searched_over_as_a_list_or_a_range(tiny, monkeypatch):
    w = tiny
    doc, form = w.doc, w.properties.solver.form
    answer(monkeypatch, lambda d: d._accept())  # the first range offered: around 0.01, log
    form.searches["base_lr"].click()
    assert doc.project.search == {"solver.base_lr": {"float": [0.001, 0.1], "log": True}}

    def adam_or_sgd(d):
        for i in range(d.choices.count()):
            item = d.choices.item(i)
            item.setCheckState(search_over.Qt.Checked if item.text() in ("Adam", "SGD")
                               else search_over.Qt.Unchecked)
        d._accept()
    answer(monkeypatch, adam_or_sgd)
    form.searches["type"].click()
    assert doc.project.search["solver.type"] == {"choice": ["SGD", "Adam"]}
    assert form.searched["type"].text() == "\u21c4 searched over: one of SGD, Adam"
    doc.save()
    from designer.graph.project import load
    assert load(doc.path).search == doc.project.search


def test_the_editor_refuses_what_the_search_would_refuse(tiny):
    doc = tiny.doc
    spec = doc.graph.layer("lstm1").spec.param("num_output")
    d = SearchRangeDialog("lstm1.num_output", spec, None, 16, doc.project)
    d.low.setText("64")
    d.high.setText("16")
    assert not d.ok.isEnabled() and d.error.text()
    d.high.setText("256")
    assert d.ok.isEnabled() and not d.error.isVisibleTo(d)
    d.low.setText("0")
    assert not d.ok.isEnabled()          # below num_output's minimum
    d.low.setText("lots")
    assert d.error.text() == "Num_output takes whole numbers"
    d.mode.setCurrentIndex(1)            # these values
    d.values.setText("32, 64, 128")
    assert d.ok.isEnabled() and d.entry() == {"choice": [32, 64, 128]}


def test_a_renamed_layer_takes_its_search_entries_along(tiny, monkeypatch):
    w = tiny
    doc, panel = w.doc, w.properties.layer_panel
    w.scene.select_layers(["lstm1"])
    answer(monkeypatch, lambda d: d._accept())
    panel.form().searches["num_output"].click()
    count = doc.stack.count()
    panel.name_edit.setText("rnn")
    panel.name_edit.editingFinished.emit()
    assert "rnn" in doc.graph and list(doc.project.search) == ["rnn.num_output"]
    assert doc.stack.count() == count + 1 and panel.form().searches["num_output"].isChecked()
    w.act.undo.trigger()
    assert "lstm1" in doc.graph and list(doc.project.search) == ["lstm1.num_output"]


def test_what_the_form_has_no_row_for_is_said_under_its_parameters(tiny):
    w = tiny
    w.doc.project.search["lstm1.type"] = {"choice": ["LSTM", "GRU"]}
    w.scene.select_layers(["lstm1"])
    design = w.properties.layer_panel.design
    assert design.searched.isVisibleTo(design)
    assert design.searched.text() == "\u21c4 searched over: its type: one of LSTM, GRU"
    w.scene.select_layers(["embed"])
    assert not design.isVisibleTo(w.properties.layer_panel)  # no choice, nothing searched


def test_a_recurrent_layers_type_is_searched_over_from_its_button(tiny, monkeypatch):
    w = tiny
    doc, design = w.doc, w.properties.layer_panel.design
    w.scene.select_layers(["lstm1"])
    shown = {k for k, b in design.buttons.items() if b.isVisibleTo(design)}
    assert shown == {"type"}

    def lstm_or_gru(d):
        for i in range(d.choices.count()):  # every recurrent type is offered, all ticked
            item = d.choices.item(i)
            item.setCheckState(Qt.Checked if item.text() in ("LSTM", "GRU") else Qt.Unchecked)
        d._accept()
    answer(monkeypatch, lstm_or_gru)
    design.buttons["type"].click()
    assert doc.project.search == {"lstm1.type": {"choice": ["LSTM", "GRU"]}}
    assert "one of LSTM, GRU" in design.searched.text()
    w.act.undo.trigger()
    assert doc.project.search == {} and not design.searched.isVisibleTo(design)


@need_data("ucr/GunPoint_TRAIN.ts")
def test_a_convolution_block_and_a_join_offer_their_own_choices(window, tmp_path, monkeypatch):
    from designer.training.new_from_data.init import init_project
    path, _ = init_project(DATA / "ucr/GunPoint_TRAIN.ts", out=tmp_path / "gunpoint.json",
                           net="lstm-fcn")
    assert window.files.open_path(path, confirmed=True)
    design = window.properties.layer_panel.design
    for layer, key in (("conv2", "residual"), ("features", "inputs"), ("bn2", None),
                       ("loss", None), ("data", None)):
        window.scene.select_layers([layer])
        shown = {k for k, b in design.buttons.items() if b.isVisibleTo(design)}
        assert shown == ({key} if key else set())
    window.scene.select_layers(["conv2"])
    answer(monkeypatch, lambda d: d._accept())  # as offered: true and false
    design.buttons["residual"].click()
    assert window.doc.project.search["conv2.residual"] == {"choice": [True, False]}
    assert "its residual: one of true, false" in design.searched.text()
    assert window.doc.stack.undoText() == "Search over conv2.residual (one of true, false)"
