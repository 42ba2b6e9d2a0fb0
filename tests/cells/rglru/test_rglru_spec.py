"""The RG-LRU as the designer knows it, from its folder alone: its spec (the palette's entry
and tool-tip, its engines and ports), counts and shapes, its unrolled net, search's retyping;
and no module outside its folder names it."""
import re
from pathlib import Path

import pytest

from designer.engines.expansion.expand import drawn_as, expand, expand_params, unrolling_kinds
from designer.engines.measure.parity_pairs import build
from designer.graph import Graph, registry
from designer.graph import project as P
from designer.graph.errors import ParamError
from designer.graph.retype import replace_layer
from tests.conftest import PROJECTS

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "designer" / "cells" / "rglru"


def net(**params) -> Graph:
    """data -> Embed 8 -> an RG-LRU of 16 -> InnerProduct V -> loss, V pinned to 20."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, "input_dim": 20})
    g.add_layer("RGLRU", "rnn", {"num_output": 16, **params})
    g.add_layer("InnerProduct", "ip1", {"num_output": 20, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for a, b in [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    g.pin_dims({"V": 20})
    return g


def test_the_palette_lists_it_as_a_recurrent_layer_with_the_scan_by_default():
    spec = registry.get("RGLRU")
    assert spec in registry.by_category()["Recurrent"] and "RGLRU" in registry.recurrent_kinds()
    assert spec.param("engine").choices == ("SCAN", "CAFFE")
    assert spec.param("engine").default == "SCAN"
    assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
    assert spec.cell.gates == ("r", "i", "u") and spec.cell.states == ("h",)
    with pytest.raises(ParamError, match="one of SCAN, CAFFE"):
        spec.param("engine").check("CUDNN")


def test_the_tooltip_gives_the_papers_equations_in_words():
    tip = registry.get("RGLRU").tooltip()
    for words in ("r = sigmoid(W_a x + b_a)", "i = sigmoid(W_x x + b_x)",
                  "a_t = a^(c * r) with a = sigmoid(Λ)", "c = 8",
                  "h = a_t * h_prev + sqrt(1 - a_t^2) * (i * u)", "u = W_u x + b_u",
                  "uniform in [0.9, 0.999]", "Griffin: Mixing Gated Linear Recurrences",
                  "Conv1D", "starts at zero"):
        assert words in tip, words


@pytest.mark.parametrize("levels,both", [(1, False), (3, False), (2, True)])
def test_parameters_are_the_input_transforms_and_the_decays(levels, both):
    g = net(num_layers=levels, bidirectional=both)
    h, d = 16, 2 if both else 1
    want = sum(d * (3 * h * (8 if k == 0 else d * h) + 3 * h + h) for k in range(levels))
    assert g.info("rnn").params == want and g.info("rnn").flops > 0
    for engine in ("SCAN", "CAFFE"):
        m = build("RGLRU", {"num_output": h, "num_layers": levels, "bidirectional": both,
                            "engine": engine}, 8)
        assert sum(p.numel() for p in m.parameters()) == want
    lstm = net(num_layers=levels, bidirectional=both)
    replace_layer(lstm, "rnn", "LSTM")
    assert g.info("rnn").params < lstm.info("rnn").params  # no recurrent matrix


def test_shapes_follow_the_recurrent_layers():
    g = net()
    assert g.errors() == [] and g.output("rnn", "y").shape == (12, 4, 16)
    g.set_param("rnn", "bidirectional", True)
    assert g.output("rnn", "y").shape == (12, 4, 32)
    g.connect("data", "cont", "rnn", "cont")
    assert "rnn is bidirectional: its backward half reads each sequence from the end" in \
        str(g.errors()[0])


def test_each_step_unrolls_to_a_scale_and_its_unit_reading_the_chains_decays():
    exp = expand_params("RGLRU", {"num_output": 6, "num_layers": 2, "bidirectional": True},
                        4, 3, 5, "rnn", lengths=True)
    assert [n.type for n in exp.step_nodes(2, level=1, direction=1)] == \
        ["SCALE", "RG_LRU_UNIT", "HOLD"]
    unit = exp.step_nodes(2, level=1, direction=1)[1]
    assert unit.params["weights"] == ("L1/Lambda_reverse",)
    assert [exp.shapes[b] for b in unit.bottoms] == [(1, 3, 6), (1, 3, 18)]
    assert exp.weights["L0/W_xc"] == (18, 5) and exp.weights["L1/W_xc_reverse"] == (18, 12)
    assert exp.weights["L0/Lambda"] == (6,) and len(exp.weights) == 12
    assert drawn_as("RG_LRU_UNIT") == "UNIT" and "RGLRU" in unrolling_kinds()
    e = expand(net(), "rnn", steps=3)
    assert e.counts() == {"INNER_PRODUCT": 1, "SLICE": 2, "SCALE": 3, "RG_LRU_UNIT": 3,
                          "CONCAT": 1}


def test_search_may_retype_a_recurrent_layer_into_it():
    from designer.search.design import apply, retyping_kinds
    from designer.search.space import parse_space
    assert "RGLRU" in retyping_kinds()
    project = P.load(PROJECTS / "char-rnn-shakespeare.json")
    space = {"lstm1.type": {"choice": ["LSTM", "RGLRU"]}}
    out = apply(project, parse_space(space, project), {"lstm1.type": "RGLRU"})
    layer = out.graph.layer("lstm1")
    assert layer.type == "RGLRU" and layer.params["num_layers"] == 2
    assert project.graph.layer("lstm1").type == "LSTM" and out.graph.errors() == []


def test_no_module_outside_its_folder_names_it():
    names = re.compile(r"\b(RGLRU|RG_LRU_UNIT|RG_LRU|rglru)\b")
    named = [str(p.relative_to(ROOT)) for p in (ROOT / "designer").rglob("*.py")
             if FOLDER not in p.parents and names.search(p.read_text(encoding="utf-8"))]
    assert named == []


def test_its_modules_stay_small():
    sizes = {str(p.relative_to(FOLDER)): len(p.read_text().splitlines())
             for p in FOLDER.rglob("*.py")}
    assert max(sizes.values()) <= 400, sizes
