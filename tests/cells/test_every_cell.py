"""What every cell with an engine of its own (MinGRU, MinLSTM, mLSTM, sLSTM, RG-LRU, and whatever
cell comes next) shares as the designer knows it: its spec offers that engine by default and the
unrolled net beside it, both hold the same tensors, shapes and the memory estimate follow, and
it leaves the designer as ONNX that steps on from the state it gave back, as a standalone
model.py that carries its state, and as prototxt read back.

The cells are read from the registry; each one's own numbers stand in the tables below, and a
cell missing from them fails the first test."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import designer.cells
from designer.cli import main
from designer.exchange.source import ModelSource
from designer.graph import Graph, registry
from designer.graph.errors import ParamError
from designer.graph.memory import Setup, estimate
from designer.graph.registry import engine_for, weight_layout
from tests.exchange.caffe.test_exporter import layers, links, round_trip
from tests.exchange.conftest import text_project
from tests.exchange.pytorch_export.test_code import load_module
from tests.cells.running import char_feeds, rel
from tests.nets import char_net

designer.cells.load()
KINDS = [k for k in registry.recurrent_kinds() if registry.cell(k).fused]
OWN_ENGINE = {"MinGRU": "SCAN", "MinLSTM": "SCAN", "mLSTM": "CHUNK", "sLSTM": "FUSED",
              "RGLRU": "SCAN"}
ONE_WAY = {"mLSTM"}  # runs forward only: bidirectional is an error with its fix
FUSED_KEEPS_MORE = {"MinGRU": True, "MinLSTM": True, "mLSTM": False, "sLSTM": False,
                    "RGLRU": True}
MODEL_PY_TOL = {"mLSTM": 1e-5}  # the chunkwise sums in another order; the others 1e-6
HEADS = {"mLSTM": 2}  # the heads of the spec tests' nets where the default does not fit
ENGINES_NET = {"sLSTM": {"num_output": 8, "num_heads": 2}}  # the engine tests' layer; else 16
CLASSES = {"MinGRU": ("ScanRecurrent", "UnrolledRecurrent"),  # its own engine's, the unrolled
           "MinLSTM": ("ScanRecurrent", "UnrolledRecurrent"),
           "mLSTM": ("ChunkMLSTM", "UnrolledMLSTM"), "sLSTM": ("FusedSLSTM", "UnrolledRecurrent"),
           "RGLRU": ("ScanRGLRU", "UnrolledRecurrent")}
CAFFE_NOTE = {"MinGRU", "MinLSTM", "sLSTM", "RGLRU"}  # the cells whose prototxt notes the layer's name


def heads_of(kind: str) -> dict:
    return {"num_heads": HEADS[kind]} if kind in HEADS else {}


def net(kind: str, **params) -> Graph:
    """data -> Embed 8 -> the cell's layer of 16 -> InnerProduct V -> loss, V pinned to 20."""
    return char_net(kind, {"num_output": 16, **heads_of(kind), **params})


def heads(kind: str, n: int) -> dict | None:
    """``n`` heads for a cell that splits its units into heads, else nothing extra."""
    return {"num_heads": n} if registry.get(kind).has_param("num_heads") else None


def test_every_cell_with_an_engine_of_its_own_is_in_the_tables():
    assert sorted(KINDS) == sorted(OWN_ENGINE) == sorted(FUSED_KEEPS_MORE)


@pytest.mark.parametrize("kind", KINDS)
def test_the_spec_offers_its_own_engine_by_default_and_the_unrolled_net(kind):
    spec, own = registry.get(kind), OWN_ENGINE[kind]
    assert spec.category == "Recurrent"
    assert spec.param("engine").choices == (own, "CAFFE")
    assert spec.param("engine").default == own
    assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
    with pytest.raises(ParamError, match=f"one of {own}, CAFFE"):
        spec.param("engine").check("CUDNN")


@pytest.mark.parametrize("kind", KINDS)
def test_the_engines_and_their_tensors(kind):
    own = OWN_ENGINE[kind]
    assert weight_layout(own) == "CAFFE"  # its own engine holds the unrolled net's tensors
    assert engine_for(kind, "cudnn") == own and engine_for(kind, "persist") == own
    assert engine_for(kind, "caffe") == "CAFFE"


