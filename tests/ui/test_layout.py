"""Cards never lie over each other: every example project as opened, after Auto-Layout, and a
file that places two layers too close."""
import json

import pytest

from designer.ui.editor.layout import CLEAR_H, CLEAR_W
from tests.conftest import PROJECTS

EXAMPLES = sorted(PROJECTS.glob("*.json"))


def overlapping(scene) -> list[tuple[str, str]]:
    nodes = scene.nodes()
    return [(a.name, b.name) for i, a in enumerate(nodes) for b in nodes[i + 1:]
            if a.sceneBoundingRect().intersects(b.sceneBoundingRect())]


def test_a_card_is_drawn_within_the_room_the_layout_gives_it(char_rnn):
    box = char_rnn.scene.node("lstm1").boundingRect()
    assert box.width() <= CLEAR_W and box.height() <= CLEAR_H


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_no_two_layers_overlap_as_opened_or_after_auto_layout(window, path):
    assert window.files.open_path(path, confirmed=True)
    assert window.scene.nodes() and overlapping(window.scene) == []
    assert not window.doc.is_modified()
    window.act.layout.trigger()
    assert overlapping(window.scene) == []
    for node in window.scene.nodes():  # the model holds where the card is drawn
        assert tuple(window.doc.graph.layer(node.name).pos) == (node.pos().x(), node.pos().y())


def test_a_file_placing_two_layers_too_close_opens_with_them_apart(window, tmp_path):
    doc = json.loads((PROJECTS / "japanese-vowels.json").read_text())
    for layer in doc["graph"]["layers"]:
        if layer["name"] in ("loss", "accuracy"):  # as `rnn-designer init` placed them
            layer["pos"] = [-90 if layer["name"] == "loss" else 90, 440]
    path = tmp_path / "close.json"
    path.write_text(json.dumps(doc))
    assert window.files.open_path(path, confirmed=True)
    g = window.doc.graph
    assert overlapping(window.scene) == []
    assert g.layer("loss").pos == (-120, 440) and g.layer("accuracy").pos == (120, 440)
    assert g.layer("ip1").pos == (0, 330)  # the others stay where the file put them
    assert not window.doc.is_modified() and window.doc.stack.count() == 0
