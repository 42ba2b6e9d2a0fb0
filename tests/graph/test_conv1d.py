"""Conv1D, the convolution over time, as the designer sees it: shapes over symbolic steps, the
parameter and FLOP counts, and each mistake told in one sentence with the change that mends it."""
import pytest

from designer.graph import hints, registry
from designer.graph.memory import Setup, estimate
from designer.graph.model import Graph


def conv_net(t=6, lengths=False, **params) -> Graph:
    """TimeSeries (t steps of 2 features, batch 4) -> Conv1D, or SequenceClasses (T unknown,
    F features) -> Conv1D reading the lengths."""
    g = Graph()
    if lengths:
        g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
    else:
        g.add_layer("TimeSeries", "data", {"file": "nowhere.csv", "inputs": "a,b",
                                           "target": "a", "seq_len": t, "batch_size": 4})
    g.add_layer("Conv1D", "conv", {"num_output": 6, **params})
    g.connect("data", "data", "conv", "x")
    if lengths:
        g.connect("data", "lengths", "conv", "lengths")
    return g


def errors(g: Graph) -> list:
    return [p for p in g.problems() if p.kind != "data" and "no loss" not in str(p)]


@pytest.mark.parametrize("params, steps", [
    ({}, 6), ({"padding": "causal"}, 6), ({"padding": "valid"}, 4),
    ({"padding": "valid", "kernel_size": 2, "dilation": 3}, 3),
    ({"stride": 2}, 3), ({"stride": 4, "padding": "causal"}, 2),
    ({"stride": 2, "padding": "valid", "kernel_size": 2}, 3)])
def test_the_output_has_as_many_steps_as_the_windows_fit(params, steps):
    g = conv_net(6, **params)
    assert errors(g) == []
    assert g.output("conv", "y").shape == (steps, 4, 6) and g.output("conv", "y").batch == 1


@pytest.mark.parametrize("params, steps", [
    ({}, "T"), ({"padding": "causal"}, "T"), ({"padding": "valid"}, "T-2"),
    ({"stride": 2}, "ceil(T/2)"), ({"stride": 3, "padding": "valid"}, "ceil((T-2)/3)")])
def test_unknown_steps_stay_symbolic(params, steps):
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
    g.add_layer("Conv1D", "conv", {"num_output": 6, **params})
    g.connect("data", "data", "conv", "x")
    assert g.output("conv", "y").shape == (steps, 4, 6)


def test_batch_first_keeps_the_batch_in_front():
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4, "batch_first": True})
    g.add_layer("Conv1D", "conv", {"num_output": 8, "batch_first": True, "padding": "valid"})
    g.connect("data", "data", "conv", "x")
    assert g.output("conv", "y").shape == (4, 26, 8) and g.output("conv", "y").batch == 0


def test_parameters_and_flops_per_sample():
    g = conv_net(6, kernel_size=3, groups=2, num_output=6)
    # 6 filters of 3 steps over 2 / 2 = 1 channel, and 6 biases
    assert g.info("conv").params == 6 * 1 * 3 + 6
    assert g.info("conv").flops == 6 * (2 * 6 * 1 * 3 + 6)  # 6 steps of one sequence
    g.set_param("conv", "bias_term", False)
    assert g.info("conv").params == 18


def test_the_memory_estimate_counts_the_padded_copy():
    g = conv_net(6, padding="valid")
    valid = estimate(g, Setup("cpu", None)).activations
    g.set_param("conv", "padding", "same")
    assert estimate(g, Setup("cpu", None)).activations > valid


@pytest.mark.parametrize("params, says, fix", [
    ({"groups": 4}, "conv splits its 2 input channels into 4 groups, but 2 is not a multiple "
     "of 4", "set conv's groups to 1"),
    ({"groups": 2, "num_output": 5}, "conv makes 5 outputs in 2 groups, but 5 is not a "
     "multiple of 2", "set conv's num_output to"),
    ({"kernel_size": 4, "dilation": 2}, "conv has a kernel that spans 7 steps (kernel_size 4, "
     "dilation 2), longer than the 6 steps of its sequences", "set conv's kernel_size to 3"),
])
def test_each_mistake_is_one_sentence_on_the_layer_with_its_fix(params, says, fix):
    g = conv_net(6, **params)
    (problem,) = errors(g)
    assert problem.layer == "conv" and str(problem).startswith(says)
    assert problem.fix is not None and problem.fix.text.startswith(fix)
    hints.apply(g, problem.fix)
    assert errors(g) == []


@pytest.mark.parametrize("params, fix", [({"stride": 2}, "set conv's stride to 1"),
                                         ({"padding": "valid"}, "set conv's padding to same")])
def test_lengths_are_read_only_where_they_hold_for_the_output(params, fix):
    g = conv_net(lengths=True, **params)
    (problem,) = errors(g)
    assert "conv reads 'lengths', which hold for its output only when each output step " \
           "lines up with an input step" in str(problem)
    assert problem.fix.text == fix
    hints.apply(g, problem.fix)
    assert errors(g) == [] and g.output("conv", "y").shape == ("T", 4, 6)


def test_the_tooltip_explains_padding_stride_and_lengths():
    tip = registry.get("Conv1D").tooltip()
    assert registry.get("Conv1D").category in registry.CATEGORY_ORDER
    for words in ("causal", "no output sees the future", "ceil(T / s)", "lengths",
                  "stride 1 and padding same or causal"):
        assert words in tip
