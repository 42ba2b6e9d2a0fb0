"""The layer reference's picture of a layer: the layer in a small net that feeds it, drawn as the
canvas draws it. Every layer type is fed so that it has no error (a picture in red would tell a
reader the layer is broken), and the picture is a real PNG of the window's own scene."""
from __future__ import annotations

import dataclasses

import pytest

from designer.docs import showcase
from designer.docs.layer_pages import load_layers
from designer.graph import registry
from designer.graph.errors import GraphWarning

load_layers()  # every layer type, the recurrent cells' too


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("samples")
    showcase.write_samples(folder)
    return folder


@pytest.mark.parametrize("type_id", registry.ids())
def test_every_layer_type_is_drawn_in_a_net_where_it_has_no_error(type_id, samples):
    g = showcase.net_for(type_id, samples)
    name = g.names()[-1]  # the layer, after what feeds it
    assert g.layer(name).type == type_id and not g.links_out_of(name)
    errors = [str(p) for p in g.problems() if p.layer and not isinstance(p, GraphWarning)]
    assert errors == []
    assert all(t is not None for t in g.info(name).outputs)


def test_a_loss_is_fed_by_the_outputs_named_as_its_ports(samples):
    g = showcase.net_for("SoftmaxWithLoss", samples)
    fed = {(k.src, k.src_port, k.dst_port) for k in g.links_into("loss")}
    assert fed == {("logits", "y", "logits"), ("data", "label", "label")}


def test_a_layer_no_net_can_feed_is_drawn_alone(samples, monkeypatch):
    from designer.graph.spec import PortSpec
    relu = registry.get("ReLU")
    odd = dataclasses.replace(relu, id="Oddity", inputs=(PortSpec("w", "a kind of input "
                                                                  "nothing gives", "index"),))
    monkeypatch.setitem(registry._SPECS, "Oddity", odd)
    g = showcase.net_for("Oddity", samples)
    assert g.names() == ["oddity"]
    assert showcase.net_for("SequencePool", samples).names()[-1] == "pool"  # fits its card


def test_the_picture_is_the_canvas_drawing_of_the_net(samples, qapp, tmp_path):
    from PySide6.QtGui import QImage

    from designer.ui.exchange.picture import save_net_picture
    from designer.ui.look import theme
    kept = theme.colors
    path = save_net_picture(showcase.net_for("LSTM", samples), tmp_path / "LSTM.png")
    image = QImage(str(path))
    assert image.height() > image.width() > 300  # three cards, one under another
    assert theme.colors is kept  # the window's theme is left as it was
