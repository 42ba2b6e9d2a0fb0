"""Inspection: per-step gates, states, surprise and gradient norms, the same from either engine,
and equal to what the engines and an independent step-by-step LSTM compute."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from designer.engines.net.build import Net
from designer.engines.net.convert import convert_state_dict
from designer.graph import Graph
from designer.training.readout.inspect import InspectError, inspect, saturation
from designer.training.readout.probe import Probe, ProbeError, held_out_probe, text_probe
from tests import nets
from tests.nets import link_all

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"


def char_net(tmp_path, kind="LSTM", levels=1, engine="CUDNN", hidden=6, seed=0):
    """A tiny character net (embed -> recurrent -> inner product -> loss) and its vocabulary."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT * 3)
    params = {"num_output": hidden}
    if kind != "LSTMSimple":
        params.update(engine=engine, num_layers=levels)
    g = nets.char_net(kind, params, name="rnn1", steps=8, batch=2, embed=5, vocab=None,
                      cont=True, corpus=str(corpus))
    torch.manual_seed(seed)
    net = Net(g)
    with torch.no_grad():  # weights large enough for gates to move away from 0.5
        for p in net.parameters():
            p.mul_(3.0)
    return g, net, sorted(set(TEXT))


def converted(g, net, engine):
    """The same weights in a net whose recurrent layer runs on the other engine."""
    other = Net(g, engine)
    layers = {"rnn1": (g.layer("rnn1").type, g.layer("rnn1").effective_params()["num_layers"])}
    other.load_state_dict(convert_state_dict(net.state_dict(), layers, net.engines,
                                             other.engines))
    return other


