"""The cuDNN engine's device-side lengths path (``recurrent_masked``), which a training step that
throws the state away takes so that it can be captured in a CUDA graph: it computes what packing
computes (outputs, zeros at padded steps, h, every gradient), gives NaN for an LSTM's c, is taken
only where it may be, and lets a classifier's step be captured. On the CPU here, with the path
forced on (``ON_CPU``)."""
import pytest
import torch

from designer.engines.tensors import recurrent_state

from designer.cells.classic.engines import masked as recurrent_masked

from designer.cells.classic.engines import cudnn as recurrent
from designer.engines.net.build import Net
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.engines.train_step.step import TrainStep, discarding_state, make_optimizer
from designer.graph import Graph, settings
from designer.training.new_from_data.designs import classifier

KINDS = ["LSTM", "GRU", "RNN"]
LENGTHS = {"all full": [7, 7, 7, 7, 7], "all one step": [1, 1, 1, 1, 1],
           "mixed, one empty": [7, 1, 4, 0, 6]}


@pytest.fixture
def masked(monkeypatch):
    """Force the path on the CPU and count the calls that take it."""
    monkeypatch.setattr(recurrent_masked, "ON_CPU", True)
    calls = []

    def counted(*args):
        calls.append(args[0].name)
        return recurrent_masked.run_masked(*args)
    monkeypatch.setattr(recurrent, "run_masked", counted)
    return calls


def layer(kind, levels, bidirectional, batch_first=False, dropout=0.0, inputs=3):
    torch.manual_seed(0)
    m = CudnnRecurrent(kind, inputs, 4, levels, dropout, batch_first, bidirectional=bidirectional)
    with torch.no_grad():
        for p in m.parameters():
            p.uniform_(-0.6, 0.6)
    return m


def run(m, x, lengths, discarded, state=None, cont=None):
    """Forward, then backward from random weights on the outputs and on h: the outputs, the
    state, the input's gradient and every parameter's."""
    m.state_discarded = discarded
    x = x.clone().requires_grad_()
    y, st = m(x, cont, state, lengths)
    seeds = torch.Generator().manual_seed(1)
    loss = (y * torch.randn(y.shape, generator=seeds)).sum() + \
        (st[0] * torch.randn(st[0].shape, generator=seeds)).sum()
    m.zero_grad()
    loss.backward()
    return y.detach(), tuple(s.detach() for s in st), x.grad, \
        {n: p.grad.clone() for n, p in m.named_parameters()}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["one-way", "bidirectional"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["T-first", "N-first"])
@pytest.mark.parametrize("lengths", list(LENGTHS), ids=list(LENGTHS))
def test_the_device_path_computes_what_packing_computes(masked, kind, levels, bidirectional,
                                                        batch_first, lengths):
    m = layer(kind, levels, bidirectional, batch_first)
    lens = torch.tensor(LENGTHS[lengths])
    x = torch.randn(5, 7, 3) if batch_first else torch.randn(7, 5, 3)
    y0, st0, gx0, gp0 = run(m, x, lens, discarded=False)
    assert masked == []
    y1, st1, gx1, gp1 = run(m, x, lens, discarded=True)
    assert masked == ["rnn"]

    padded = torch.arange(7).unsqueeze(1) >= lens  # (T, N)
    if batch_first:
        padded = padded.T
    assert torch.allclose(y1, y0, atol=1e-5) and (y1[padded] == 0).all()
    assert torch.allclose(st1[0], st0[0], atol=1e-5)
    assert torch.allclose(gx1, gx0, atol=1e-5) and (gx1[padded] == 0).all()
    assert gp0.keys() == gp1.keys() and len(gp1) == 4 * levels * (2 if bidirectional else 1)
    for name in gp0:
        assert torch.allclose(gp1[name], gp0[name], atol=1e-5), name
    if kind == "LSTM":  # the padded run cannot give c: NaN, never a wrong number
        assert st1[1].shape == st0[1].shape and st1[1].isnan().all()
    else:
        assert len(st1) == 1


def test_a_sequence_of_no_steps_gives_zero_outputs_and_a_zero_h(masked):
    m = layer("GRU", 2, True)
    y, (h,), _, _ = run(m, torch.randn(6, 3, 3), torch.tensor([6, 0, 2]), discarded=True)
    assert (y[:, 1] == 0).all() and (h[:, 1] == 0).all() and (h[:, 0] != 0).all()


def test_reading_the_backward_direction_the_wrong_way_would_be_caught(masked, monkeypatch):
    """Reversing the whole padded batch (padding first) instead of each sequence within its
    length changes the backward direction's outputs: the comparison above would fail."""
    m = layer("LSTM", 1, True)
    x, lens = torch.randn(7, 5, 3), torch.tensor(LENGTHS["mixed, one empty"])
    right = run(m, x, lens, discarded=True)[0]
    def flip(x, index):
        return x.flip(0)
    monkeypatch.setattr(recurrent_masked._Reversed, "apply", flip)
    wrong = run(m, x, lens, discarded=True)[0]
    assert torch.equal(wrong[..., :4], right[..., :4])  # the forward half is untouched
    assert not torch.allclose(wrong[..., 4:], right[..., 4:], atol=1e-3)


