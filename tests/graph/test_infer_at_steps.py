"""Shapes at another number of steps: a fixed-length export asks what each layer gets when the
data serves a chosen number of steps, and a strided or 'valid' Conv1D tells the layers behind
it how many of them are left, while the design itself keeps its own shapes."""
from designer.graph.model import Graph
from designer.graph.shapes import infer_at_steps


def conv_lstm(data: str = "SequenceClasses", **conv) -> Graph:
    """Sequences (T unknown, or 6 rows of a table) -> Conv1D -> LSTM."""
    g = Graph()
    if data == "SequenceClasses":
        g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
        g.pin_dims({"F": 3})
    else:
        g.add_layer("TimeSeries", "data", {"file": "nowhere.csv", "inputs": "a,b",
                                           "target": "a", "seq_len": 6, "batch_size": 4})
    g.add_layer("Conv1D", "conv", {"num_output": 5, **conv})
    g.add_layer("LSTM", "lstm", {"num_output": 4})
    g.connect("data", "data", "conv", "x")
    g.connect("conv", "y", "lstm", "x")
    return g


def test_the_symbolic_steps_become_a_number():
    g = conv_lstm(padding="valid", stride=2)
    assert g.info("lstm").inputs[0].shape == ("ceil((T-2)/2)", 4, 5)
    infos = infer_at_steps(g, 7)
    assert infos["data"].outputs[0].shape == (7, 4, 3)
    assert infos["lstm"].inputs[0].shape == (3, 4, 5)  # floor((7 - 2 - 1) / 2) + 1
    assert infos["lstm"].outputs[0].shape == (3, 4, 4) and not infos["lstm"].problems


def test_a_known_sequence_length_is_replaced_and_the_design_kept():
    g = conv_lstm("TimeSeries", padding="causal", stride=3, dilation=2)
    assert g.info("lstm").inputs[0].shape[0] == 2
    assert infer_at_steps(g, 11)["lstm"].inputs[0].shape[0] == 4  # ceil(11 / 3)
    assert g.info("lstm").inputs[0].shape[0] == 2 and g.layer("data").get("seq_len") == 6


def test_too_few_steps_for_the_kernel_is_told_where_it_happens():
    infos = infer_at_steps(conv_lstm(padding="valid", kernel_size=5), 3)
    assert "spans 5 steps (kernel_size 5, dilation 1), longer than the 3 steps" in str(infos["conv"].problems[0])
    assert infos["lstm"].inputs[0] is None
