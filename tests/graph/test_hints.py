"""The designer names the cause of a mistake and offers the fix, for the mistakes newcomers
make most (tests/newcomer.py), and the fix it offers mends the net."""
import pytest

from designer.graph import hints
from designer.graph.validate import severity
from tests.conftest import DATA
from tests.newcomer import MISTAKES, char_net, write_corpus


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path)


def told(graph, severity_wanted):
    return [p for p in graph.problems() if severity(p) == severity_wanted]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_is_told_on_its_cause_with_a_fix_that_mends_it(mistake, corpus):
    g = mistake.build(corpus, DATA / "mnist")
    problems = told(g, mistake.severity)
    assert problems, f"{mistake.name}: the designer saw nothing wrong"
    p = problems[0]
    assert p.layer == mistake.layer, str(p)
    assert mistake.fix in str(p), str(p)
    assert p.fix is not None and mistake.fix.split(" ")[0] in p.fix.text
    hints.apply(g, p.fix)
    assert g.errors() == [], [str(e) for e in g.errors()]
    assert not [w for w in g.problems() if w.kind == "design"]


def test_too_few_outputs_names_the_layer_and_the_number(corpus):
    g = char_net(corpus, ip={"num_output": 10})
    v = g.dims["V"]
    (p,) = g.errors()
    assert str(p) == (f"ip has 10 outputs, but the labels take {v} values: set ip's "
                      f"num_output to V ({v})")
    assert (p.fix.param, p.fix.value) == ("num_output", "V")


def test_caffe_default_axis_says_axis_and_batch(corpus):
    g = char_net(corpus, ip={"axis": 1})
    (p,) = g.errors()
    assert p.layer == "ip" and "axis" in str(p) and "batch (N)" in str(p)
    assert (p.fix.param, p.fix.value) == ("axis", 2)


def test_enough_classes_is_fine_and_more_than_enough_too(corpus):
    g = char_net(corpus, ip={"num_output": 10})
    g.set_param("ip", "num_output", g.dims["V"] + 5)  # spare scores are allowed, as in Caffe
    assert g.errors() == []


def test_a_problem_no_single_change_mends_keeps_its_own_words(corpus):
    g = char_net(corpus)
    g.add_layer("Eltwise", "sum")
    g.connect("embed", "y", "sum", "a")
    g.connect("lstm", "y", "sum", "b")  # (T, N, 8) vs (T, N, 16): lstm's width would mend it
    (p,) = g.errors()
    assert p.fix is not None and p.layer == "lstm"
    g.set_param("embed", "num_output", 8)
    g.remove_layer("sum")
    g.add_layer("Reshape", "odd", {"shape": [3, -1], "axis": 0, "num_axes": -1})
    g.connect("data", "data", "odd", "x")  # 8 x 4 ids do not split into 3 rows
    (p,) = g.errors()
    assert p.fix is None and p.layer == "odd" and "cannot split" in str(p)


def test_problems_are_worked_out_once_per_change(corpus, monkeypatch):
    g = char_net(corpus, ip={"num_output": 10})
    calls = []
    real = hints.explain
    monkeypatch.setattr("designer.graph.validate.explain",
                        lambda graph, ps: calls.append(1) or real(graph, ps))
    g.problems(), g.errors(), g.problems()
    assert len(calls) == 1
    g.set_param("ip", "num_output", "V")
    assert g.errors() == [] and len(calls) == 2