def test_dropout_runs_between_the_levels_in_training_only(masked):
    """Dropping everything between the levels leaves level 2 reading zeros: its outputs are
    then a one-level layer's, with level 2's weights, run on zeros."""
    m = layer("LSTM", 2, False, dropout=1.0)
    top = layer("LSTM", 1, False, inputs=4)
    top.rnn.load_state_dict({k.replace("_l1", "_l0"): v for k, v in m.rnn.state_dict().items()
                             if "_l1" in k})
    lens = torch.tensor([7, 3, 5])
    y = run(m, torch.randn(7, 3, 3), lens, discarded=True)[0]
    want = run(top, torch.zeros(7, 3, 4), lens, discarded=False)[0]
    assert torch.allclose(y, want, atol=1e-6)
    m.eval()
    x = torch.randn(7, 3, 3)
    assert torch.allclose(run(m, x, lens, True)[0], run(m, x, lens, False)[0], atol=1e-5)


def test_packing_is_kept_wherever_the_state_may_be_read(masked, monkeypatch):
    m = layer("LSTM", 1, False)
    x, lens = torch.randn(6, 3, 3), torch.tensor([6, 2, 4])
    assert not run(m, x, lens, discarded=False)[1][1].isnan().any()   # the flag unset
    state = tuple(torch.zeros(1, 3, 4) for _ in range(2))
    run(m, x, lens, discarded=True, state=state)                       # a state came in
    run(m, x, lens, discarded=True, cont=torch.ones(6, 3))              # resets to follow
    run(m, x, None, discarded=True)                                     # no lengths
    assert masked == []
    monkeypatch.setattr(recurrent_masked, "ON_CPU", False)              # the CPU, unforced
    run(m, x, lens, discarded=True)
    assert masked == []


def test_bad_lengths_are_still_one_sentence_on_the_device_path(masked):
    m = layer("GRU", 1, True)
    m.name = "lstm1"
    with pytest.raises(ValueError, match="lstm1: a sequence's length is 9, but lengths must lie "
                                         "between 0 and the 6 steps"):
        run(m, torch.randn(6, 2, 3), torch.tensor([9, 2]), discarded=True)


# ---------------------------------------------------------------- the training step and capture --
def lstm_fcn(bidirectional=True) -> Graph:
    """The classifier ``rnn-designer init`` draws (lengths into every layer that takes them)."""
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
    g.pin_dims({"F": 3})
    classifier(g, 3)
    g.set_param("lstm1", "bidirectional", bidirectional)
    g.set_param("last", "bidirectional", bidirectional)
    assert g.errors() == []
    return g


def feeds(steps=9):
    torch.manual_seed(3)
    return {"data.data": torch.randn(steps, 4, 3), "data.lengths": torch.tensor([9, 2, 5, 7]),
            "data.label": torch.tensor([0, 2, 1, 2])}


def test_a_step_without_state_needs_no_capture_blocker_for_lengths():
    net = Net(lstm_fcn())
    assert net.capture_blockers(carries_state=False) == []
    (why,) = net.capture_blockers(carries_state=True)
    assert "lstm1 runs on cuDNN with a 'lengths' input" in why
    assert net.capture_blockers() == [why]  # unless told, the state is taken to be carried


def test_a_cont_input_still_blocks_capture_without_state():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "nowhere.txt", "seq_len": 6, "batch_size": 3})
    g.pin_dims({"V": 5})
    g.add_layer("Embed", "embed", {"num_output": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 5, "engine": "CUDNN"})
    for link in [("data", "data", "embed", "x"), ("embed", "y", "lstm", "x"),
                 ("data", "cont", "lstm", "cont")]:
        g.connect(*link)
    net = Net(g)
    (why,) = net.capture_blockers(carries_state=False)
    assert "lstm runs on cuDNN with a 'cont' input" in why


def test_the_step_tells_the_layers_only_while_it_runs_without_state(masked):
    net = Net(lstm_fcn())
    opt = make_optimizer(net.parameters(), settings.effective("solver", {"type": "Adam"}),
                         torch.device("cpu"))
    step = TrainStep(net, opt, clip=5.0)
    losses = [step(feeds()).loss.item() for _ in range(3)]
    assert masked == ["lstm1"] * 3 and losses[-1] < losses[0]
    assert net.layers["lstm1"].state_discarded is False  # validation after it packs
    net.eval()
    with torch.no_grad():
        net(feeds())
    assert masked == ["lstm1"] * 3
    net.train()
    step(feeds(), net.initial_state(4))  # a carried state: packed
    assert masked == ["lstm1"] * 3


def test_a_classifiers_step_reads_nothing_on_the_host_while_captured(masked, monkeypatch):
    """The LSTM-FCN's forward and backward with capture pretended: every layer on the path
    (Conv1D and BatchNorm masked by the lengths, the pooling, the bidirectional LSTM,
    SequenceLast, Concat, Dropout, InnerProduct, the loss and accuracy) runs with any read of
    a tensor's value on the host refused."""
    net = Net(lstm_fcn())
    for where in (recurrent_state, recurrent):
        monkeypatch.setattr(where, "capturing", lambda t: True)

    def refused(*args, **kwargs):
        raise AssertionError("a tensor was read on the host")
    for name in ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "nonzero",
                 "cpu", "numpy", "unique"):
        monkeypatch.setattr(torch.Tensor, name, refused)
    monkeypatch.setattr(torch, "unique", refused)
    monkeypatch.setattr(torch, "nonzero", refused)
    with discarding_state([net.layers["lstm1"]], True):
        out = net(feeds())
    net.loss(out).backward()
    monkeypatch.undo()
    assert masked == ["lstm1"]
    assert all(p.grad is not None for p in net.parameters())
