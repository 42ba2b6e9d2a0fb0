"""The PERSIST engine: an LSTM on the cuDNN engine's weights whose recurrence runs in one
persistent kernel per level. Without CUDA it runs on cuDNN and says why; its kernels are checked
here under Triton's CPU interpreter, one program per launch (on a GPU, gpu_persist.sh checks the
many-program launches with their grid-wide barriers)."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from designer.cells.classic.engines import persist
from designer.engines.net.build import Net
from designer.engines.net.convert import convert_layer, convert_state_dict
from designer.cells.classic.engines.persist import PersistRecurrent
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.graph import project as P
from designer.graph.registry import weight_layout
from tests.conftest import PROJECTS, need_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def same_weights(e=5, h=8, levels=2, seed=0):
    torch.manual_seed(seed)
    ref = CudnnRecurrent("LSTM", e, h, levels, 0.0, False)
    per = PersistRecurrent("LSTM", e, h, levels, 0.0, False, name="enc")
    per.load_state_dict(ref.state_dict())
    return ref, per


def test_persist_holds_the_cudnn_engines_tensors_and_converts_like_it():
    ref, per = same_weights()
    assert list(per.state_dict()) == list(ref.state_dict())
    assert weight_layout("PERSIST") == "CUDNN" and weight_layout("CAFFE") == "CAFFE"
    sd = per.state_dict()
    assert convert_layer("LSTM", sd, 2, "PERSIST", "CUDNN").keys() == sd.keys()
    caffe = convert_layer("LSTM", sd, 2, "PERSIST", "CAFFE")
    want = convert_layer("LSTM", ref.state_dict(), 2, "CUDNN", "CAFFE")
    assert caffe.keys() == want.keys() and all(torch.equal(caffe[k], want[k]) for k in want)
    back = convert_layer("LSTM", caffe, 2, "CAFFE", "PERSIST")
    want = convert_layer("LSTM", caffe, 2, "CAFFE", "CUDNN")
    assert back.keys() == sd.keys() and all(torch.equal(back[k], want[k]) for k in sd)


def test_on_the_cpu_it_runs_on_cudnn_and_says_why_once():
    ref, per = same_weights()
    x = torch.randn(6, 3, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y, (h, c) = per(x)
        per(x)
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1, said
    assert said[0].startswith("enc: engine PERSIST runs on the cuDNN engine here: ")
    assert per.fallback in ("Triton is not installed", "the layer runs on the CPU")
    y0, (h0, c0) = ref(x)
    assert torch.equal(y, y0) and torch.equal(h, h0) and torch.equal(c, c0)


def test_what_the_kernel_cannot_run_is_named():
    gru = PersistRecurrent("GRU", 4, 6, 1, 0.0, False)
    bi = PersistRecurrent("LSTM", 4, 6, 1, 0.0, False, bidirectional=True)
    x = torch.randn(3, 2, 4)
    if persist.kernels is not None:
        assert persist.fallback_reason(gru, x) == "the persistent kernel runs LSTM layers, not GRU"
        assert "bidirectional" in persist.fallback_reason(bi, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y, (h,) = gru(x)  # and it still computes the GRU, on cuDNN
    assert y.shape == (3, 2, 6) and h.shape == (1, 2, 6)


@pytest.mark.parametrize("hidden, batch", [(512, 64), (512, 16), (512, 256), (200, 5),
                                           (1024, 64), (3, 1), (4096, 8)])
def test_a_launch_fits_the_gpu_and_covers_every_unit_and_row(monkeypatch, hidden, batch):
    monkeypatch.setattr(persist, "_sm_count", lambda device: 132)
    cfg = persist.plan(hidden, batch, torch.device("cuda"))
    units, blocks = cfg["grid"]
    assert units * blocks <= 132  # every program resident at once, or the barrier waits forever
    assert units * cfg["U"] >= hidden and (units - 1) * cfg["U"] < hidden
    assert cfg["rows_per"] % cfg["BN"] == 0 and blocks * cfg["rows_per"] >= batch
    assert (blocks - 1) * cfg["rows_per"] < batch
    assert cfg["fwd_dot"] == (4 * cfg["U"] >= 16)  # tl.dot needs 16 wide blocks


INTERPRETED = textwrap.dedent("""
    import json, sys, torch
    from designer.cells.classic.engines.cudnn import CudnnRecurrent
    from designer.cells.classic.engines.persist import PersistRecurrent
    out = []
    for e, h, levels, t, n in json.loads(sys.argv[1]):
        torch.manual_seed(h + n)
        ref = CudnnRecurrent("LSTM", e, h, levels, 0.0, False)
        per = PersistRecurrent("LSTM", e, h, levels, 0.0, False)
        per.load_state_dict(ref.state_dict())
        x = torch.randn(t, n, e, requires_grad=True)
        state = (torch.randn(levels, n, h), torch.randn(levels, n, h))
        w = torch.randn(t, n, h)
        def run(m):
            x.grad = None
            m.zero_grad()
            y, (hh, cc) = m(x, state=state)
            ((y * w).sum() + 0.3 * hh.sum() + 0.1 * (cc * cc).sum()).backward()
            return [y, hh, cc, x.grad] + [p.grad for p in m.parameters()]
        a, b = run(ref), run(per)
        rel = max(float((u - v).abs().max() / u.abs().max()) for u, v in zip(a, b))
        out.append({"size": [e, h, levels, t, n], "rel": rel, "fallback": per.fallback,
                    "ran": per.ran})
    print(json.dumps(out))
