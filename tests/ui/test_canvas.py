"""The canvas: drop layers from the palette, wire ports with live feedback, see shapes, tips and
problems on the nodes and links, select, delete, copy, paste, move and lay out."""
import warnings

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import (QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent,
                           QWheelEvent)
from PySide6.QtWidgets import QApplication

from designer.graph.model import Link
from designer.ui.editor import mime
from designer.ui.editor.node_item import PortItem
from tests.conftest import need_data
from tests.ui.conftest import drag, mouse, snapshot, view_pos


@pytest.fixture(autouse=True)
def _no_deprecation_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # QDragEnterEvent(QPoint, ...)
        yield


def drop(view, type_id: str, scene_point: QPointF) -> None:
    """A synthetic drag of a palette entry onto the canvas (only its type id travels)."""
    data = QMimeData()
    data.setData(mime.LAYER_TYPE, type_id.encode())
    pos = view_pos(view, scene_point)
    for event in (QDragEnterEvent(pos, Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier),
                  QDragMoveEvent(pos, Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier),
                  QDropEvent(QPointF(pos), Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier)):
        QApplication.sendEvent(view.viewport(), event)
        assert event.isAccepted()


def port_at(w, name: str, port: str, is_input: bool):
    return view_pos(w.view, w.scene.node(name).port_pos(port, is_input))


def test_dropping_a_layer_from_the_palette_adds_it_where_it_was_dropped(char_rnn):
    w = char_rnn
    drop(w.view, "GRU", QPointF(600, 100))
    assert "gru" in w.doc.graph
    node = w.scene.node("gru")
    assert node.isSelected() and w.properties.layer == "gru"
    assert abs(node.sceneBoundingRect().center().x() - 600) < 20
    w.doc.stack.undo()
    assert "gru" not in w.doc.graph and w.scene.nodes_in(node.sceneBoundingRect()) == []


def test_dropping_a_layer_onto_a_link_inserts_it_there_making_room(char_rnn):
    w = char_rnn
    g = w.doc.graph
    before = snapshot(g)
    link = w.scene.link_item(Link("lstm1", "y", "ip1", "x"))
    drop(w.view, "TanH", link.path.pointAtPercent(0.5))
    links = {str(k) for k in g.links()}
    assert {"lstm1.y -> tanh.x", "tanh.y -> ip1.x"} <= links
    assert "lstm1.y -> ip1.x" not in links
    assert g.layer("tanh").pos == (0, 330)  # the row under lstm1 ...
    assert g.layer("ip1").pos == (0, 440) and g.layer("loss").pos == (0, 550)  # ... moved down
    w.act.undo.trigger()
    assert snapshot(g) == before


def test_wiring_two_ports_by_dragging_connects_them(char_rnn, qtbot):
    w = char_rnn
    w.doc.add_layer("ReLU", (300, 330))
    w.view.fit()
    drag(w.view.viewport(), port_at(w, "lstm1", "y", False), port_at(w, "relu", "x", True))
    assert Link("lstm1", "y", "relu", "x") in w.doc.graph.links()
    assert w.scene.link_item(Link("lstm1", "y", "relu", "x")) is not None
    w.doc.stack.undo()
    assert Link("lstm1", "y", "relu", "x") not in w.doc.graph.links()


@need_data("tinyshakespeare.txt")
def test_a_dragged_wire_lights_compatible_ports_and_says_why_a_target_is_refused(char_rnn):
    w = char_rnn
    w.doc.add_layer("ReLU", (300, 110))
    w.view.fit()
    vp = w.view.viewport()
    mouse(vp, QMouseEvent.MouseButtonPress, port_at(w, "data", "data", False))
    relu_x = w.scene.node("relu").port("x", True)
    mouse(vp, QMouseEvent.MouseMove, port_at(w, "relu", "x", True), Qt.NoButton)
    assert relu_x.state == PortItem.BAD
    tip = w.scene._wire.tip
    assert tip.isVisible() and "token ids must go through an Embed layer first" in tip.text
    mouse(vp, QMouseEvent.MouseButtonRelease, port_at(w, "relu", "x", True), Qt.LeftButton,
          Qt.NoButton)
    assert not any(k.dst == "relu" for k in w.doc.graph.links())
    assert relu_x.state == PortItem.NORMAL


