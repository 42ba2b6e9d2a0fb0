"""``parity`` on the Char-RNN with its LSTM retyped to each recurrent cell: on the CPU every
cell's two sides are two different computations, and they agree within the tolerance, or
within what float32 rounding alone makes of a tensor where that is more; in float64 they agree
to 1e-10."""
import pytest
import torch

from designer.engines.parity import TOLERANCE, layer_parity
from designer.graph import project as P
from designer.graph.retype import replace_layer
from tests.conftest import PROJECTS

CELLS = ("LSTM", "GRU", "RNN", "LSTMSimple", "MinGRU", "MinLSTM", "sLSTM", "mLSTM")


def char_rnn(kind: str, size: int = 128):
    """The Char-RNN's graph (two levels, T=75, N=25) with its LSTM retyped to ``kind``."""
    graph = P.load(PROJECTS / "char-rnn-shakespeare.json").graph
    if kind != "LSTM":
        replace_layer(graph, "lstm1", kind)
    graph.set_param("lstm1", "num_output", size)
    return graph


def test_the_mlstm_passes_with_its_near_zero_gradient_measured_against_rounding():
    """The per-head norm cancels the denominator n^T q feeds, so the gradient reaching the
    starting normaliser n is some 1e-4 where the others are near 10: float32 rounds it at
    about 1e-6, more than 1e-5 of its own largest value, on either engine."""
    row = layer_parity(char_rnn("mLSTM"), "lstm1", steps=20)
    assert (row["steps"], row["batch"], row["levels"]) == (20, 8, 2)
    assert row["ok"], [d for d in row["diffs"] if d["rel"] > TOLERANCE]
    n = next(d for d in row["diffs"] if d["name"] == "grad initial n")
    assert n["scale"] < 1e-3 and n["abs"] > TOLERANCE * n["scale"]
    assert n["abs"] <= n["floor"]


def test_the_mlstm_engines_agree_in_float64():
    row = layer_parity(char_rnn("mLSTM"), "lstm1", steps=20, dtype=torch.float64)
    assert row["dtype"] == "float64" and row["tolerance"] == 1e-10 and row["ok"]
    for d in row["diffs"]:  # each against its own largest value, no floor needed
        assert d["abs"] <= 1e-10 * d["scale"], d


def test_the_slstm_compares_its_fused_loop_with_the_reference_executor():
    """On the CPU the FUSED engine runs its step loop; its gradient is the persistent
    kernels' (written out), not autograd's through the unit the unrolled net runs."""
    row = layer_parity(char_rnn("sLSTM"), "lstm1", steps=6, batch=2)
    grads = [d for d in row["diffs"] if d["name"].startswith("grad")]
    assert min(d["abs"] for d in grads) > 0   # different computations round differently
    assert row["ok"], [d for d in row["diffs"] if d["rel"] > TOLERANCE]
    assert row["compared"] == ["FUSED: the step loop (the layer runs on the CPU)",
                               "CAFFE: the reference executor, node by node"]


@pytest.mark.parametrize("kind", CELLS)
def test_every_cell_compares_two_different_computations_and_passes(kind):
    row = layer_parity(char_rnn(kind), "lstm1", steps=6, batch=2)
    assert row["max_abs"] > 0   # two different computations round differently
    assert row["ok"], [d for d in row["diffs"] if d["rel"] > TOLERANCE]
    fused, unrolled = row["compared"]
    assert fused != unrolled
    assert layer_parity(char_rnn(kind), "lstm1", steps=6, batch=2, dtype=torch.float64)["ok"]
