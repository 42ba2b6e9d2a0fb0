"""The Fix of a SequencePool pooling padded sequences without their lengths connects them, as
one undoable step of the document."""
from designer.graph.project import Project
from designer.ui.editor.document import Document
from tests.graph.test_sequence_pool import classifier
from tests.ui.conftest import snapshot


def test_the_fix_connects_the_lengths_and_undoes(qapp, tmp_path):
    doc = Document(Project(classifier(tmp_path, "attention", lengths=False), "pooled"))
    before = snapshot(doc.graph)
    (warning,) = [p for p in doc.graph.problems() if p.layer == "pool"]
    count = doc.stack.count()
    doc.apply_fix(warning.fix)
    assert str(doc.graph.link_into("pool", "lengths")) == "data.lengths -> pool.lengths"
    assert doc.stack.count() == count + 1
    assert doc.stack.undoText() == "Connect data.lengths to pool.lengths"
    assert [p for p in doc.graph.problems() if p.layer == "pool"] == []
    doc.stack.undo()
    assert doc.graph.link_into("pool", "lengths") is None and snapshot(doc.graph) == before
