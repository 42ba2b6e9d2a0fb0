"""The Fix of a BatchNorm on a batch of one that no batch_size can raise makes it a LayerNorm
of the same name, place and links, as one undoable step of the document."""
from designer.graph.errors import DesignWarning
from designer.graph.project import Project
from designer.ui.editor.document import Document
from tests.graph.test_norm_specs import one_sequence_of_four
from tests.ui.conftest import snapshot


def test_the_fix_replaces_the_batch_norm_and_undoes(qapp):
    doc = Document(Project(one_sequence_of_four(lengths=True), "one"))
    g = doc.graph
    g.move_layer("bn", (40.0, 300.0))
    before, order = snapshot(g), g.names()
    (warning,) = [p for p in g.problems() if isinstance(p, DesignWarning)]
    count = doc.stack.count()
    doc.apply_fix(warning.fix)
    assert doc.stack.count() == count + 1
    assert doc.stack.undoText() == "Replace bn with a LayerNorm"
    bn = g.layer("bn")
    assert (bn.type, bn.params, bn.pos) == ("LayerNorm", {"eps": 1e-3}, (40.0, 300.0))
    assert g.names() == order
    assert [str(k) for k in g.links_into("bn") + g.links_out_of("bn")] == [
        "lstm.y -> bn.x", "bn.y -> relu.x"]
    assert not [p for p in g.problems() if isinstance(p, DesignWarning)]
    doc.stack.undo()
    assert snapshot(g) == before and g.names() == order
    assert str(g.link_into("bn", "lengths")) == "first_length.a -> bn.lengths"
    doc.stack.redo()
    assert g.layer("bn").type == "LayerNorm" and g.names() == order


def test_the_problems_panel_s_fix_button_redraws_the_layer_as_a_layer_norm(window, qtbot):
    window.doc.replace(Project(one_sequence_of_four(), "one"))
    panel = window.problems

    def bn_row():
        for i in range(panel.topLevelItemCount()):
            if panel.topLevelItem(i).text(0) == "bn":
                return panel.topLevelItem(i)
        return None

    qtbot.waitUntil(lambda: bn_row() is not None)
    button = panel.itemWidget(bn_row(), 2)
    assert button.toolTip() == "Replace bn with a LayerNorm (undoable)"
    button.click()
    assert window.doc.graph.layer("bn").type == "LayerNorm"
    assert window.scene.node("bn").type_id == "LayerNorm"
    assert window.scene.selected_names() == ["bn"]
    qtbot.waitUntil(lambda: bn_row() is None)
    window.doc.stack.undo()
    assert window.scene.node("bn").type_id == "BatchNorm"
