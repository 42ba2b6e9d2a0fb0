"""The layer reference is written from the layer specs: every layer type has its section on its
family's page, with its words, ports, parameters (default and allowed values) and engines; text
from a spec reads as it is written; a new layer type is there with no page edited."""
from __future__ import annotations

import dataclasses

from designer.docs import layer_pages
from designer.graph import registry
from designer.graph.spec import ParamSpec


def test_every_layer_type_has_its_section_on_its_familys_page():
    pages = layer_pages.pages()
    fams = layer_pages.families()
    assert set(pages) == {"index"} | {layer_pages.family_page(c) for c in fams}
    for category, specs in fams.items():
        page = pages[layer_pages.family_page(category)]
        for spec in specs:
            assert f"({layer_pages.anchor(spec.id)})=\n## {layer_pages.plain(spec.id)}" in page
            assert f"{layer_pages.PICTURES}/{spec.id}.png" in page
            for p in spec.params:
                assert f"| `{p.name}` | {layer_pages.code(p.default)} |" in page
            for port in spec.inputs + spec.outputs:
                assert f"`{port.name}`" in page
        assert f"[{layer_pages.plain(category)}]({layer_pages.family_page(category)}.md)" in \
            pages["index"]


def test_a_parameter_shows_its_default_as_a_project_writes_it_and_the_values_it_takes():
    page = layer_pages.pages()["recurrent"]
    lstm = registry.get("LSTM")
    ratio = lstm.param("dropout_ratio")
    assert f"| `dropout_ratio` | `0.0` | {ratio.allowed()} |" in page
    assert "| `batch_first` | `false` | true or false |" in page
    assert '| `engine` | `"AUTO"` |' in page
    assert "**Engines:** `AUTO` (the default), `CUDNN`, `CAFFE` and `PERSIST`" in page


def test_text_from_a_spec_reads_as_written():
    assert layer_pages.plain("h = o * c / n, <layer>.h0 | x_t [1]") == \
        r"h = o \* c / n, \<layer\>.h0 \| x\_t \[1\]"
    assert layer_pages.slug("Building blocks") == "building-blocks"
    assert layer_pages.anchor("mLSTM") == "layer-mlstm"


def test_a_new_layer_type_and_parameter_are_on_the_page_with_no_page_edited(monkeypatch):
    relu = registry.get("ReLU")
    glimmer = dataclasses.replace(
        relu, id="Glimmer", category="Sparkle", summary="Glimmers over its input",
        params=relu.params + (ParamSpec("shine", "float", 0.5, "how much it *glimmers*",
                                        minimum=0, maximum=1),))
    monkeypatch.setitem(registry._SPECS, "Glimmer", glimmer)
    pages = layer_pages.pages()
    page = pages["sparkle"]  # a family of its own: a page of its own
    assert page.startswith("# Sparkle layers")
    assert "Glimmers over its input" in page
    assert r"| `shine` | `0.5` | a number from 0 to 1 | how much it \*glimmers\* |" in page
    assert "[Glimmer](sparkle.md#layer-glimmer)" in pages["index"]
