"""Augmentation on the sequence data layers (issue 25): jitter, scaling and window_slice are
declared once on TimeSeries and SequenceClasses, off by default, told in plain words, refused
out of range in one sentence on the layer, and an old project file loads without them."""
import pytest

from designer.graph import project, registry
from designer.graph.errors import ParamError
from designer.graph.model import Graph

LAYERS = ("TimeSeries", "SequenceClasses")
OFF = {"jitter": 0.0, "scaling": 0.0, "window_slice": 1.0}


@pytest.mark.parametrize("type_id", LAYERS)
def test_the_options_are_off_by_default_and_say_what_they_do(type_id):
    spec = registry.get(type_id)
    for name, off in OFF.items():
        p = spec.param(name)
        assert p.kind == "float" and p.default == off
        assert "training batches only" in p.help and "small data set" in p.help
        assert (p.minimum, p.maximum) == (0.0, 1.0)


@pytest.mark.parametrize("type_id", LAYERS)
def test_values_out_of_range_are_refused_in_one_sentence(type_id):
    g = Graph()
    g.add_layer(type_id, "data", {"file": "nowhere.csv"})
    for name, bad in (("jitter", -0.1), ("scaling", 2.0), ("window_slice", 1.5)):
        with pytest.raises(ParamError) as e:
            g.set_param("data", name, bad)
        assert str(e.value) == f"data: {name} must be a number from 0 to 1, not {bad!r}"
        assert "\n" not in str(e.value)
    g.set_param("data", "window_slice", 0.0)  # the spec's range closes at 0; the layer refuses
    text = [str(p) for p in g.errors() if "window_slice" in str(p)]
    assert text == [("data: window_slice must be above 0 and at most 1 (1 keeps the whole "
                     "sequence), not 0.0")]
    g.set_param("data", "window_slice", 0.9)
    assert not [p for p in g.errors() if "window_slice" in str(p)]


def test_an_old_project_file_loads_unchanged_and_the_options_round_trip():
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "x.ts"})
    p = project.new_project("old")
    p.graph = g
    old = p.to_dict()
    assert "jitter" not in old["graph"]["layers"][0].get("params", {})
    again = project.from_dict(old)
    assert {k: again.graph.layer("data").effective_params()[k] for k in OFF} == OFF
    again.graph.set_param("data", "jitter", 0.05)
    again.graph.set_param("data", "window_slice", 0.9)
    back = project.from_dict(project.loads(again.to_json()).to_dict())
    params = back.graph.layer("data").params
    assert params["jitter"] == 0.05 and params["window_slice"] == 0.9
    assert back.to_dict()["schema_version"] == old["schema_version"]


def test_a_project_file_with_a_bad_value_names_it():
    data = project.new_project("bad").to_dict()
    data["graph"]["layers"] = [{"name": "data", "type": "TimeSeries",
                                "params": {"scaling": -1}}]
    with pytest.raises(project.ProjectError) as e:
        project.from_dict(data)
    assert "data: scaling must be a number from 0 to 1, not -1" in str(e.value)