def test_a_port_whose_layer_lacks_another_input_is_not_lit_but_still_takes_the_link(char_rnn):
    w = char_rnn
    new = w.doc.add_layer("LSTM", (300, 220), name="lstm2")  # nothing connected yet
    w.view.fit()
    vp = w.view.viewport()
    mouse(vp, QMouseEvent.MouseButtonPress, port_at(w, "data", "cont", False))
    cont = w.scene.node(new).port("cont", True)
    assert cont.state != PortItem.GOOD  # not green: lstm2.x is still unconnected
    mouse(vp, QMouseEvent.MouseMove, port_at(w, new, "cont", True), Qt.NoButton)
    tip = w.scene._wire.tip
    assert cont.state != PortItem.GOOD and "lstm2 still needs 'x' connected" in tip.text
    mouse(vp, QMouseEvent.MouseButtonRelease, port_at(w, new, "cont", True), Qt.LeftButton,
          Qt.NoButton)
    assert Link("data", "cont", new, "cont") in w.doc.graph.links()


def test_dragging_the_end_of_a_link_off_a_port_disconnects_it(char_rnn):
    w = char_rnn
    start = port_at(w, "ip1", "x", True)
    drag(w.view.viewport(), start, QPoint(start.x() + 150, start.y() + 10))
    assert Link("lstm1", "y", "ip1", "x") not in w.doc.graph.links()
    w.doc.stack.undo()
    assert Link("lstm1", "y", "ip1", "x") in w.doc.graph.links()


@need_data("tinyshakespeare.txt")
def test_nodes_show_name_type_and_output_shape_and_links_show_their_tensor(char_rnn):
    w = char_rnn
    lstm = w.scene.node("lstm1")
    assert (lstm.name, lstm.type_id, lstm.shape_text) == ("lstm1", "LSTM", "(75, 25, 512)")
    assert w.scene.node("data").shape_text == "3 outputs (75, 25)"
    assert w.scene.link_item(Link("embed", "y", "lstm1", "x")).label == "(75, 25, 15)"
    assert w.scene.link_item(Link("data", "data", "embed", "x")).label == "(75, 25) ids"


@need_data("tinyshakespeare.txt")
def test_tooltips_tell_what_a_layer_does_its_shapes_parameters_and_flops(char_rnn):
    w = char_rnn
    tip = w.scene.node("lstm1").tooltip_html()
    for text in ("Long short-term memory", "num_output = <b>512</b>", "(75, 25, 15)",
                 "(75, 25, 512)", "3,184,640", "FLOPs"):
        assert text in tip
    port = w.scene.node("ip1").port_tooltip("y", is_input=False)
    assert "(75, 25, 65)" in port and "output" in port


@need_data("tinyshakespeare.txt")  # without it the data layer's own problem is listed too
def test_invalid_layers_and_links_are_drawn_with_their_message(char_rnn, qtbot):
    w = char_rnn
    w.doc.disconnect(Link("embed", "y", "lstm1", "x"))
    node = w.scene.node("lstm1")
    assert "input 'x' is not connected" in node.error
    w.doc.add_layer("ReLU", (300, 110))
    w.doc.connect("data", "data", "relu", "x")  # ids into a layer that wants features
    link = w.scene.link_item(Link("data", "data", "relu", "x"))
    assert "token ids must go through an Embed layer first" in link.problem
    qtbot.waitUntil(lambda: w.problems.topLevelItemCount() == 4)  # embed and relu: dead ends
    texts = [w.problems.topLevelItem(i).text(1) for i in range(4)]
    assert any("not connected" in t for t in texts)
    assert sum("reaches no loss" in t for t in texts) == 2


def test_deleting_the_selection_and_undoing_it(char_rnn):
    w = char_rnn
    before = snapshot(w.doc.graph)
    w.scene.select_layers(["embed", "ip1"])
    w.scene.link_item(Link("data", "label", "loss", "label")).setSelected(True)
    w.act.delete.trigger()
    assert "embed" not in w.doc.graph and "ip1" not in w.doc.graph
    assert [str(k) for k in w.doc.graph.links()] == []
    w.act.undo.trigger()
    assert snapshot(w.doc.graph) == before


def test_copy_and_paste_brings_the_links_among_the_copied_layers(char_rnn):
    w = char_rnn
    w.scene.select_layers(["lstm1", "ip1"])
    w.act.copy.trigger()
    w.act.paste.trigger()
    assert {"lstm2", "ip2"} <= set(w.doc.graph.names())
    assert Link("lstm2", "y", "ip2", "x") in w.doc.graph.links()
    assert w.scene.selected_names() == ["lstm2", "ip2"]
    assert w.doc.graph.layer("lstm2").pos[1] == w.doc.graph.layer("lstm1").pos[1] + 40
    w.act.undo.trigger()
    assert "lstm2" not in w.doc.graph


