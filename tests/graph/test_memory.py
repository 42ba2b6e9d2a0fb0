"""The training memory estimate: worked out from the graph's shapes, per engine, device,
precision and solver, and the sentence that refuses a net too large for its device."""
from designer.graph import Graph
from designer.graph.memory import GIB, MIB, Setup, estimate, refusal, size_text
from tests.nets import link_all


def char_rnn(hidden=512, layers=2, t=75, n=25, v_corpus=None, tmp=None) -> Graph:
    g = Graph(project_dir=tmp)
    g.add_layer("CharText", "data", {"corpus": v_corpus or "missing.txt", "seq_len": t,
                                     "batch_size": n})
    g.add_layer("Embed", "embed", {"num_output": 15, "input_dim": 65})
    g.add_layer("LSTM", "lstm1", {"num_output": hidden, "num_layers": layers})
    g.add_layer("InnerProduct", "ip1", {"num_output": 65, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "lstm1.x"), ("lstm1.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    return g


def test_weights_gradients_and_the_optimizer_follow_the_parameter_count():
    g = char_rnn()
    params = g.total_params()
    adam = estimate(g, Setup("cpu", solver={"type": "Adam"}))
    momentum = estimate(g, Setup("cpu", solver={"type": "SGD", "momentum": 0.9}))
    plain = estimate(g, Setup("cpu", solver={"type": "SGD", "momentum": 0.0}))
    assert adam.weights == adam.gradients == 4 * params
    assert (adam.optimizer_state, momentum.optimizer_state, plain.optimizer_state) == \
        (8 * params, 4 * params, 0)
    assert adam.total > momentum.total > plain.total


def test_the_engines_keep_different_activations():
    g = char_rnn()
    seq = 75 * 25 * 512 * 4  # one (T, N, H) float32 sequence
    unrolled = estimate(g, Setup("cuda", engine="caffe"))
    cudnn = estimate(g, Setup("cuda", engine="cudnn"))
    # per level: gates, c_t and h_conted (6H) unrolled; cuDNN's reserve (5H) and its output
    assert unrolled.layers["lstm1"] > cudnn.layers["lstm1"]
    assert abs(unrolled.layers["lstm1"] - 13 * seq) < seq  # 2 x 6 + the level between
    cpu = estimate(g, Setup("cpu", engine="cudnn"))        # oneDNN's workspace is larger
    assert cpu.layers["lstm1"] > cudnn.layers["lstm1"]


def test_bf16_halves_what_cudnn_keeps_but_not_the_unrolled_steps():
    g = char_rnn()
    fp32, bf16 = (estimate(g, Setup("cuda", engine="cudnn", precision=p)).layers["lstm1"]
                  for p in ("fp32", "bf16"))
    assert bf16 < 0.6 * fp32
    fp32, bf16 = (estimate(g, Setup("cuda", engine="caffe", precision=p)).layers["lstm1"]
                  for p in ("fp32", "bf16"))
    assert bf16 > 0.9 * fp32  # the recurrence runs in float32 under autocast
    on_cpu = estimate(g, Setup("cpu", engine="cudnn", precision="bf16"))
    assert on_cpu.layers == estimate(g, Setup("cpu", engine="cudnn")).layers  # CUDA only


def test_activations_grow_with_the_batch_and_the_sequence():
    small, big = estimate(char_rnn(n=25)), estimate(char_rnn(n=100))
    assert 3.5 < big.activations / small.activations < 4.5
    assert estimate(char_rnn(t=150)).activations > 1.9 * small.activations


def test_an_unknown_size_gives_no_estimate():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("Embed", "embed")
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.connect("data", "data", "embed", "x")
    g.connect("embed", "y", "ip1", "x")
    assert estimate(g) is None  # V is not known: the corpus cannot be read


def test_a_net_too_large_is_refused_in_one_sentence_with_both_figures():
    g = char_rnn(hidden=200_000)
    est = estimate(g, Setup("cpu"))
    assert est.total > 1000 * GIB
    text = refusal(est, 16 * GIB, "the CPU")
    assert text.startswith(f"training this net needs about {size_text(est.needed)} (weights ")
    assert "but the CPU has 16.0 GiB" in text and ". " not in text and "\n" not in text
    assert refusal(estimate(char_rnn(), Setup("cpu")), 16 * GIB, "the CPU") is None


def test_sizes_read_well():
    assert [size_text(x) for x in (512 * 1024, 136 * MIB, 1.5 * GIB, 9.6e12)] == [
        "512 KiB", "136 MiB", "1.5 GiB", "8.7 TiB"]


def test_persist_keeps_its_pre_activation_gradients_in_bf16_where_the_tensor_cores_run_it():
    seq = 75 * 25 * 512   # values of one (T, N, H) sequence
    fp32, bf16 = (estimate(char_rnn(), Setup("cuda", engine="persist", precision=p)).backward
                  for p in ("fp32", "bf16"))
    # one level's 4H gradients, 2 bytes a value less (bf16's other copies move it under 1%)
    assert abs((fp32 - bf16) - 2 * 4 * seq) < 0.01 * 2 * 4 * seq
    seq = 75 * 25 * 500   # 500 units: the fp32 kernels, fp32 gradients in bf16 runs too
    fp32, bf16 = (estimate(char_rnn(hidden=500), Setup("cuda", engine="persist",
                                                         precision=p)).backward
                  for p in ("fp32", "bf16"))
    assert abs(fp32 - bf16) < 0.01 * 2 * 4 * seq


def test_a_captured_fp32_step_on_the_unrolled_engine_counts_one_workspace_less():
    """Its peak comes as the forward ends (RESULTS.md, "the peaks by phase"): the libraries'
    workspaces count 32 MiB less there than for cuDNN, and nothing changes uncaptured, in
    bf16 or on the CPU."""
    g = char_rnn()
    solver = {"type": "Adam"}

    def captured_more(engine, precision="fp32", device="cuda"):  # captured less uncaptured
        return estimate(g, Setup(device, engine, precision, solver, True)).backward - \
            estimate(g, Setup(device, engine, precision, solver, False)).backward
    assert captured_more("cudnn") == 64 * MIB
    assert captured_more("caffe") == 32 * MIB
    assert captured_more("caffe", "bf16") == 64 * MIB
    assert captured_more("caffe", device="cpu") == 0


def test_every_recurrent_cell_registers_its_own_memory_rule():
    from designer.graph import registry
    from designer.graph.memory_layers import RULES
    assert all(kind in RULES for kind in registry.recurrent_kinds())


def test_a_cell_that_registers_no_rule_keeps_its_gates_and_states_every_step(monkeypatch):
    """What its unrolled net keeps at the least: per level, direction and step its gates and
    its states, H values each; the gradients of its gates and two more in its backward."""
    import dataclasses

    from designer.graph import registry
    from designer.graph.memory_layers import Context, rule
    toy = dataclasses.replace(registry.get("MinGRU"), id="ToyCell")  # gates (z, h), state h
    monkeypatch.setitem(registry._SPECS, "ToyCell", toy)
    params = {**toy.defaults(), "num_output": 8}
    ctx = Context("ToyCell", params, [((5, 3, 4), "float"), None, None],
                  [((5, 3, 8), "float")], "cpu", "SCAN", 4)
    kept, seq = rule(ctx, 0), 5 * 3 * 8
    assert kept.inputs == [0] and kept.extra == 4 * (2 + 1) * seq
    assert kept.backward == 4 * ((2 + 2) * seq + 5 * 3 * 4)
