"""The RG-LRU in the window: in the palette with its tool-tip, found by the search box, its
engines in the form, its unrolled net drawn step by step (a SCALE and a unit each, the unit's
tool-tip naming the chain's decays)."""
from designer.graph import Graph
from designer.graph.project import Project
from designer.ui.editor.palette import LayerPalette
from designer.ui.unrolled.items import UnrolledNode


def rglru_project(tmp_path, levels: int = 1) -> str:
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4})
    g.add_layer("RGLRU", "rnn", {"num_output": 8, "num_layers": levels})
    g.connect("data", "data", "rnn", "x")
    g.connect("data", "label", "rnn", "lengths")
    Project(g, "rglru", "", {}, {}).save(tmp_path / "rglru.json")
    return tmp_path / "rglru.json"


def test_the_palette_lists_it_with_its_tooltip_and_finds_it(qtbot):
    palette = LayerPalette()
    qtbot.addWidget(palette)
    assert "RGLRU" in palette.visible_types()
    tip = palette.item("RGLRU").toolTip(0)
    assert "RG-LRU" in tip and "sqrt(1 - a_t^2)" in tip and "Hawk" in tip
    palette.search.setText("hawk")
    assert palette.visible_types() == ["RGLRU"]
    palette.search.setText("linear recurrence")
    assert "RGLRU" in palette.visible_types()


def test_the_unrolled_view_draws_a_scale_and_a_unit_per_step(window, tmp_path):
    assert window.files.open_path(rglru_project(tmp_path, levels=2))
    view = window.show_unrolled("rnn", steps=4)
    types = [i.node_type for i in view.scene.items()
             if isinstance(i, UnrolledNode) and i.kind == "node"]
    assert types.count("RG_LRU_UNIT") == 8 and types.count("HOLD") == 8
    assert types.count("INNER_PRODUCT") == 2  # the input transforms
    tip = view.tooltip("L1/unit_2")
    assert "RG_LRU_UNIT" in tip and "L1/Lambda" in tip


def test_the_form_offers_the_scan_and_the_unrolled_net(window, tmp_path):
    assert window.files.open_path(rglru_project(tmp_path))
    spec = window.doc.graph.layer("rnn").spec
    assert spec.param("engine").choices == ("SCAN", "CAFFE")
    assert window.doc.graph.layer("rnn").get("engine") == "SCAN"