@pytest.mark.parametrize("kind,levels", [("LSTM", 1), ("LSTM", 2), ("GRU", 2), ("RNN", 1)])
def test_both_engines_give_the_same_numbers(tmp_path, kind, levels):
    g, cudnn, vocab = char_net(tmp_path, kind, levels)
    caffe = converted(g, cudnn, "caffe")
    assert cudnn.engines["rnn1"] == "CUDNN" and caffe.engines["rnn1"] == "CAFFE"
    probe = text_probe("the question: Whether", vocab)
    a, b = inspect(cudnn, probe), inspect(caffe, probe)
    assert [lv.name for lv in a.layers] == [lv.name for lv in b.layers]
    assert len(a.layers) == levels and (levels == 1 or a.layers[1].name == "rnn1/L1")
    for la, lb in zip(a.layers, b.layers):
        assert la.engine == "CUDNN" and lb.engine == "CAFFE"
        qa, qb = la.quantities(), lb.quantities()
        assert list(qa) == list(qb) == {"LSTM": ["i", "f", "o", "g", "c", "h"],
                                       "GRU": ["r", "z", "n", "h"], "RNN": ["h"]}[kind]
        for q in qa:
            assert qa[q].shape == (probe.steps, 6)
            np.testing.assert_allclose(qa[q], qb[q], atol=1e-5, err_msg=q)
        np.testing.assert_allclose(la.grad_norm, lb.grad_norm, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(a.surprise, b.surprise, atol=1e-5)
    np.testing.assert_allclose(a.grad_norm_last, b.grad_norm_last, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("engine", ["cudnn", "caffe"])
def test_the_states_read_are_what_the_engine_computes(tmp_path, engine):
    """h read from the per-step nodes is the engine's own output (its fused call or its fast
    executor), and c and h follow from the gates read: c = f c' + i g, h = o tanh(c)."""
    g, net, vocab = char_net(tmp_path, "LSTM", 2)
    net = converted(g, net, engine) if engine == "caffe" else net
    probe = text_probe("to be, or not", vocab)
    seen = inspect(net, probe)
    with torch.no_grad():
        out = net.eval()(probe.feeds("data", "cpu"), want=("ip1",))
    y = out.blobs[("rnn1", 0)][:, 0].numpy()
    np.testing.assert_allclose(seen.layers[-1].h, y, atol=1e-6)
    for lv in seen.layers:
        i, f, o, gg = (lv.gates[k] for k in "ifog")
        c_prev = np.vstack([np.zeros((1, 6)), lv.c[:-1]])  # step 0 starts from zeros
        np.testing.assert_allclose(lv.c, f * c_prev + i * gg, atol=1e-6)
        np.testing.assert_allclose(lv.h, o * np.tanh(lv.c), atol=1e-6)
        assert ((0 <= f) & (f <= 1)).all() and ((-1 <= gg) & (gg <= 1)).all()


def test_gates_are_named_as_torch_names_them(tmp_path):
    """The forget gate read is torch's forget gate: recompute the first step's gates from the
    cuDNN layer's own weights, in torch's [i, f, g, o] order."""
    g, net, vocab = char_net(tmp_path, "LSTM", 1)
    probe = text_probe("or not", vocab)
    seen = inspect(net, probe)
    rnn = net.layers["rnn1"].rnn
    with torch.no_grad():
        x0 = net.layers["embed"](torch.tensor([probe.data[0]]))
        pre = x0 @ rnn.weight_ih_l0.T + rnn.bias_ih_l0 + rnn.bias_hh_l0  # h_0 = 0
        i, f, gg, o = pre.chunk(4, -1)
    for name, value in (("i", i.sigmoid()), ("f", f.sigmoid()), ("g", gg.tanh()),
                        ("o", o.sigmoid())):
        np.testing.assert_allclose(seen.layers[0].gates[name][0], value[0].numpy(), atol=1e-6)


def test_surprise_is_the_next_character_loss_and_the_top_guesses_are_ranked(tmp_path):
    g, net, vocab = char_net(tmp_path)
    text = "that is the question"
    seen = inspect(net, text_probe(text, vocab))
    assert math.isnan(seen.surprise[0]) and (seen.surprise[1:] > 0).all()
    ids = torch.tensor([vocab.index(c) for c in text])
    with torch.no_grad():
        logits = net.eval()({"data.data": ids.view(-1, 1)}, want=("ip1",)).blobs[("ip1", 0)][:, 0]
    want = F.cross_entropy(logits[:-1], ids[1:], reduction="none").numpy()
    np.testing.assert_allclose(seen.surprise[1:], want, atol=1e-5)
    assert seen.loss == pytest.approx(float(want.mean()), abs=1e-5)
    assert (seen.top_ids[0] == -1).all() and (np.diff(seen.top_p[1:], axis=1) <= 0).all()
    best = logits[:-1].argmax(1).numpy()
    assert (seen.top_ids[1:, 0] == best).all()


def test_gradient_norms_match_an_independent_step_by_step_lstm(tmp_path):
    """|dL/dh_t| from the per-step nodes equals autograd through a plain loop written here."""
    g, net, vocab = char_net(tmp_path, "LSTM", 1)
    text = "Whether 'tis nobler"
    seen = inspect(net, text_probe(text, vocab))
    rnn, ip = net.layers["rnn1"].rnn, net.layers["ip1"].linear
    ids = torch.tensor([vocab.index(c) for c in text])
    x = net.layers["embed"](ids).detach()
    h, c, hs, logits = torch.zeros(1, 6), torch.zeros(1, 6), [], []
    for t in range(len(text)):
        pre = x[t:t + 1] @ rnn.weight_ih_l0.T + rnn.bias_ih_l0 + h @ rnn.weight_hh_l0.T \
            + rnn.bias_hh_l0
        i, f, gg, o = pre.chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * gg.tanh()
        h = o.sigmoid() * c.tanh()
        hs.append(h)
        logits.append(ip(h))
    losses = F.cross_entropy(torch.cat(logits)[:-1], ids[1:], reduction="none")
    mean = torch.autograd.grad(losses.mean(), hs, retain_graph=True)
    last = torch.autograd.grad(losses[-1], hs, allow_unused=True)
    np.testing.assert_allclose(seen.grad_norm, [float(v.norm()) for v in mean], rtol=1e-4)
    np.testing.assert_allclose(seen.grad_norm_last,
                               [0.0 if v is None else float(v.norm()) for v in last],
                               rtol=1e-4, atol=1e-9)
    assert seen.grad_norm[-1] == 0.0  # the last step's h predicts nothing in the text
    assert seen.grad_norm_last[-2] > 0 and seen.grad_norm_last[-1] == 0.0


def test_lstm_simple_is_read_through_its_nodes_too(tmp_path):
    g, net, vocab = char_net(tmp_path, "LSTMSimple", 1)
    seen = inspect(net, text_probe("to be", vocab), parity=True)
    assert seen.layers[0].engine == "CAFFE" and list(seen.layers[0].gates) == list("ifog")
    report = seen.parity["rnn1"]
    assert report["pair"] == ["per-step nodes", "fused steps"]
    assert max(report["output"]) <= 1e-5 * max(report["output_scale"], 1)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_parity_per_step_for_the_current_weights(tmp_path, kind):
    g, net, vocab = char_net(tmp_path, kind, 2)
    seen = inspect(net, text_probe("not to be, that", vocab), parity=True)
    report = seen.parity["rnn1"]
    assert report["pair"] == ["cuDNN", "unrolled"] and report["steps"] == 15
    assert len(report["output"]) == len(report["grad_input"]) == 15
    assert max(report["output"]) <= 1e-5 * report["output_scale"]
    assert max(report["grad_input"]) <= 1e-5 * report["grad_scale"]


def test_saturation_counts_values_near_the_ends():
    gates = {"f": np.array([[0.01, 0.5], [0.97, 0.99]]), "g": np.array([[-0.99, 0.0],
                                                                        [0.5, 0.96]])}
    s = saturation(gates, tanh=("g",))
    assert s["f"] == {"low": 0.25, "high": 0.5}
    assert s["g"] == {"low": 0.25, "high": 0.25}  # tanh: below -0.95 or above 0.95
    assert s["all"] == pytest.approx(5 / 8)


def test_text_the_model_never_saw_is_refused_in_one_sentence(tmp_path):
    _, _, vocab = char_net(tmp_path)
    with pytest.raises(ProbeError, match=r"the text holds 'Z', '~', which the model never saw"):
        text_probe("Zebra~", vocab)
    with pytest.raises(ProbeError, match="at least 2 characters"):
        text_probe("a", vocab)


def test_the_held_out_probe_is_fixed_and_starts_on_a_line(tmp_path):
    from designer.graph.model import Layer
    from designer.training.data import open_source
    corpus = tmp_path / "play.txt"
    corpus.write_text(("ROMEO:\nBut soft, what light through yonder window breaks?\n\n"
                       "JULIET:\nAy me!\n\n") * 60)
    layer = Layer("data", "CharText", {"corpus": str(corpus), "val_fraction": 0.5})
    a = held_out_probe(open_source(layer, seed=1), 80)
    b = held_out_probe(open_source(layer, seed=2), 80)
    assert a.to_dict() == b.to_dict() and a.origin == "held-out text of play.txt"
    assert a.text.endswith("breaks?\n\n") and a.steps == 75
    assert a.text.split("\n")[0] in ("ROMEO:", "JULIET:")
    assert Probe.from_dict(a.to_dict()).to_dict() == a.to_dict()


def test_a_net_without_a_recurrent_layer_cannot_be_inspected(tmp_path):
    g, net, vocab = char_net(tmp_path)
    net.recurrent = []
    with pytest.raises(InspectError, match="no recurrent layer"):
        inspect(net, text_probe("to be", vocab))


# ------------------------------------------------------------- sequences and series --
def sequence_net(tmp_path, lengths=True, seed=0):
    """A tiny classifier of a .ts file's sequences (LSTM -> SequenceLast -> head), with its
    source read as the net reads it."""
    from designer.training.data import open_source
    from tests.training.data.test_data_classes import rows, ts
    path = ts(tmp_path, "toy.ts", rows(30))
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": path, "batch_size": 4})
    g.add_layer("LSTM", "lstm1", {"num_output": 6})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip1", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    links = [("data.data", "lstm1.x"), ("lstm1.y", "last.x"), ("last.y", "ip1.x"),
             ("ip1.y", "loss.logits"), ("data.label", "loss.label")]
    if lengths:
        links.append(("data.lengths", "last.lengths"))
    link_all(g, links)
    torch.manual_seed(seed)
    net = Net(g)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(3.0)
    return net, open_source(g.layer("data"), seed=0)


@pytest.mark.parametrize("lengths", [True, False])
def test_a_classifier_leans_after_each_step_as_if_the_sequence_ended_there(tmp_path, lengths):
    """leaning[t] is what the net says of the sequence cut after step t (run anew here), with
    the lengths fed to SequenceLast or without them (it reads the last step)."""
    net, source = sequence_net(tmp_path, lengths)
    probe = held_out_probe(source)
    assert probe.kind == "classes" and probe.origin.startswith("test sequence 0 of ")
    i = source.indices("test")[0]
    assert probe.steps == source.lengths[i] and probe.target == source.label_ids[i]
    seen = inspect(net, probe)
    assert seen.leaning.shape == (probe.steps, 3) and seen.surprise is None
    np.testing.assert_allclose(seen.leaning.sum(1), 1.0, atol=1e-5)
    for t in range(probe.steps):
        x = torch.as_tensor(probe.data[:t + 1]).unsqueeze(1)
        with torch.no_grad():
            logits = net.eval()({"data.data": x, "data.lengths": torch.tensor([t + 1])},
                                want=("ip1",)).blobs[("ip1", 0)]
        np.testing.assert_allclose(seen.leaning[t], logits.softmax(-1)[0].numpy(), atol=1e-5)
    assert seen.prediction[0][1] == pytest.approx(float(seen.leaning[-1].max()), abs=1e-6)
    assert seen.loss == pytest.approx(-math.log(seen.leaning[-1][probe.target]), abs=1e-4)
    # the gradient through time is that of the one loss at the end
    assert seen.grad_norm.shape == (probe.steps,) and (seen.grad_norm > 0).all()
    assert seen.grad_norm_last is None and seen.layers[0].c.shape == (probe.steps, 6)


def test_a_test_sequence_is_picked_by_number_or_class(tmp_path):
    net, source = sequence_net(tmp_path)
    members = source.indices("test")
    probe = held_out_probe(source, pick="2")
    assert probe.info["index"] == 2 and probe.steps == source.lengths[members[2]]
    probe = held_out_probe(source, pick="class c")
    assert source.classes[probe.target] == "c"
    assert probe.origin.endswith(", class c")
    assert Probe.from_dict(probe.to_dict()).to_dict() == probe.to_dict()
    with pytest.raises(ProbeError, match="there is no test sequence 99: the test split holds"):
        held_out_probe(source, pick="99")
    with pytest.raises(ProbeError, match="'zebra' is neither a test sequence's number nor a "
                                         "class \\(the classes are a, b, c\\)"):
        held_out_probe(source, pick="zebra")


def test_a_forecaster_is_inspected_on_a_window_with_its_forecast_in_units(tmp_path):
    from designer.training.data import open_source
    from tests.training.data.test_data_series import series
    path = series(tmp_path, rows=160)
    g = Graph()
    g.add_layer("TimeSeries", "data", {"file": path, "target": "level", "seq_len": 12,
                                       "horizon": 3, "batch_size": 8})
    g.add_layer("LSTM", "lstm1", {"num_output": 5})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip1", {"num_output": "P"})
    g.add_layer("EuclideanLoss", "loss")
    link_all(g, [("data.data", "lstm1.x"), ("lstm1.y", "last.x"), ("last.y", "ip1.x"),
                 ("ip1.y", "loss.pred"), ("data.label", "loss.label")])
    torch.manual_seed(0)
    net = Net(g).eval()
    source = open_source(g.layer("data"), seed=0)
    probe = held_out_probe(source, pick="1")
    o = int(source.origins("test")[1])
    assert probe.kind == "series" and probe.steps == 12 and probe.labels[-1] == source.times[o]
    np.testing.assert_allclose(probe.info["history"], source.y[o - 11:o + 1])
    np.testing.assert_allclose(probe.info["truth"], source.truth([o])[0][0])
    seen = inspect(net, probe)
    batch = source.window_batch(np.array([o]))
    with torch.no_grad():
        out = net({"data.data": batch["data"]}, want=("ip1",)).blobs[("ip1", 0)].numpy()
    np.testing.assert_allclose(seen.forecast, source.to_units(out, [o])[0], rtol=1e-5)
    assert seen.leaning is None and seen.prediction is None and seen.grad_norm.shape == (12,)
    assert seen.loss == pytest.approx(float(((out - batch["label"].numpy().reshape(1, -1))
                                             ** 2).mean()), rel=1e-4)


def test_every_recurrent_type_is_read_step_by_step_by_its_cells_reading():
    """Each cell registers how its steps are read: the gates, and which lie in [-1, 1]."""
    from designer.engines.measure.readings import reading_of
    from designer.graph import registry
    for kind in registry.recurrent_kinds():
        seen = reading_of(kind)
        assert set(seen.tanh) <= set(seen.gates), kind
    with pytest.raises(TypeError, match="^an InnerProduct layer cannot be read step by step$"):
        reading_of("InnerProduct")
