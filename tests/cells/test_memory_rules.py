"""The memory estimate of the newer cells (sLSTM, mLSTM, MinGRU, MinLSTM) against what a
training step really holds on the CPU: the tensors torch allocates at most at once (the
profiler's allocation events), per cell, engine and shape.

The saved tensors alone are checked per layer next to each cell (test_slstm, test_mlstm,
test_min_rnn); this checks the whole step, where the forward's temporaries (the input
transform, the unrolled net's blobs held to the layer's end) and the backward's come on top."""
import pytest
import torch
from torch import nn

from designer.engines.measure.bench import allocated_peak, random_feeds
from designer.engines.net.build import Net, detach_state
from designer.engines.train_step.step import make_optimizer
from designer.graph import Graph, settings
from designer.graph.memory import Setup, estimate
from tests.nets import link_all


def net_graph(kind: str, steps: int, batch: int, hidden: int, levels: int, both: bool,
              heads: int) -> Graph:
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": steps,
                                     "batch_size": batch})
    g.add_layer("Embed", "embed", {"num_output": 16, "input_dim": 40})
    p = {"num_output": hidden, "num_layers": levels, "dropout_ratio": 0.2 if levels > 1 else 0}
    if kind in ("sLSTM", "mLSTM"):
        p["num_heads"] = heads
    if kind != "mLSTM":
        p["bidirectional"] = both
    g.add_layer(kind, "rnn", p)
    g.add_layer("InnerProduct", "ip1", {"num_output": 40, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    links = [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
             ("ip1.y", "loss.logits"), ("data.label", "loss.label")]
    link_all(g, links + ([] if both else [("data.cont", "rnn.cont")]))
    g.pin_dims({"V": 40})
    return g


def step_peak(g: Graph, engine: str) -> int:
    """Bytes a training step (Adam, the state carried) holds at most: the weights, the
    optimizer's moments, the batch and the carried state, and the step's peak on top."""
    torch.manual_seed(0)
    net = Net(g, engine).train()
    params = list(net.parameters())
    opt = make_optimizer(params, settings.effective("solver", {"type": "Adam"}),
                         torch.device("cpu"))
    feeds = random_feeds(g, torch.device("cpu"))
    state = [net.initial_state(int(g.dims["N"]))]

    def step():
        out = net(feeds, state[0])
        net.loss(out).backward()
        nn.utils.clip_grad_norm_(params, 5.0, foreach=True)
        opt.step()
        state[0] = detach_state(out.state)

    step()  # the optimizer's moments exist from here on
    opt.zero_grad(set_to_none=True)
    held = [*params, *feeds.values(), *(t for s in state[0].values() for t in s),
            *(t for s in opt.state.values() for t in s.values() if torch.is_tensor(t))]
    base = sum(t.untyped_storage().nbytes() for t in held if t is not None)
    return base + allocated_peak(step)


SHAPES = {"long": (96, 4, 128, 1, False, 2), "wide batch, 3 levels": (16, 32, 64, 3, False, 4),
          "bidirectional": (40, 8, 96, 2, True, 4)}


@pytest.mark.parametrize("engine", ["cudnn", "caffe"])
@pytest.mark.parametrize("kind", ["sLSTM", "mLSTM", "MinGRU", "MinLSTM"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_estimate_matches_a_training_steps_peak(kind, engine, shape):
    g = net_graph(kind, *SHAPES[shape])
    est = estimate(g, Setup("cpu", engine, solver={"type": "Adam"})).total
    measured = step_peak(g, engine)
    assert abs(est / measured - 1) < 0.2, (est, measured)


def test_the_mlstm_counts_its_state_whatever_the_length():
    """A short sequence of wide heads: the matrix memory the level starts from and ends with
    (of fixed size) is much of the step."""
    g = net_graph("mLSTM", 4, 16, 128, 1, False, 1)
    est = estimate(g, Setup("cpu", "cudnn", solver={"type": "Adam"})).total
    assert abs(est / step_peak(g, "cudnn") - 1) < 0.2


def test_the_cpus_logsigmoid_keeps_a_buffer_the_size_of_its_input():
    """What the sLSTM's rule takes off on a GPU (``memory.PER_LEVEL["CAFFE cuda"]``): on the CPU
    logsigmoid saves its input and a buffer as large (torch's CUDA kernel saves an empty one)."""
    x = torch.randn(4, 16, requires_grad=True)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        nn.functional.logsigmoid(x)
    others = [t for t in saved if t.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()]
    assert [t.numel() for t in others] == [x.numel()]