@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpoint_of_either_engine_loads_into_the_other_as_it_is(kind):
    from designer.engines.net.build import Net
    from designer.engines.net.convert import convert_state_dict
    own = OWN_ENGINE[kind]
    params = ENGINES_NET.get(kind, {"num_output": 16, **heads_of(kind)})
    g = char_net(kind, {**params, "num_layers": 2, "engine": own}, steps=10, vocab=12,
                 cont=True)
    torch.manual_seed(0)
    fast, unrolled = Net(g), Net(g, "caffe")
    assert fast.engines["rnn"] == own
    assert (type(fast.layers["rnn"]).__name__, type(unrolled.layers["rnn"]).__name__) == \
        CLASSES[kind]
    state = fast.state_dict()
    assert convert_state_dict(state, {"rnn": (kind, 2)}, {"rnn": own},
                              {"rnn": "CAFFE"}).keys() == state.keys()
    unrolled.load_state_dict(state)  # strict: the same keys and shapes
    with torch.no_grad():
        a, b = fast(char_feeds()), unrolled(char_feeds())
    assert rel(b.blobs[("ip1", 0)], a.blobs[("ip1", 0)]) < 1e-5
    assert len(a.state["rnn"]) == len(registry.cell(kind).states)
    for mine, theirs in zip(a.state["rnn"], b.state["rnn"]):
        assert rel(theirs, mine) < 1e-5
    fast.load_state_dict(unrolled.state_dict())


def test_a_cell_without_an_engine_of_its_own_runs_on_the_one_asked_for():
    assert engine_for("LSTM", "cudnn") == "CUDNN"


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ONE_WAY])
def test_shapes_follow_the_recurrent_layers(kind):
    g = net(kind)
    assert g.errors() == [] and g.output("rnn", "y").shape == (12, 4, 16)
    g.set_param("rnn", "bidirectional", True)
    assert g.output("rnn", "y").shape == (12, 4, 32)
    g.connect("data", "cont", "rnn", "cont")
    assert "rnn is bidirectional: its backward half reads each sequence from the end" in \
        str(g.errors()[0])


@pytest.mark.parametrize("kind", KINDS)
def test_batch_first_is_read_back_in_words(kind):
    g = net(kind)
    g.set_param("rnn", "batch_first", True)
    assert "rnn reads (12, 4, 8) as (N, T, E) since batch_first is true" in str(g.errors()[0])


@pytest.mark.parametrize("kind", KINDS)
def test_the_memory_estimate_knows_both_engines(kind):
    g = net(kind, num_layers=2)
    own = estimate(g, Setup("cpu", "cudnn"))  # all fused: the cell's own engine
    unrolled = estimate(g, Setup("cpu", "caffe"))
    assert own.layers["rnn"] > 0 and unrolled.layers["rnn"] > 0
    assert (own.layers["rnn"] > unrolled.layers["rnn"]) == FUSED_KEEPS_MORE[kind]
    assert own.layers["rnn"] != unrolled.layers["rnn"]
    g.set_param("rnn", "engine", "CAFFE")
    assert estimate(g, Setup("cpu")).layers["rnn"] == unrolled.layers["rnn"]


@pytest.mark.parametrize("kind", KINDS)
def test_onnx_steps_on_from_the_state_it_gave_back(tmp_path, kind):
    """T and N are dynamic: two halves, the state at T fed back as the start, give the whole
    sequence."""
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session, torch_run
    project = text_project(tmp_path, kind, OWN_ENGINE[kind], extra=heads(kind, 4))
    source = ModelSource(project, tmp_path / "tiny.json")
    model, _ = build_model(source)
    sess = session(model)
    names = [o.name for o in sess.get_outputs()]
    tokens = torch.randint(0, project.graph.dims["V"], (9, 5),
                           generator=torch.Generator().manual_seed(2))
    whole, _ = torch_run(source.build_net(), {"data.data": tokens})
    first = dict(zip(names, sess.run(None, {"tokens": tokens[:4].numpy()})))
    carried = {f"rnn1.{s}0": first[f"rnn1.{s}T"] for s in registry.cell(kind).states}
    second = sess.run(None, {"tokens": tokens[4:].numpy(), **carried})
    assert np.abs(np.concatenate([first["logits"], second[0]]) - whole).max() < TOL


@pytest.mark.parametrize("kind", KINDS)
def test_model_py_runs_on_its_own_and_carries_its_state(tmp_path, kind):
    project = text_project(tmp_path, kind, OWN_ENGINE[kind], extra=heads(kind, 2))
    out = tmp_path / "export"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "pytorch", "--out",
                 str(out)]) == 0
    run = subprocess.run([sys.executable, "model.py"], cwd=out, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "output (5, 2, " in run.stdout
    model = load_module(out, f"text_{kind}").load(out)
    tokens = torch.randint(0, project.graph.dims["V"], (9, 3))
    with torch.no_grad():
        whole, _ = model(tokens)
        first, s1 = model(tokens[:4])
        second, _ = model(tokens[4:], s1)
    assert (torch.cat([first, second]) - whole).abs().max() < MODEL_PY_TOL.get(kind, 1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_prototxt_names_the_layer_and_reads_it_back(tmp_path, kind):
    from designer.exchange.caffe.exporter import export_messages
    project = text_project(tmp_path, kind, "CAFFE", extra=heads(kind, 2))
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()
    notes = export_messages(project)[2]
    if kind in CAFFE_NOTE:
        assert f"rnn1: Caffe and MyCaffe have no {kind} layer; the file names it {kind}, " \
            "which rnn-designer reads back" in notes
