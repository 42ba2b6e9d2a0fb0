"""Project files: versioned JSON, checked on load with JSON paths, saved atomically."""
import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.graph import project as P
from designer.graph import registry
from tests.conftest import PROJECTS

EXAMPLES = sorted(PROJECTS.glob("*.json"))


def example_dict(name="char-rnn-shakespeare.json") -> dict:
    return json.loads((PROJECTS / name).read_text())


def problems_of(data) -> list[tuple[str, str]]:
    with pytest.raises(P.ProjectError) as e:
        P.from_dict(data, file="p.json")
    return e.value.problems


def test_the_four_examples_exist():
    assert {p.name for p in EXAMPLES} >= {
        "char-rnn-shakespeare.json", "char-rnn-shakespeare-unrolled.json",
        "char-rnn-audio.json", "mnist-lstm.json"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_load_valid_and_round_trip_byte_identical(path, tmp_path):
    proj = P.load(path)
    assert proj.graph.errors() == []
    out = tmp_path / path.name
    proj.save(out)
    assert out.read_bytes() == path.read_bytes()


def test_example_layers_are_the_mycaffe_nets():
    cudnn = P.load(PROJECTS / "char-rnn-shakespeare.json").graph
    assert cudnn.names() == ["data", "embed", "lstm1", "ip1", "loss"]
    lstm = cudnn.layer("lstm1").effective_params()
    assert (lstm["num_output"], lstm["num_layers"], lstm["dropout_ratio"], lstm["engine"]) == \
        (512, 2, 0.3, "CUDNN")
    unrolled = P.load(PROJECTS / "char-rnn-shakespeare-unrolled.json").graph
    assert unrolled.names() == ["data", "embed", "lstm1", "drop1", "lstm2", "drop2", "ip1",
                                "loss"]
    assert {unrolled.layer(n).get("engine") for n in ("lstm1", "lstm2")} == {"CAFFE"}


def test_unknown_keys_are_reported_with_their_path_and_a_suggestion():
    d = example_dict()
    d["graph"]["layers"][2]["parmas"] = {}
    d["solver"]["base_lr_"] = 1
    probs = problems_of(d)
    assert ("$.graph.layers[2]", "unknown key 'parmas' (did you mean 'params'?)") in probs
    assert any(p == "$.solver" and "base_lr_" in m for p, m in probs)


def test_wrong_types_and_missing_fields():
    d = example_dict()
    d["graph"]["layers"][1]["pos"] = "here"
    del d["graph"]["layers"][0]["type"]
    probs = dict(problems_of(d))
    assert probs["$.graph.layers[1].pos"] == "must be an array, not a string"
    assert probs["$.graph.layers[0]"] == "missing required key 'type'"


def test_bad_parameter_values_name_the_layer_and_range():
    d = example_dict()
    d["graph"]["layers"][2]["params"]["dropout_ratio"] = 1.5
    d["graph"]["layers"][2]["params"]["num_ouput"] = 3
    probs = dict(problems_of(d))
    assert probs["$.graph.layers[2].params.dropout_ratio"] == \
        "lstm1: dropout_ratio must be a number from 0 to below 1, not 1.5"
    assert "did you mean 'num_output'" in probs["$.graph.layers[2].params.num_ouput"]


def test_duplicate_names_unknown_types_and_bad_links():
    d = example_dict()
    d["graph"]["layers"][3]["name"] = "embed"
    d["graph"]["layers"][4]["type"] = "SoftmaxLoss"
    probs = dict(problems_of(d))
    assert "duplicate layer name 'embed'" in probs["$.graph.layers[3].name"]
    assert "unknown layer type 'SoftmaxLoss'" in probs["$.graph.layers[4].type"]
    d = example_dict()
    d["graph"]["links"][0]["to"] = "embed.input"
    d["graph"]["links"][1]["from"] = "nobody.y"
    probs = dict(problems_of(d))
    assert probs["$.graph.links[0].to"] == "embed (Embed) has no input 'input' (it has x)"
    assert "'nobody'" in probs["$.graph.links[1].from"]


def test_a_cycle_in_the_file_is_reported_not_raised():
    d = {"schema_version": 1, "graph": {
        "layers": [{"name": n, "type": "ReLU"} for n in "abc"],
        "links": [{"from": "a.y", "to": "b.x"}, {"from": "b.y", "to": "c.x"},
                  {"from": "c.y", "to": "a.x"}]}}
    ((path, msg),) = problems_of(d)
    assert path.startswith("$.graph.links[") and "cycle" in msg and "a -> b -> c -> a" in msg


def test_an_input_fed_twice_in_the_file():
    d = {"schema_version": 1, "graph": {
        "layers": [{"name": n, "type": "ReLU"} for n in "abc"],
        "links": [{"from": "a.y", "to": "c.x"}, {"from": "b.y", "to": "c.x"}]}}
    assert problems_of(d) == [("$.graph.links[1].to", "c.x is already fed by $.graph.links[0]")]


@pytest.mark.parametrize("raw, words", [
    (b"", "is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    (b"{\"schema_version\": 1,", "not valid JSON (line 1"),
    (b"[1, 2]", "must be a JSON object"),
    (b"{\"graph\": {}}", "schema_version"),
    (b"{\"schema_version\": 99, \"graph\": {\"layers\": [], \"links\": []}}", "newer"),
])
def test_unreadable_files_give_one_sentence_naming_the_file(tmp_path, raw, words):
    f = tmp_path / "bad.json"
    f.write_bytes(raw)
    with pytest.raises(P.ProjectError) as e:
        P.load(f)
    text = str(e.value)
    assert text.startswith(str(f)) and words in text and "\n" not in text


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(P.ProjectError, match="does not exist"):
        P.load(tmp_path / "nope.json")
    with pytest.raises(P.ProjectError, match="is a folder"):
        P.load(tmp_path)


def test_save_is_atomic_and_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    proj = P.load(PROJECTS / "mnist-lstm.json")
    target = tmp_path / "p.json"
    target.write_text("old contents")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        proj.save(target)
    assert target.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["p.json"]  # no temporary file left behind
    monkeypatch.undo()
    proj.save(target)
    assert P.load(target).graph.names() == proj.graph.names()


# --------------------------------------------------------------------------------- fuzzing --
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                              max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_gives_a_project_or_a_project_error(value):
    try:
        P.loads(json.dumps(value).encode())
    except P.ProjectError as e:
        assert str(e)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_project_or_a_project_error(raw):
    try:
        P.loads(raw)
    except P.ProjectError as e:
        assert str(e)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


BASE = example_dict("char-rnn-shakespeare-unrolled.json")
ALL_PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_PATHS), json_values, st.booleans())
def test_mutating_a_valid_project_never_escapes_as_a_traceback(path, value, delete):
    d = copy.deepcopy(BASE)
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    try:
        proj = P.from_dict(d)
    except P.ProjectError as e:
        assert str(e) and all(p.startswith("$") or p == "" for p, _ in e.problems)
    else:
        proj.graph.problems()  # a loadable mutation must also validate cleanly