def test_dragging_a_node_moves_it_in_one_undo_step(char_rnn):
    w = char_rnn
    node = w.scene.node("ip1")
    start = view_pos(w.view, node.sceneBoundingRect().center() + QPointF(-60, 0))
    old = w.doc.graph.layer("ip1").pos
    drag(w.view.viewport(), start, start + type(start)(120, 40), steps=10)
    new = w.doc.graph.layer("ip1").pos
    assert new != old and w.doc.stack.count() == 1
    assert new == (node.pos().x(), node.pos().y())
    w.act.undo.trigger()
    assert w.doc.graph.layer("ip1").pos == old and node.pos().y() == old[1]


def test_rubber_band_selects_the_layers_it_covers(char_rnn):
    w = char_rnn
    top = w.scene.node("data").sceneBoundingRect()
    below = w.scene.node("embed").sceneBoundingRect()
    start = view_pos(w.view, top.topLeft() + QPointF(-30, -20))
    end = view_pos(w.view, below.bottomRight() + QPointF(30, 5))
    drag(w.view.viewport(), start, end)
    assert w.scene.selected_names() == ["data", "embed"]


def test_auto_layout_puts_layers_in_rows_and_undoes_as_one_step(char_rnn):
    w = char_rnn
    w.doc.add_layer("ReLU", (900, 900))
    w.doc.connect("embed", "y", "relu", "x")
    before = snapshot(w.doc.graph)
    w.act.layout.trigger()
    g = w.doc.graph
    assert g.layer("relu").pos[1] == g.layer("lstm1").pos[1]  # both fed by embed
    assert g.layer("data").pos[1] < g.layer("embed").pos[1] < g.layer("ip1").pos[1]
    assert w.doc.stack.undoText() == "Auto-layout"
    w.act.undo.trigger()
    assert snapshot(g) == before


def test_the_context_menu_offers_what_fits_the_item_under_the_cursor(char_rnn):
    from designer.ui.shell import actions
    w = char_rnn
    menu = actions.context_menu(w, w.scene.node("lstm1").sceneBoundingRect().center())
    assert w.scene.selected_names() == ["lstm1"]
    assert w.act.unrolled in menu.actions() and w.act.delete in menu.actions()
    link = w.scene.link_item(Link("lstm1", "y", "ip1", "x"))
    menu = actions.context_menu(w, link.path.pointAtPercent(0.3))
    menu.actions()[0].trigger()
    assert Link("lstm1", "y", "ip1", "x") not in w.doc.graph.links()
    menu = actions.context_menu(w, QPointF(-3000, -3000))
    assert w.act.paste in menu.actions() and w.act.layout in menu.actions()


def test_zoom_with_the_wheel_and_fit_to_view(char_rnn, qtbot):
    w = char_rnn
    w.view.set_zoom(1.0)
    centre = QPointF(w.view.viewport().rect().center())
    ev = QWheelEvent(centre, QPointF(w.view.viewport().mapToGlobal(centre.toPoint())),
                     QPoint(0, 0), QPoint(0, 240), Qt.NoButton, Qt.NoModifier,
                     Qt.NoScrollPhase, False)
    QApplication.sendEvent(w.view.viewport(), ev)
    assert w.view.zoom() > 1.2 and w.zoom_label.text() == f"Zoom {w.view.zoom():.0%}"
    w.act.fit.trigger()
    visible = w.view.visible_scene_rect()
    assert all(visible.contains(n.sceneBoundingRect()) for n in w.scene.nodes())


def test_labels_of_neighbouring_links_at_one_height_do_not_overlap(window, tmp_path):
    """`init`'s classifier: the data layer's data and lengths run side by side into MiniRocket,
    and their labels, at the same height, used to print over each other."""
    from designer.training.new_from_data.init import init_project
    ts = tmp_path / "toy.ts"
    ts.write_text("@dimensions 1\n@equalLength false\n@classLabel true up down\n@data\n" + "".join(
        f"{','.join(str((i % 2 * 2 - 1) * t) for t in range(10 + i % 4))}:{'up' if i % 2 else 'down'}\n"
        for i in range(12)))
    init_project(str(ts), out=str(tmp_path / "p.json"), head="adam")
    assert window.files.open_path(tmp_path / "p.json", confirmed=True)
    window.scene.reroute_all()
    data = window.scene.link_item(Link("data", "data", "rocket", "x")).label_item
    lengths = window.scene.link_item(Link("data", "lengths", "rocket", "lengths")).label_item
    assert data.isVisible() and lengths.isVisible()
    assert not data.sceneBoundingRect().intersects(lengths.sceneBoundingRect())
    window.doc.set_param("data", "batch_size", 8)  # new texts: kept apart again
    QApplication.processEvents()
    assert not data.sceneBoundingRect().intersects(lengths.sceneBoundingRect())
