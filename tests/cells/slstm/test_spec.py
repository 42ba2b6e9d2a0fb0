"""The sLSTM as the designer knows it: spec, tool-tip, shapes, counts, the heads' check and its
Fix, memory."""
import pytest

from designer.graph import Graph, registry
from designer.graph.errors import ParamError
from designer.graph.hints import apply
from designer.graph.registry import engine_for, weight_layout
from designer.cells.slstm.spec import nearest_divisor
from designer.graph.memory import Setup, estimate
from designer.graph.validate import problem_json


def net(**params) -> Graph:
    """data -> Embed 8 -> sLSTM -> InnerProduct V -> loss, V pinned to 20."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, "input_dim": 20})
    g.add_layer("sLSTM", "rnn", {"num_output": 16, **params})
    g.add_layer("InnerProduct", "ip1", {"num_output": 20, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for a, b in [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    g.pin_dims({"V": 20})
    return g


def test_the_spec_offers_the_fused_engine_by_default_and_the_unrolled_net():
    spec = registry.get("sLSTM")
    assert spec.category == "Recurrent" and spec.caffe_type == "SLSTM"
    assert spec.param("engine").choices == ("FUSED", "CAFFE")
    assert spec.param("engine").default == "FUSED"
    assert spec.param("num_heads").default == 4
    assert spec.param("forget_gate").choices == ("sigmoid", "exp")
    assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
    with pytest.raises(ParamError, match="one of FUSED, CAFFE"):
        spec.param("engine").check("CUDNN")


def test_the_tooltip_gives_the_cells_equations_in_words():
    tip = registry.get("sLSTM").tooltip()
    for words in ("i = exp(i~)", "f = sigmoid(f~) or exp(f~)", "m = max(log f + m_prev, log i)",
                  "n = f' n_prev + i'", "c = f' c_prev + i' z", "h = o * c / n",
                  "block-diagonal in heads", "xLSTM"):
        assert words in tip, words


@pytest.mark.parametrize("levels,both,heads", [(1, False, 4), (3, False, 2), (2, True, 1)])
def test_parameters_count_one_recurrent_block_per_head(levels, both, heads):
    g = net(num_layers=levels, bidirectional=both, num_heads=heads)
    h, d = 16, 2 if both else 1
    want = sum(d * (4 * h * (8 if k == 0 else d * h) + 4 * h + heads * 4 * (h // heads) ** 2)
               for k in range(levels))
    assert g.errors() == [] and g.info("rnn").params == want
    one_head = net(num_layers=levels, bidirectional=both, num_heads=1)
    assert g.info("rnn").params <= one_head.info("rnn").params
    assert g.info("rnn").flops <= one_head.info("rnn").flops and g.info("rnn").flops > 0


def test_shapes_follow_the_recurrent_layers():
    g = net()
    assert g.errors() == [] and g.output("rnn", "y").shape == (12, 4, 16)
    g.set_param("rnn", "bidirectional", True)
    assert g.output("rnn", "y").shape == (12, 4, 32)
    g.connect("data", "cont", "rnn", "cont")
    assert "rnn is bidirectional: its backward half reads each sequence from the end" in \
        str(g.errors()[0])


@pytest.mark.parametrize("hidden,heads,best", [(16, 3, 4), (512, 5, 4), (12, 5, 6),
                                               (7, 3, 1), (10, 9, 10)])
def test_the_nearest_divisor(hidden, heads, best):
    assert nearest_divisor(hidden, heads) == best


def test_a_head_count_that_does_not_divide_h_is_an_error_with_its_fix():
    g = net(num_heads=3)
    (err,) = g.errors()
    text = str(err)
    assert text == ("rnn splits its 16 hidden units into 3 heads, but 3 does not divide 16: "
                    "every head needs the same number of units; set rnn's num_heads to 4")
    assert problem_json(err)["fix"] == {"kind": "set", "layer": "rnn", "param": "num_heads",
                                        "value": 4, "text": "set rnn's num_heads to 4"}
    apply(g, err.fix)
    assert g.errors() == [] and g.layer("rnn").get("num_heads") == 4


def test_the_engines_and_their_tensors():
    assert weight_layout("FUSED") == "CAFFE"  # the fused engine holds the unrolled tensors
    assert engine_for("sLSTM", "cudnn") == "FUSED" and engine_for("sLSTM", "persist") == "FUSED"
    assert engine_for("sLSTM", "caffe") == "CAFFE"


def test_the_memory_estimate_knows_both_engines():
    g = net(num_layers=2)
    fused = estimate(g, Setup("cpu", "cudnn"))
    unrolled = estimate(g, Setup("cpu", "caffe"))
    assert unrolled.layers["rnn"] > fused.layers["rnn"] > 0
    g.set_param("rnn", "engine", "CAFFE")
    assert estimate(g, Setup("cpu")).layers["rnn"] == unrolled.layers["rnn"]
    g.set_param("rnn", "engine", "FUSED")
    kernels = estimate(g, Setup("cuda", "cudnn"))   # the persistent kernels keep less
    assert 0 < kernels.layers["rnn"] < fused.layers["rnn"]


def test_the_unrolled_net_keeps_one_h_a_step_less_on_a_gpu():
    """The CPU's logsigmoid (the forget gate) saves a buffer of its input's size for its
    backward, torch's CUDA kernel none: on a GPU the unrolled net keeps 1 H less a step."""
    g = net()  # one level, no dropout: no mask to differ by device
    cpu = estimate(g, Setup("cpu", "caffe")).layers["rnn"]
    gpu = estimate(g, Setup("cuda", "caffe")).layers["rnn"]
    assert cpu - gpu == 4 * 12 * 4 * 16  # float32, T=12 steps of N=4 x H=16