""")


def test_the_kernels_compute_the_lstm_forward_and_backward_under_the_interpreter():
    pytest.importorskip("triton")
    # hidden 8: the narrow blocks' broadcast product; 32: tl.dot both ways; 20 and 3: sizes
    # off the blocks (masked units); batch 1 and 17: masked rows
    sizes = [[5, 8, 2, 7, 3], [16, 32, 1, 5, 17], [7, 20, 2, 6, 1], [4, 3, 1, 4, 2]]
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", INTERPRETED, json.dumps(sizes)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for row in json.loads(done.stdout.strip().splitlines()[-1]):
        assert row["fallback"] is None, row   # the kernel ran, not cuDNN
        assert row["ran"] == "Triton kernels", row
        assert row["rel"] < 1e-5, row


@need_data("tinyshakespeare.txt")
def test_a_net_on_persist_trains_on_the_weights_of_one_on_cudnn():
    graph = P.load(PROJECTS / "char-rnn-shakespeare.json").graph
    cudnn, persistent = Net(graph, "cudnn"), Net(graph, "persist")
    assert set(persistent.engines.values()) == {"PERSIST"}
    assert persistent.state_dict().keys() == cudnn.state_dict().keys()
    layers = {name: ("LSTM", graph.layer(name).get("num_layers")) for name in persistent.engines}
    caffe = convert_state_dict(persistent.state_dict(), layers, persistent.engines,
                               {name: "CAFFE" for name in layers})
    assert caffe.keys() == Net(graph, "caffe").state_dict().keys()
    assert persistent.capture_blockers() == cudnn.capture_blockers()


@need_data("tinyshakespeare.txt")
def test_the_catalogue_the_memory_estimate_and_the_prototxt_know_persist(tmp_path):
    from designer.exchange.caffe.exporter import export_messages
    from designer.exchange.caffe.textformat import dumps
    from designer.graph.memory import report_lines, training_report
    project = P.load(PROJECTS / "char-rnn-shakespeare.json")
    graph = project.graph
    graph.set_param("lstm1", "engine", "PERSIST")
    assert graph.errors() == []
    rep = training_report(graph, "cuda", project.solver_settings(), project.training_settings())
    assert set(rep["engines"]) == {"cudnn", "caffe", "persist"}
    assert rep["engines"]["persist"] != rep["engines"]["cudnn"]
    assert any("all persistent" in line for line in report_lines(rep))
    net, _, notes = export_messages(project)
    text = dumps(net)
    lstm1 = text[text.index('name: "lstm1"'):text.index('name: "ip1"')]
    assert "engine: CUDNN" in lstm1  # what Caffe and MyCaffe read; the #@ comment keeps
    assert all(line.strip().startswith("#@") for line in text.splitlines()  # PERSIST for
               if "PERSIST" in line)                                        # rnn-designer
    assert any("no PERSIST engine" in n for n in notes)


@need_data("tinyshakespeare.txt")
def test_bench_times_persist_beside_the_other_engines():
    out = subprocess.run([sys.executable, "-W", "ignore", "-m", "designer", "bench",
                          str(PROJECTS / "char-rnn-shakespeare.json"), "--engines",
                          "cudnn,persist", "--device", "cpu", "--steps", "1", "--warmup", "1",
                          "--seq", "8", "--batch", "2", "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert [r["engine"] for r in rows] == ["cudnn", "persist"]
    assert rows[0]["params"] == rows[1]["params"] and rows[1]["ms_step"] > 0
    # which kernels ran the PERSIST layers, and why not persistent here
    assert "kernels" not in rows[0] and rows[1]["kernels"].startswith("cuDNN (")
    bad = subprocess.run([sys.executable, "-m", "designer", "bench", str(PROJECTS /
                          "char-rnn-shakespeare.json"), "--engines", "fast"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "use auto, cudnn, caffe, persist" in bad.stderr
