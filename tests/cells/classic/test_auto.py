"""The AUTO engine: the default of LSTM, GRU and RNN layers. On the CPU it runs cuDNN's fused
kernel untimed; where it times (a GPU; here the CPU with a timer and a PERSIST of the tests'
own), it keeps the faster engine, remembers it per device and shape, and says why. On a GPU,
tests/benchmarks/bench_engine_auto.py times the real engines."""
import json

import pytest
import torch

from designer.cells.classic.engines import auto_timing

from designer.cells.classic.engines import auto

from designer.cells.classic.engines import persist
from designer.cells.classic.engines.auto import AutoRecurrent
from designer.engines.net.build import Net
from designer.engines.net.convert import convert_layer
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.graph import Graph
from designer.graph import project as P
from designer.graph.registry import engine_for, weight_layout
from tests.conftest import PROJECTS, need_data


def twins(kind="LSTM", e=5, h=8, levels=2, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    ref = CudnnRecurrent(kind, e, h, levels, dropout, False)
    got = AutoRecurrent(kind, e, h, levels, dropout, False, name="lstm1")
    got.load_state_dict(ref.state_dict())
    return ref, got


def never(engine, run):
    raise AssertionError("AUTO timed where it should not")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "rnn-designer" / "engine-auto.json"


@pytest.fixture
def timed(monkeypatch, cache):
    """AUTO times on the CPU with fixed timings, and PERSIST runs as a recording stand-in
    (cuDNN's call under PERSIST's name): ``timed(cudnn_s, persist_s)`` -> the record."""
    record = {"timed": [], "persist_calls": 0}

    def persistent(self, x, state):
        record["persist_calls"] += 1
        return CudnnRecurrent._call(self, x, state)

    def setup(cudnn_s, persist_s):
        def timer(engine, run):
            run()
            record["timed"].append(engine)
            return {"CUDNN": cudnn_s, "PERSIST": persist_s}[engine]
        monkeypatch.setattr(auto_timing, "WARMUP", 1)    # few runs: the CPU's LSTM calls
        monkeypatch.setattr(auto_timing, "REPEATS", 3)   # are slow on a loaded machine
        monkeypatch.setattr(auto, "TIME_ON_CPU", True)
        monkeypatch.setattr(auto, "TIMER", timer)
        monkeypatch.setattr(persist, "fallback_reason",
                            lambda m, x: None if m.kind == "LSTM" else "it is not an LSTM")
        monkeypatch.setattr(AutoRecurrent, "_persistent", persistent)
        return record
    return setup


def run_step(module, x, **kw):
    y, (h, c) = module(x, **kw)
    (y.square().sum() + h.sum() + c.sum()).backward()
    return [y, h, c, x.grad] + [p.grad for p in module.parameters()]


def test_new_layers_get_auto_and_projects_that_name_an_engine_keep_it():
    g = Graph()
    g.add_layer("LSTM", "lstm1", {"num_output": 4})
    g.add_layer("GRU", "gru1", {"num_output": 4})
    assert g.layer("lstm1").get("engine") == "AUTO" == g.layer("gru1").get("engine")
    assert weight_layout("AUTO") == "CUDNN"
    assert engine_for("LSTM", "auto") == "AUTO" and engine_for("MinGRU", "auto") == "SCAN"
    shipped = P.load(PROJECTS / "char-rnn-shakespeare.json").graph
    assert shipped.layer("lstm1").get("engine") == "CUDNN"


def test_on_the_cpu_auto_is_cudnn_untimed_with_the_same_numbers(monkeypatch, cache):
    monkeypatch.setattr(auto, "TIMER", never)
    ref, got = twins()
    assert list(got.state_dict()) == list(ref.state_dict())
    x = torch.randn(7, 3, 5)
    a = run_step(ref, x.clone().requires_grad_())
    b = run_step(got, x.clone().requires_grad_())
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert got.decisions == ["lstm1: AUTO chose CUDNN (on the CPU: torch's fused kernel, "
                             "untimed)"]
    assert not cache.exists()


def test_auto_keeps_the_faster_engine_says_why_and_runs_it(timed, cache):
    record = timed(cudnn_s=0.004, persist_s=0.0025)
    ref, got = twins()
    x = torch.randn(7, 3, 5)
    before = torch.get_rng_state()
    a = run_step(ref, x.clone().requires_grad_())
    b = run_step(got, x.clone().requires_grad_())
    assert got.decisions == ["lstm1: AUTO chose PERSIST (1.60x CUDNN at batch 3, timed 3 "
                             "steps each)"]
    # turns: every candidate once a round, so a drifting clock hits both alike
    assert record["timed"] == ["CUDNN", "PERSIST"] * auto_timing.REPEATS
    # warm-ups, timed runs, then the call itself on PERSIST
    assert record["persist_calls"] == auto_timing.WARMUP + auto_timing.REPEATS + 1
    # the timing took its gradients aside and drew from a forked random stream
    assert all(torch.allclose(u, v) for u, v in zip(a, b))
    assert torch.equal(torch.get_rng_state(), before)
    kept = json.loads(cache.read_text())
    (key, rec), = kept.items()
    assert "LSTM 2x8 E=5 T=7 N=3 | fp32" in key and "| cpu |" in key
    assert rec["engine"] == "PERSIST" and rec["seconds"] == {"CUDNN": 0.004, "PERSIST": 0.0025}


def test_the_next_run_reads_the_choice_instead_of_timing(timed, cache):
    record = timed(cudnn_s=0.004, persist_s=0.0025)
    x = torch.randn(7, 3, 5, requires_grad=True)
    twins()[1](x)
    assert len(record["timed"]) == 2 * auto_timing.REPEATS
    again = twins()[1]
    again(x)
    again(x)  # the same shape in the same run: neither timed nor said again
    assert again.decisions == ["lstm1: AUTO chose PERSIST (1.60x CUDNN at batch 3, timed 3 "
                               "steps each, kept from an earlier run on this GPU)"]
    assert len(record["timed"]) == 2 * auto_timing.REPEATS
    twins()[1](torch.randn(7, 4, 5))  # another batch is another shape: timed afresh
    assert len(record["timed"]) == 4 * auto_timing.REPEATS


def test_cudnn_stays_unless_another_engine_is_more_than_one_percent_faster(timed):
    timed(cudnn_s=0.004, persist_s=0.00397)
    _, got = twins()
    got(torch.randn(7, 3, 5, requires_grad=True))
    assert got.decisions == ["lstm1: AUTO chose CUDNN (PERSIST 1.01x, less than the 1% that "
                             "moves it off CUDNN at batch 3, timed 3 steps each)"]
    assert auto_timing.pick({"CUDNN": 1.0, "PERSIST": 0.98}) == "PERSIST"
    assert auto_timing.pick({"CUDNN": 1.0, "PERSIST": 1.3}) == "CUDNN"


def test_the_median_of_runs_taken_in_turns_after_the_warm_up():
    calls, times = [], iter([5.0, 1.0, 2.0, 9.0, 3.0, 1.5])

    def timer(engine, run):
        run()
        return next(times)
    runs = {"CUDNN": lambda: calls.append("c"), "PERSIST": lambda: calls.append("p")}
    got = auto_timing.time_engines(runs, timer, warmup=2, repeats=3)
    assert calls == ["c", "c", "p", "p"] + ["c", "p"] * 3
    assert got == {"CUDNN": 3.0, "PERSIST": 1.5}


def test_what_persist_cannot_run_and_calls_that_do_not_train_are_not_timed(timed, monkeypatch):
    record = timed(cudnn_s=0.004, persist_s=0.001)
    _, gru = twins("GRU")
    assert (gru.baseline, gru.candidates) == ("CUDNN", ("CUDNN",))  # as the GRU's cell says
    y, _ = gru(torch.randn(6, 2, 5, requires_grad=True))
    assert gru.decisions == ["lstm1: AUTO chose CUDNN (a GRU has no other engine that holds "
                             "these tensors)"]
    _, lstm = twins(levels=1)
    assert lstm.candidates == ("CUDNN", "PERSIST")
    with monkeypatch.context() as m:
        m.setattr(persist, "fallback_reason", lambda m, x: "its kernels do not build here")
        lstm(torch.randn(6, 2, 5, requires_grad=True))
    assert lstm.decisions == ["lstm1: AUTO chose CUDNN (PERSIST cannot run it: its kernels do "
                              "not build here)"]
    _, lstm = twins()
    y, _ = lstm(torch.randn(6, 2, 5), lengths=torch.tensor([6, 3]))
    assert "padded lengths run on cuDNN's packed sequences" in lstm.decisions[0]
    _, lstm = twins()
    with torch.no_grad():
        lstm(torch.randn(6, 2, 5))
    lstm.eval()
    lstm(torch.randn(6, 2, 5, requires_grad=True))
    assert lstm.decisions == [] and record["timed"] == [] and record["persist_calls"] == 0


def test_a_timing_that_fails_leaves_the_layer_on_cudnn(timed, monkeypatch, cache):
    timed(cudnn_s=0.004, persist_s=0.001)

    def broken(self, x, state):
        raise RuntimeError("the kernel did not build\nmore")
    monkeypatch.setattr(AutoRecurrent, "_persistent", broken)
    _, got = twins()
    y, _ = got(torch.randn(6, 2, 5, requires_grad=True))
    assert got.decisions == ["lstm1: AUTO chose CUDNN (timing PERSIST failed: the kernel did "
                             "not build)"]
    assert not cache.exists()


def test_an_unreadable_cache_is_timed_again_and_rewritten(timed, cache):
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    timed(cudnn_s=0.004, persist_s=0.002)
    _, got = twins()
    got(torch.randn(6, 2, 5, requires_grad=True))
    assert "2.00x CUDNN" in got.decisions[0]
    assert [r["engine"] for r in json.loads(cache.read_text()).values()] == ["PERSIST"]
    (key, _), = json.loads(cache.read_text()).items()
    cache.write_text(json.dumps({key: {"engine": "PERSIST", "seconds": {"PERSIST": "fast"}}}))
    assert auto_timing.cached(key) is None   # a record it did not write is timed again


@need_data("tinyshakespeare.txt")
def test_a_net_on_auto_converts_exports_and_is_estimated_as_cudnn(cache):
    from designer.graph.memory import Setup, estimate
    from designer.training.run.first_step import first_step_notes
    project = P.load(PROJECTS / "char-rnn-shakespeare.json")
    graph = project.graph
    graph.set_param("lstm1", "engine", "AUTO")
    net, cudnn = Net(graph), Net(graph, "cudnn")
    assert set(net.engines.values()) == {"AUTO"}
    assert net.state_dict().keys() == cudnn.state_dict().keys()
    assert net.capture_blockers() == cudnn.capture_blockers()
    sd = net.layers["lstm1"].state_dict()
    assert convert_layer("LSTM", sd, 2, "AUTO", "CAFFE").keys() == \
        convert_layer("LSTM", sd, 2, "CUDNN", "CAFFE").keys()
    for device in ("cpu", "cuda"):
        a, b = (estimate(graph, Setup(device, e, "fp32", project.solver_settings()))
                for e in ("auto", "cudnn"))
        assert a.total == b.total
    net.layers["lstm1"].decisions.append("lstm1: AUTO chose CUDNN (why)")
    assert first_step_notes(net, 0.1, torch.device("cpu"))[0] == "lstm1: AUTO chose CUDNN (why)"


def test_a_step_tells_auto_how_it_runs_and_auto_times_that_way(timed, cache, every_layer):
    from designer.engines.measure.bench import random_feeds
    from designer.engines.train_step.step import TrainStep, make_optimizer
    from designer.graph import settings
    record = timed(cudnn_s=0.004, persist_s=0.003)
    g = every_layer("AUTO")
    torch.manual_seed(0)
    net = Net(g, "auto")
    autos = [n for n, e in net.engines.items() if e == "AUTO"]
    assert sorted(autos) == ["gru", "lstm", "lstm_bf", "rnn"]
    assert {net.engines["mingru"], net.engines["minlstm"]} == {"SCAN"}
    opt = make_optimizer(net.parameters(), settings.defaults("solver"), torch.device("cpu"))
    step = TrainStep(net, opt, clip=5.0)  # on the CPU: eager, never captured
    assert all(net.layers[n].step_captured is False for n in autos)
    feeds = random_feeds(g, torch.device("cpu"))
    assert torch.isfinite(step(feeds).loss) and step(feeds).skipped.item() == 0.0
    # the two LSTMs timed (eagerly: the key says so); GRU and RNN had nothing to time against
    assert len(record["timed"]) == 2 * 2 * auto_timing.REPEATS
    assert all(k.endswith("| fp32 eager") for k in json.loads(cache.read_text()))
    said = {d.split(":")[0]: d for n in autos for d in net.layers[n].decisions}
    assert "AUTO chose PERSIST" in said["lstm"] and "AUTO chose CUDNN" in said["gru"]


def test_bench_says_which_engine_each_auto_layer_chose(every_layer, cache):
    from designer.engines.measure.bench import bench_engine
    row = bench_engine(every_layer("AUTO"), "auto", torch.device("cpu"), steps=1, warmup=1)
    assert row["engine"] == "auto" and row["ms_step"] > 0
    assert sorted(s.split(":")[0] for s in row["auto"]) == ["gru", "lstm", "lstm_bf", "rnn"]
    assert all("AUTO chose CUDNN (on the CPU" in s for s in row["auto"])
