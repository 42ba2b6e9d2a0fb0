"""The stream decoder: K streams at once, the same symbols eagerly or from a (CUDA) graph, the
same function on both engines, and an exact draw from the softmax."""
import numpy as np
import pytest
import torch

from designer.engines.net.build import Net
from designer.engines.net.convert import convert_state_dict
from designer.training.readout import decode
from designer.training.readout.decode import Sampler, StreamDecoder
from designer.training.readout.sampling import draw, gumbel_noise
from tests import nets

TEXT = "hello world, the quick brown fox jumps over the lazy dog.\n" * 4


def char_net(tmp_path, engine="CUDNN", kind="LSTM", levels=2, seed=0) -> Net:
    (tmp_path / "c.txt").write_text(TEXT)
    params = {"num_output": 12, "engine": engine}
    if kind != "LSTMSimple":
        params["num_layers"] = levels
    else:
        params.pop("engine")
    g = nets.char_net(kind, params, steps=8, batch=2, embed=6, vocab=None, cont=True,
                      corpus="c.txt", project_dir=tmp_path)
    torch.manual_seed(seed)
    net = Net(g).eval()
    with torch.no_grad():  # sharper logits than the fillers give, so the argmax is clear-cut
        for p in net.parameters():
            p.mul_(3.0)
    return net


def plain_loop(net, prime, n, streams, temperature, top_k, seed, chunk) -> np.ndarray:
    """What the decoder must write: feed, keep the state, draw with the chunk's noise rows."""
    gen = torch.Generator().manual_seed(seed)
    data, at = net.sources[0], net.logits_source()
    x = torch.tensor(prime).view(-1, 1).expand(-1, streams)
    with torch.no_grad():
        out = net({f"{data}.data": x}, None, want=(at[0],))
        state, logits = out.state, out.blobs[at].reshape(len(prime), streams, -1)[-1]
        written, done = [], 0
        while done < n:
            r = min(chunk, n - done)
            noise = gumbel_noise((chunk, streams, logits.shape[-1]), gen) if temperature else None
            for t in range(r):
                ids = draw(logits, temperature, top_k, None if noise is None else noise[t])
                written.append(ids.numpy())
                out = net({f"{data}.data": ids.view(1, -1)}, state, want=(at[0],))
                state, logits = out.state, out.blobs[at].reshape(1, streams, -1)[-1]
            done += r
    return np.stack(written)


@pytest.mark.parametrize("engine", ["CUDNN", "CAFFE"])
def test_the_decoder_writes_what_a_plain_step_by_step_loop_writes(tmp_path, engine):
    net = char_net(tmp_path, engine)
    dec = StreamDecoder(net, streams=3, temperature=0.9, top_k=5, seed=11, chunk=16)
    dec.prime([3, 1, 4])
    got = dec.run(45)  # three chunks, the last one short
    assert got.shape == (45, 3) and got.dtype == np.int64
    want = plain_loop(net, [3, 1, 4], 45, 3, 0.9, 5, 11, dec.chunk)
    assert np.array_equal(got, want)
    assert len({tuple(got[:, k]) for k in range(3)}) == 3  # three different streams


def test_a_run_continues_where_the_last_one_stopped(tmp_path):
    net = char_net(tmp_path)
    whole = StreamDecoder(net, 2, temperature=0.0)
    whole.prime([5])
    parts = StreamDecoder(net, 2, temperature=0.0)
    parts.prime([5])
    assert np.array_equal(whole.run(50), np.concatenate([parts.run(13), parts.run(37)]))


def test_at_temperature_zero_every_stream_is_the_single_stream(tmp_path):
    net = char_net(tmp_path)
    one = StreamDecoder(net, 1, temperature=0.0)
    one.prime([7, 2])
    many = StreamDecoder(net, 5, temperature=0.0)
    many.prime([7, 2])
    a, b = one.run(40), many.run(40)
    assert all(np.array_equal(a[:, 0], b[:, k]) for k in range(5))


def test_both_engines_write_the_same_symbols(tmp_path):
    cudnn = char_net(tmp_path, "CUDNN")
    caffe = char_net(tmp_path, "CAFFE")
    layers, src, dst = {"rnn": ("LSTM", 2)}, {"rnn": "CUDNN"}, {"rnn": "CAFFE"}
    caffe.load_state_dict(convert_state_dict(cudnn.state_dict(), layers, src, dst))
    out = []
    for net in (cudnn, caffe):
        dec = StreamDecoder(net, 4, temperature=1.0, seed=5)
        dec.prime([1, 2, 3])
        out.append(dec.run(60))
    assert np.array_equal(*out)


