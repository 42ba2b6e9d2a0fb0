"""Canvas text is never cut: a node's message wraps, or ends in "…" with the whole sentence in
its tool-tip; the tip beside a refused wire stays inside the canvas; a new link's label keeps
off the labels already there."""
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF, QMouseEvent
from PySide6.QtWidgets import QApplication

from designer.graph.model import Link
from designer.ui.editor.node_item import TEXT_W, TYPE_FONT
from designer.ui.editor.wiring import TipItem
from tests.ui.conftest import mouse, view_pos


def shown_whole_or_cut_with_its_tip(node, message: str) -> None:
    lines = node.message_lines()
    fm = QFontMetricsF(TYPE_FONT)
    assert lines and all(fm.horizontalAdvance(line) <= TEXT_W for line in lines)
    shown = " ".join(lines).removeprefix("\u26a0 ")
    if not message.endswith(shown):  # cut: it says so, and the tool-tip has all of it
        assert lines[-1].endswith("\u2026") and message.startswith(node.name)
        assert message in node.tooltip_html().replace("&#x27;", "'")


def test_a_long_error_on_a_node_wraps_and_its_tip_holds_the_whole_sentence(char_rnn):
    w = char_rnn
    w.doc.add_layer("GRU", (300, 330), "gru")
    node = w.scene.node("gru")
    message = node.error
    assert message.startswith("gru: input 'x' is not connected (the input sequence")
    assert node.message_lines()[0].startswith("\u26a0 input 'x' is not connected")
    shown_whole_or_cut_with_its_tip(node, message)
    w.scene.set_run_errors({"lstm1": "lstm1: the forward pass failed on a real batch: "
                                     "cuDNN said CUDNN_STATUS_BAD_PARAM for these shapes " * 3})
    w.scene.refresh_warnings()
    lstm = w.scene.node("lstm1")  # an error found by running the net: in the tip too
    shown_whole_or_cut_with_its_tip(lstm, lstm.error)


def test_a_data_layers_message_keeps_to_one_line_above_its_port_labels(char_rnn):
    w = char_rnn
    w.doc.set_param("data", "corpus", "no-such-corpus")
    node = w.scene.node("data")
    w.scene.refresh_warnings()
    if node.error:
        assert len(node.message_lines()) == 1
        shown_whole_or_cut_with_its_tip(node, node.error)


def test_the_tip_of_a_refused_wire_stays_inside_the_canvas(char_rnn):
    w = char_rnn
    w.doc.add_layer("ReLU", (300, 110), "relu")
    w.view.fit()
    visible = w.view.visible_scene_rect()
    w.doc.move({"relu": ((300, 110), (visible.right() - 120, 110))})  # at the right edge
    vp = w.view.viewport()
    mouse(vp, QMouseEvent.MouseButtonPress, view_pos(w.view, w.scene.node("data")
                                                     .port_pos("data", False)))
    at = view_pos(w.view, w.scene.node("relu").port_pos("x", True))
    mouse(vp, QMouseEvent.MouseMove, at, Qt.NoButton)
    tip = w.scene._wire.tip
    assert isinstance(tip, TipItem) and tip.isVisible() and not tip.good
    assert w.view.visible_scene_rect().contains(tip.sceneBoundingRect())
    mouse(vp, QMouseEvent.MouseButtonRelease, at, Qt.LeftButton, Qt.NoButton)


def test_a_new_links_label_keeps_off_the_label_of_a_lane_beside_it(char_rnn):
    w = char_rnn
    lane = w.scene.link_item(Link("data", "label", "loss", "label")).label_item
    assert lane.isVisible() and lane.link.vertical  # "(75, 25) ids", along its lane
    w.doc.add_layer("GRU", (300, 250), "gru")  # lstm1.y -> gru.x crosses the lane's label
    w.doc.connect("lstm1", "y", "gru", "x")
    QApplication.processEvents()
    w.scene.reroute_all()
    labels = [k.label_item for k in w.scene.link_items() if k.label_item.isVisible()]
    clashes = [(a.link.link, b.link.link) for i, a in enumerate(labels) for b in labels[i + 1:]
               if a.sceneBoundingRect().intersects(b.sceneBoundingRect())]
    assert clashes == []
