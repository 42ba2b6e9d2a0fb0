"""The palette: every layer type by category, a search box, drags that carry only the id."""
from designer.graph import registry
from designer.ui.editor import mime
from designer.ui.editor.palette import LayerPalette


def test_every_layer_type_is_listed_under_its_category(qtbot):
    palette = LayerPalette()
    qtbot.addWidget(palette)
    assert sorted(palette.visible_types()) == sorted(registry.ids())
    top = [palette.tree.topLevelItem(i).text(0) for i in range(palette.tree.topLevelItemCount())]
    cells = len(registry.recurrent_kinds())
    assert cells >= 8 and top[:3] == ["Data  (5)", "Embedding  (1)", f"Recurrent  ({cells})"]


def test_the_search_box_filters_by_name_summary_and_category(qtbot):
    palette = LayerPalette()
    qtbot.addWidget(palette)
    palette.search.setText("recurrent")
    assert palette.visible_types() == list(registry.recurrent_kinds())  # every cell, in order
    assert {"LSTM", "GRU", "RNN", "LSTMSimple", "MinGRU", "MinLSTM", "mLSTM",
            "sLSTM"} <= set(palette.visible_types())
    palette.search.setText("parallel scan")
    assert palette.visible_types() == ["MinGRU", "MinLSTM"]
    palette.search.setText("matrix memory")
    assert palette.visible_types() == ["mLSTM"]
    palette.search.setText("gated")
    assert {"LSTM", "GRU"} <= set(palette.visible_types()) <= set(registry.recurrent_kinds())
    palette.search.setText("no such layer")
    assert palette.visible_types() == []
    palette.search.clear()
    assert len(palette.visible_types()) == len(registry.ids())


def test_a_drag_carries_only_the_type_id(qtbot):
    palette = LayerPalette()
    qtbot.addWidget(palette)
    data = palette.tree.mimeData([palette.item("LSTM")])
    assert data.formats() == [mime.LAYER_TYPE]
    assert bytes(data.data(mime.LAYER_TYPE)) == b"LSTM"


def test_double_click_or_enter_asks_to_add_the_layer(qtbot):
    palette = LayerPalette()
    qtbot.addWidget(palette)
    with qtbot.waitSignal(palette.add_requested) as got:
        palette.tree.itemActivated.emit(palette.item("Embed"), 0)
    assert got.args == ["Embed"]
    palette.search.setText("softmaxwith")
    with qtbot.waitSignal(palette.add_requested) as got:
        palette.search.returnPressed.emit()
    assert got.args == ["SoftmaxWithLoss"]


def test_mini_rocket_is_listed_under_sequence_with_its_help_as_the_tool_tip(qtbot):
    from html import escape
    palette = LayerPalette()
    qtbot.addWidget(palette)
    item = palette.item("MiniRocket")
    assert item.parent().text(0).startswith("Sequence  (")
    tip = item.toolTip(0)
    spec = registry.get("MiniRocket")
    assert escape(spec.help) in tip
    for name in ("num_features", "max_dilations", "seed", "batch_first", "lengths (optional)"):
        assert name in tip
    palette.search.setText("rocket")
    assert palette.visible_types() == ["MiniRocket"]
    palette.search.setText("random convolution")  # Hydra's summary says it too
    assert palette.visible_types() == ["MiniRocket", "Hydra"]
    palette.search.setText("competing")
    assert palette.visible_types() == ["Hydra"]
