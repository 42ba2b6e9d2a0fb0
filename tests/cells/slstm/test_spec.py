"""The sLSTM as the designer knows it: spec, tool-tip, shapes, counts, the heads' check and its
Fix, memory."""
import pytest

from designer.graph import Graph, registry
from designer.graph.hints import apply
from designer.cells.slstm.spec import nearest_divisor
from designer.graph.memory import Setup, estimate
from designer.graph.validate import problem_json
from tests.nets import char_net


def net(**params) -> Graph:
    """data -> Embed 8 -> sLSTM -> InnerProduct V -> loss, V pinned to 20."""
    return char_net("sLSTM", {"num_output": 16, **params})


def test_the_spec_names_its_caffe_type_heads_and_forget_gates():
    spec = registry.get("sLSTM")
    assert spec.caffe_type == "SLSTM"
    assert spec.param("num_heads").default == 4
    assert spec.param("forget_gate").choices == ("sigmoid", "exp")


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


def test_the_persistent_kernels_keep_less_than_the_fused_engine():
    g = net(num_layers=2)
    fused = estimate(g, Setup("cpu", "cudnn"))
    kernels = estimate(g, Setup("cuda", "cudnn"))   # the persistent kernels keep less
    assert 0 < kernels.layers["rnn"] < fused.layers["rnn"]


def test_the_unrolled_net_keeps_one_h_a_step_less_on_a_gpu():
    """The CPU's logsigmoid (the forget gate) saves a buffer of its input's size for its
    backward, torch's CUDA kernel none: on a GPU the unrolled net keeps 1 H less a step."""
    g = net()  # one level, no dropout: no mask to differ by device
    cpu = estimate(g, Setup("cpu", "caffe")).layers["rnn"]
    gpu = estimate(g, Setup("cuda", "caffe")).layers["rnn"]
    assert cpu - gpu == 4 * 12 * 4 * 16  # float32, T=12 steps of N=4 x H=16
