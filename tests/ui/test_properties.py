"""The properties editor: a form generated from the layer's spec; every change goes through the
undo stack, and the canvas follows."""
from designer.graph.model import Link
from designer.ui.forms.param_editors import ChoiceEditor, FloatEditor, IntEditor, TextEditor
from tests.conftest import PROJECTS, need_data


def select(w, name):
    w.scene.select_layers([name])
    assert w.properties.layer == name
    return w.properties.layer_panel


def test_the_form_is_generated_from_the_spec_with_its_ranges_and_choices(char_rnn):
    panel = select(char_rnn, "lstm1")
    form = panel.form()
    units = form.editors["num_output"]
    assert isinstance(units, IntEditor) and (units.minimum(), units.maximum()) == (1, 1 << 20)
    assert units.value() == 512
    assert isinstance(form.editors["engine"], ChoiceEditor)
    assert form.editors["engine"].choices == ["AUTO", "CUDNN", "CAFFE", "PERSIST"]  # PERSIST:
    # LSTMs only
    dropout = form.editors["dropout_ratio"]
    assert isinstance(dropout, FloatEditor) and dropout.maximum() < 1.0
    assert "dropout between stacked layers" in dropout.toolTip()
    assert form.resets["num_output"].isVisibleTo(form)       # set in the project
    assert not form.resets["batch_first"].isVisibleTo(form)  # a default


@need_data("tinyshakespeare.txt")
def test_changing_a_parameter_updates_the_shapes_downstream(char_rnn):
    w = char_rnn
    panel = select(w, "embed")
    panel.form().editors["num_output"].setValue(32)
    assert w.doc.graph.layer("embed").params["num_output"] == 32
    assert w.scene.node("embed").shape_text == "(75, 25, 32)"
    assert w.scene.link_item(Link("embed", "y", "lstm1", "x")).label == "(75, 25, 32)"
    assert w.doc.graph.info("lstm1").inputs[0].shape == (75, 25, 32)
    assert "(75, 25, 32)" in panel.readout.text()
    w.act.undo.trigger()
    assert w.scene.node("embed").shape_text == "(75, 25, 15)"
    assert panel.form().editors["num_output"].value() == 15


def test_a_value_the_model_refuses_shows_its_message_and_changes_nothing(char_rnn):
    w = char_rnn
    panel = select(w, "ip1")
    editor = panel.form().editors["num_output"]
    assert isinstance(editor, TextEditor)  # a number or a dimension name such as V
    editor.setText("7.5")
    editor.editingFinished.emit()
    error = panel.form().errors["num_output"]
    assert error.isVisibleTo(panel) and "ip1: num_output must be" in error.text()
    assert w.doc.graph.layer("ip1").params["num_output"] == "V"
    assert w.doc.stack.count() == 0


def test_reset_forgets_an_explicit_value(char_rnn):
    w = char_rnn
    panel = select(w, "lstm1")
    panel.form().resets["dropout_ratio"].click()
    assert "dropout_ratio" not in w.doc.graph.layer("lstm1").params
    assert panel.form().editors["dropout_ratio"].value() == 0.0


def test_a_layer_is_renamed_from_the_panel_and_duplicates_are_refused(char_rnn):
    w = char_rnn
    panel = select(w, "lstm1")
    panel.name_edit.setText("encoder")
    panel.name_edit.editingFinished.emit()
    assert "encoder" in w.doc.graph and w.scene.node("encoder").name == "encoder"
    assert Link("encoder", "y", "ip1", "x") in w.doc.graph.links()
    assert w.scene.link_item(Link("encoder", "y", "ip1", "x")) is not None
    panel.name_edit.setText("ip1")
    panel.name_edit.editingFinished.emit()
    assert panel.name_error.text() == "a layer named 'ip1' already exists"
    assert panel.name_edit.text() == "encoder"
    w.act.undo.trigger()
    assert "lstm1" in w.doc.graph and w.properties.layer == "lstm1"


def test_solver_and_training_settings_are_edited_through_the_undo_stack(char_rnn):
    w = char_rnn
    lr = w.properties.solver.form.editors["base_lr"]
    assert lr.value() == 0.002 and lr.text() == "0.002"
    lr.setValue(0.01)
    assert w.doc.project.solver["base_lr"] == 0.01
    w.properties.training.form.editors["cuda_graphs"].setChecked(False)
    assert w.doc.project.training["cuda_graphs"] is False
    assert w.isWindowModified()
    w.act.undo.trigger()
    w.act.undo.trigger()
    assert w.doc.project.solver["base_lr"] == 0.002 and "cuda_graphs" not in w.doc.project.training
    assert lr.value() == 0.002


def test_with_nothing_selected_the_panel_shows_the_project(char_rnn):
    w = char_rnn
    w.scene.clearSelection()
    assert w.properties.layer is None and w.properties.tabText(0) == "Project"
    panel = w.properties.project_panel
    assert "5 layers" in panel.totals.text()
    panel.name_edit.setText("My Char-RNN")
    panel.name_edit.editingFinished.emit()
    assert w.doc.project.name == "My Char-RNN"
    assert w.windowTitle().startswith("My Char-RNN[*]")


def test_the_panel_fits_its_dock_for_the_project_and_every_layer_of_the_examples(window):
    """Nothing is cut at the dock's right edge: the project's page was as wide as the widest
    layer page (a stack sizes to its largest page), a layer's kind line did not wrap, and the
    design-choice buttons sat in one row wider than the dock."""
    from PySide6.QtWidgets import QApplication, QScrollArea

    def overflow() -> int:
        area = next(a for a in window.properties.findChildren(QScrollArea) if a.isVisible())
        return area.widget().width() - area.viewport().width()

    for project in sorted(PROJECTS.glob("*.json")):
        assert window.files.open_path(project, confirmed=True)
        QApplication.processEvents()
        assert overflow() <= 0, project.name
        for name in window.doc.graph.names():
            window.scene.clearSelection()
            window.scene.node(name).setSelected(True)
            QApplication.processEvents()
            assert overflow() <= 0, (project.name, name)
        window.doc.stack.setClean()