@pytest.mark.parametrize("kind", ["GRU", "RNN", "LSTMSimple"])
def test_other_recurrent_layers_decode_like_the_plain_loop(tmp_path, kind):
    net = char_net(tmp_path, "CUDNN", kind)
    dec = StreamDecoder(net, 2, temperature=1.0, seed=2, chunk=8)
    dec.prime([4, 4])
    assert np.array_equal(dec.run(20), plain_loop(net, [4, 4], 20, 2, 1.0, 0, 2, dec.chunk))


def fake_capture(calls, fail=False):
    """Stands in for CUDA graph capture on the CPU: runs the warm-ups for real, as the GPU
    does, and then the body once more where a real capture would only record it; the replay
    is the body itself. So the decoder must put back what the warm-ups changed, and read its
    results from its static buffers only."""
    def capture(body, device, warmups=2, reset=None):
        for _ in range(warmups + 1):
            reset()
            body()
        calls.append(device)
        if fail:
            raise RuntimeError("operation not permitted when stream is capturing\nmore")
        return body
    return capture


@pytest.mark.parametrize("fail", [False, True])
def test_the_graph_path_writes_what_the_eager_path_writes(tmp_path, monkeypatch, fail):
    net = char_net(tmp_path, "CAFFE")
    eager = StreamDecoder(net, 3, temperature=1.0, seed=9, chunk=16)
    eager.prime([2, 6])
    want = eager.run(45)
    calls = []
    monkeypatch.setattr(decode, "graphs_possible", lambda device: True)
    monkeypatch.setattr(decode.graphs, "capture", fake_capture(calls, fail))
    graphed = StreamDecoder(net, 3, temperature=1.0, seed=9, chunk=16)
    graphed.prime([2, 6])
    got = np.concatenate([graphed.run(45)])
    assert calls == [torch.device("cpu")]  # captured once, replayed per 8 steps after
    assert np.array_equal(got, want)
    if fail:
        assert graphed.graph_note == ("not captured: operation not permitted when stream is "
                                      "capturing")
    else:
        assert graphed.graph_note == "CUDA graph of 8 steps"
    assert np.array_equal(graphed.run(5), eager.run(5))  # and it carries on alike


def test_stop_ends_between_chunks_and_chunks_arrive_as_made(tmp_path):
    net = char_net(tmp_path)
    dec = StreamDecoder(net, 2, temperature=1.0, seed=0, chunk=8)
    dec.prime([1])
    seen = []
    out = dec.run(1000, on_chunk=seen.append, stop=lambda: len(seen) >= 3)
    assert dec.stopped and out.shape == (24, 2) and [len(c) for c in seen] == [8, 8, 8]
    assert np.array_equal(np.concatenate(seen), out)


def test_the_draw_follows_the_softmax_and_top_k():
    logits = torch.tensor([[0.0, 1.0, 2.0, -1.0]]).expand(40_000, -1)
    gen = torch.Generator().manual_seed(0)
    ids = draw(logits, 1.0, 0, gumbel_noise(logits.shape, gen))
    freq = np.bincount(ids.numpy(), minlength=4) / len(ids)
    assert np.allclose(freq, torch.softmax(logits[0], 0).numpy(), atol=0.01)
    ids = draw(logits, 2.0, 2, gumbel_noise(logits.shape, gen))
    freq = np.bincount(ids.numpy(), minlength=4) / len(ids)
    assert freq[0] == freq[3] == 0
    assert freq[2] / freq[1] == pytest.approx(np.exp(0.5), rel=0.05)
    assert draw(logits[:2], 0.0, 0, None).tolist() == [2, 2]
    with pytest.raises(ValueError, match="0 or more"):
        draw(logits, -1.0, 0, None)


def test_the_sampler_keeps_the_net_in_its_mode_and_streams_symbols(tmp_path):
    net = char_net(tmp_path).train()
    seen = []
    out = Sampler(net).sample([1, 2], 30, 1.0, 0, seed=4, on_symbol=seen.append)
    assert net.training and seen == out and len(out) == 30
    assert out == Sampler(net).sample([1, 2], 30, 1.0, 0, seed=4)
