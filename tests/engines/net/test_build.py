"""The built module is exactly what the editor reports: every layer, its size and its shapes."""
import re
from pathlib import Path

import pytest
import torch

from designer.engines.measure.bench import random_feeds
from designer.engines.net.build import BUILDERS, BuildError, Net, builder_for, count_parameters
from designer.graph import Graph, registry
from designer.graph.shapes import resolve_params


def test_every_layer_spec_has_a_builder():
    # the plain layers' register when the net is imported; each cell's when first looked up
    assert all(callable(builder_for(t)) for t in registry.ids())
    assert set(registry.ids()) <= set(BUILDERS)
    with pytest.raises(BuildError, match="no engine can build an LSTMFancy layer"):
        builder_for("LSTMFancy")


def test_the_generic_engine_modules_name_no_cell():
    """A cell's builder, converter and state come from its own folder and its facts: the
    net, the step and the registries below the cells never name a recurrent layer type."""
    from designer.engines.train_step import cuda_graphs as graphs
    from designer.engines.train_step import step
    from designer.engines.net import convert
    from designer.engines.tensors import linear_scan, recurrent_state
    from designer.engines.tensors import fillers
    from designer.engines.net import builders
    from designer.engines.net import build
    kinds = registry.recurrent_kinds()
    for module in (build, builders, convert, fillers, graphs, linear_scan, recurrent_state,
                   step):
        text = Path(module.__file__).read_text()
        named = [k for k in kinds if re.search(rf"\b{k}\b", text)]
        assert named == [], f"{module.__name__} names {named}"
        assert "designer.cells" not in text, module.__name__


def test_each_recurrent_layer_starts_from_the_states_its_cell_declares(every_layer):
    g = every_layer("CUDNN")
    net = Net(g)
    state = net.initial_state(3)
    assert net.recurrent == [n for n in net.order if registry.cell(g.layer(n).type)]
    for name in net.recurrent:
        layer = g.layer(name)
        sizes = layer.spec.cell.sizes(resolve_params(layer.spec, layer.params, g.dims))
        assert [t.shape[-1] for t in state[name]] == list(sizes), name
        assert all(t.shape[1] == 3 and not t.any() for t in state[name]), name


def test_the_test_graph_uses_every_layer_type(every_layer):
    g = every_layer()
    assert {layer.type for layer in g.layers()} >= set(registry.ids()) - {
        "WavAudio", "MnistRows", "TimeSeries", "SequenceClasses"}  # data layers are fed
    assert g.errors() == []


@pytest.mark.parametrize("engine", ["CUDNN", "CAFFE"])
def test_params_and_every_output_shape_match_the_graph(every_layer, engine):
    g = every_layer(engine)
    torch.manual_seed(0)
    net = Net(g)
    per_layer = {name: count_parameters(net.layers[name]) for name in net.order}
    assert per_layer == {name: g.info(name).params for name in g.names()}
    assert count_parameters(net) == g.total_params()
    out = net(random_feeds(g, torch.device("cpu")))
    for name in net.order:
        for i, want in enumerate(g.info(name).outputs):
            got = out.blobs[(name, i)]
            assert tuple(got.shape) == tuple(want.shape), f"{name} output {i}"
    assert torch.isfinite(net.loss(out))


@pytest.mark.parametrize("project", ["char-rnn-shakespeare", "char-rnn-shakespeare-unrolled",
                                     "char-rnn-audio", "mnist-lstm"])
@pytest.mark.parametrize("engine", [None, "cudnn", "caffe"])
def test_example_projects_build_on_both_engines(project, engine):
    from designer.graph import project as P
    from tests.conftest import PROJECTS
    g = P.load(PROJECTS / f"{project}.json").graph
    if "V" not in g.dims:
        pytest.skip("the project's data is not available")
    if engine is None:
        g.set_param(g.sources()[0], "batch_size", 2)
    net = Net(g, engine)
    if engine is None:
        assert count_parameters(net) == g.total_params()
        out = net(random_feeds(g, torch.device("cpu")))
        for name in net.order:
            for i, want in enumerate(g.info(name).outputs):
                assert tuple(out.blobs[(name, i)].shape) == tuple(want.shape)


def test_an_invalid_graph_is_refused_with_its_first_problem():
    g = Graph()
    g.add_layer("LSTM", "lstm1")
    with pytest.raises(BuildError, match="lstm1: input 'x' is not connected"):
        Net(g)


def test_only_the_needed_layers_run_for_generation(every_layer):
    g = every_layer()
    net = Net(g).eval()
    feeds = random_feeds(g, torch.device("cpu"))
    feeds.pop("data.label")
    out = net(feeds, want=("ip1",))
    assert ("ip1", 0) in out.blobs and ("loss", 0) not in out.blobs
