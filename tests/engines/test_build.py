"""The built module is exactly what the editor reports: every layer, its size and its shapes."""
import pytest
import torch

from designer.engines.bench import random_feeds
from designer.engines.build import BUILDERS, BuildError, Net, count_parameters
from designer.graph import Graph, registry


def test_every_layer_spec_has_a_builder():
    Net(Graph())  # importing the net registers every builder
    assert set(registry.ids()) <= set(BUILDERS)


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
