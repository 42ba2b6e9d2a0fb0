"""The document: every edit is one undo step through the model; what the model refuses never
reaches the stack."""
import pytest

from designer.graph import project as P
from designer.graph.errors import DuplicateNameError, ParamError, PortError
from designer.graph.model import Link
from designer.ui.editor.commands import UNSET
from designer.ui.editor.document import Document
from tests.conftest import PROJECTS
from tests.ui.conftest import snapshot


@pytest.fixture
def doc(qapp) -> Document:
    return Document(P.load(PROJECTS / "char-rnn-shakespeare.json"))


def test_every_kind_of_edit_undoes_back_to_the_original_graph(doc):
    before = snapshot(doc.graph)
    doc.add_layer("ReLU", (300, 200))
    doc.connect("ip1", "y", "relu", "x")
    doc.move({"relu": ((300, 200), (320, 240))})
    doc.set_param("embed", "num_output", 32)
    doc.rename("lstm1", "encoder")
    doc.disconnect(Link("encoder", "y", "ip1", "x"))
    doc.remove(["loss"])
    doc.paste([{"name": "embed", "type": "Embed", "params": {}, "pos": (0, 0)}], [])
    doc.set_setting("solver", "base_lr", 0.01)
    doc.set_setting("project", "name", "renamed")
    after = snapshot(doc.graph)
    assert "encoder" in doc.graph and "embed1" in doc.graph and "loss" not in doc.graph
    assert doc.stack.count() == 10 and doc.is_modified()

    while doc.stack.canUndo():
        doc.stack.undo()
    assert snapshot(doc.graph) == before
    assert doc.project.solver["base_lr"] == 0.002 and doc.project.name.startswith("Char-RNN")
    assert not doc.is_modified()

    while doc.stack.canRedo():
        doc.stack.redo()
    assert snapshot(doc.graph) == after


def test_removing_layers_and_links_together_is_one_step(doc):
    before, saved = snapshot(doc.graph), doc.project.to_json()
    doc.remove(["embed", "lstm1"], [Link("ip1", "y", "loss", "logits")])
    assert doc.stack.count() == 1
    assert [str(k) for k in doc.graph.links()] == ["data.label -> loss.label"]
    doc.stack.undo()
    assert snapshot(doc.graph) == before
    assert doc.project.to_json() == saved  # the layers are back in their places


def test_a_refused_edit_raises_the_models_sentence_and_leaves_the_stack_alone(doc):
    with pytest.raises(PortError, match="already fed by embed.y"):
        doc.connect("data", "data", "lstm1", "x")
    with pytest.raises(DuplicateNameError, match="a layer named 'ip1' already exists"):
        doc.rename("lstm1", "ip1")
    with pytest.raises(ParamError, match="num_output must be a whole number from 1"):
        doc.set_param("lstm1", "num_output", 0)
    assert doc.stack.count() == 0


def test_quick_successive_changes_of_one_parameter_undo_as_one_step(doc):
    for units in (256, 300, 320):
        doc.set_param("lstm1", "num_output", units)
    doc.set_param("lstm1", "num_layers", 3)
    assert doc.stack.count() == 2
    doc.stack.undo()
    doc.stack.undo()
    assert doc.graph.layer("lstm1").params["num_output"] == 512


def test_resetting_a_parameter_falls_back_to_its_default_and_undoes(doc):
    doc.set_param("lstm1", "dropout_ratio", UNSET)
    assert "dropout_ratio" not in doc.graph.layer("lstm1").params
    doc.stack.undo()
    assert doc.graph.layer("lstm1").params["dropout_ratio"] == 0.3


def test_solver_settings_are_stored_as_explicit_values(doc):
    seen = []
    doc.settings_changed.connect(seen.append)
    doc.set_setting("solver", "momentum", 0.8)
    assert doc.project.solver["momentum"] == 0.8 and seen == ["solver"]
    doc.set_setting("solver", "momentum", UNSET)
    assert "momentum" not in doc.project.solver
    with pytest.raises(ParamError):
        doc.set_setting("training", "eval_interval", 0)
    doc.stack.undo()
    doc.stack.undo()
    assert "momentum" not in doc.project.solver


def test_inserting_a_layer_into_a_link_is_one_step(doc):
    before = snapshot(doc.graph)
    name = doc.insert_on_link("TanH", Link("lstm1", "y", "ip1", "x"), (0, 300))
    assert name == "tanh"
    assert {str(k) for k in doc.graph.links()} >= {"lstm1.y -> tanh.x", "tanh.y -> ip1.x"}
    assert doc.stack.count() == 1
    doc.stack.undo()
    assert snapshot(doc.graph) == before


def test_moving_the_end_of_a_link_is_one_step_and_is_checked_first(doc):
    doc.add_layer("ReLU", (300, 300))
    old = Link("lstm1", "y", "ip1", "x")
    with pytest.raises(PortError):
        doc.reconnect(old, "lstm1", "y", "ip1", "nope")
    assert old in doc.graph.links() and doc.stack.count() == 1
    doc.reconnect(old, "lstm1", "y", "relu", "x")
    assert Link("lstm1", "y", "relu", "x") in doc.graph.links()
    doc.stack.undo()
    assert old in doc.graph.links()


def test_opening_a_broken_file_raises_and_keeps_the_document(doc, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"schema_version": 1, "graph": {"layers": [], "links": [')
    graph = doc.graph
    with pytest.raises(P.ProjectError, match="broken.json: is not valid JSON"):
        doc.open(bad)
    assert doc.graph is graph and len(graph) == 5


def test_saving_writes_the_project_and_marks_the_document_clean(doc, tmp_path):
    doc.set_param("embed", "num_output", 16)
    target = doc.save(tmp_path / "mine.json")
    assert not doc.is_modified()
    assert P.load(target).graph.layer("embed").params["num_output"] == 16