SIMPLE = [s for s in registry.all_specs() if len(s.inputs) == 1 and s.inputs[0].dtype == "float"
          and not s.inputs[0].optional and len(s.outputs) == 1]


@st.composite
def chains(draw):
    n = draw(st.integers(1, 8))
    kinds = draw(st.lists(st.sampled_from(SIMPLE), min_size=n, max_size=n))
    layers = []
    for i, spec in enumerate(kinds):
        params = {}
        for p in spec.params:
            if draw(st.booleans()) and p.kind == "choice":
                params[p.name] = draw(st.sampled_from(p.choices))
            elif draw(st.booleans()) and p.kind == "int" and p.minimum is not None:
                params[p.name] = draw(st.integers(int(p.minimum), int(min(p.maximum or 64, 64))))
        layers.append({"name": f"l{i}", "type": spec.id, "params": params,
                       "pos": [draw(st.integers(-500, 500)), i * 110]})
    links = [{"from": f"l{i}.y", "to": f"l{i + 1}.x"} for i in range(n - 1)]
    return {"schema_version": 1, "name": draw(st.text(max_size=10)), "description": "",
            "graph": {"layers": layers, "links": links}, "solver": {}, "training": {}}


@settings(max_examples=100, deadline=None)
@given(chains())
def test_generated_projects_round_trip_byte_identical(data):
    text = P.dumps(data)
    once = P.loads(text.encode()).to_json()
    assert once == text
    assert P.loads(once.encode()).to_json() == once
