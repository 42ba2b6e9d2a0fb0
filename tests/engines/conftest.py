"""Small graphs that exercise every layer type, for the engine tests."""
import pytest

from designer.graph import Graph, registry


@pytest.fixture
def corpus(tmp_path):
    f = tmp_path / "tiny.txt"
    f.write_text("hello world, the quick brown fox jumps over the lazy dog.\n" * 4)
    return f


def every_layer_graph(corpus, engine="CUDNN") -> Graph:
    """One graph holding every layer type of the catalogue, wired validly."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": str(corpus), "seq_len": 6, "batch_size": 3})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.connect("data", "data", "embed", "x")
    for kind, extra in (("LSTM", {"num_layers": 2}), ("GRU", {}),
                        ("RNN", {"nonlinearity": "relu"}), ("LSTMSimple", {})):
        name = kind.lower()
        params = {"num_output": 5, **extra}
        if kind != "LSTMSimple":
            params["engine"] = engine
        g.add_layer(kind, name, params)
        g.connect("embed", "y", name, "x")
        g.connect("data", "cont", name, "cont")
    # minGRU (two levels, following cont) and, on its steps, a bidirectional minLSTM
    min_engine = "CAFFE" if engine == "CAFFE" else "SCAN"
    g.add_layer("MinGRU", "mingru", {"num_output": 5, "num_layers": 2, "engine": min_engine})
    g.connect("embed", "y", "mingru", "x")
    g.connect("data", "cont", "mingru", "cont")
    g.add_layer("MinLSTM", "minlstm", {"num_output": 3, "bidirectional": True,
                                       "engine": min_engine})
    g.connect("mingru", "y", "minlstm", "x")
    # batch-first: (N, T, E) from the embedding read the other way round; a Reshape that
    # replaces every dim hides which one is the batch, as a user's own layout would
    g.add_layer("Reshape", "as_nte", {"shape": [0, 0, 0], "axis": 0, "num_axes": -1})
    g.connect("embed", "y", "as_nte", "x")
    g.add_layer("LSTM", "lstm_bf", {"num_output": 4, "batch_first": True, "engine": engine})
    g.connect("as_nte", "y", "lstm_bf", "x")
    chain = [("Dropout", {"dropout_ratio": 0.2}), ("Clip", {"min": -0.5, "max": 0.5}),
             ("ReLU", {"negative_slope": 0.1}), ("TanH", {}), ("Sigmoid", {}), ("GELU", {}),
             ("Softmax", {"axis": -1}), ("Scale", {"axis": 2, "bias_term": True}),
             ("BatchNorm", {"momentum": 0.2}), ("LayerNorm", {})]
    prev = "lstm"
    for i, (kind, params) in enumerate(chain):
        name = f"c{i}_{kind.lower()}"
        g.add_layer(kind, name, params)
        g.connect(prev, "y", name, "x")
        prev = name
    g.add_layer("Scale", "scale_by_cont", {"axis": 0})
    g.connect("gru", "y", "scale_by_cont", "x")
    g.connect("data", "cont", "scale_by_cont", "scale")
    g.add_layer("Eltwise", "sum", {"operation": "PROD"})
    g.connect(prev, "y", "sum", "a")
    g.connect("scale_by_cont", "y", "sum", "b")
    g.add_layer("Reshape", "flat", {"shape": [-1, 5], "axis": 0, "num_axes": -1})
    g.connect("sum", "y", "flat", "x")
    g.add_layer("Slice", "split", {"axis": 0, "slice_point": 4})
    g.connect("flat", "y", "split", "x")
    g.add_layer("Concat", "join", {"axis": 0})
    g.connect("split", "b", "join", "a")
    g.connect("split", "a", "join", "b")
    g.add_layer("InnerProduct", "ip_flat", {"num_output": 7, "axis": 1})
    g.connect("join", "y", "ip_flat", "x")
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.connect("rnn", "y", "ip1", "x")
    g.add_layer("SoftmaxWithLoss", "loss")
    g.connect("ip1", "y", "loss", "logits")
    g.connect("data", "label", "loss", "label")
    g.add_layer("Accuracy", "acc", {"top_k": 2})
    g.connect("ip1", "y", "acc", "logits")
    g.connect("data", "label", "acc", "label")
    # an LSTM unit fed by one-step slices
    g.add_layer("Slice", "first", {"axis": 0, "slice_point": 1})
    g.connect("lstmsimple", "y", "first", "x")
    g.add_layer("InnerProduct", "gates", {"num_output": 20, "axis": 2})
    g.connect("first", "a", "gates", "x")
    g.add_layer("Slice", "cont1", {"axis": 0, "slice_point": 1})
    g.connect("data", "cont", "cont1", "x")
    g.add_layer("LSTMUnit", "unit")
    g.connect("first", "a", "unit", "c_prev")
    g.connect("gates", "y", "unit", "gates")
    g.connect("cont1", "a", "unit", "cont")
    # a sequence head: the last step of two recurrent layers, one regressed on the other
    for name, src in (("last", "lstm"), ("last_gru", "gru")):
        g.add_layer("SequenceLast", name)
        g.connect(src, "y", name, "x")
    g.add_layer("InnerProduct", "ip_last", {"num_output": 5})
    g.connect("last", "y", "ip_last", "x")
    # pooling over time: attention, scored through a hidden layer, over the GRU's steps
    g.add_layer("SequencePool", "pool", {"attention_units": 3})
    g.connect("gru", "y", "pool", "x")
    # a causal convolution over time, dilated, on the GRU's steps
    g.add_layer("Conv1D", "conv", {"num_output": 6, "kernel_size": 3, "dilation": 2,
                                   "padding": "causal"})
    g.connect("gru", "y", "conv", "x")
    # weight 0: built, shaped and run, but the tests that train on this graph follow the
    # class loss alone (tests/engines/net/test_sequence_layers.py checks what these compute)
    for kind in ("EuclideanLoss", "L1Loss"):
        g.add_layer(kind, kind.lower(), {"loss_weight": 0.0})
        g.connect("ip_last", "y", kind.lower(), "pred")
        g.connect("last_gru", "y", kind.lower(), "label")
    # an sLSTM of two heads following cont, last: the layers above keep their random draws
    g.add_layer("sLSTM", "slstm", {"num_output": 4, "num_heads": 2,
                                   "engine": "CAFFE" if engine == "CAFFE" else "FUSED"})
    g.connect("embed", "y", "slstm", "x")
    g.connect("data", "cont", "slstm", "cont")
    # an mLSTM of two heads following cont, after it for the same reason
    g.add_layer("mLSTM", "mlstm", {"num_output": 4, "num_heads": 2,
                                   "engine": "CAFFE" if engine == "CAFFE" else "CHUNK"})
    g.connect("embed", "y", "mlstm", "x")
    g.connect("data", "cont", "mlstm", "cont")
    # random convolution features of the embedded steps (no parameters, no random draw from
    # torch: the layers above keep theirs); nothing learns from them here
    g.add_layer("MiniRocket", "rocket", {"num_features": 168, "max_dilations": 4})
    g.connect("embed", "y", "rocket", "x")
    # the first difference of the embedded steps (nothing learned, no random draw)
    g.add_layer("Difference", "diff", {})
    g.connect("embed", "y", "diff", "x")
    # competing random convolution features (its kernels from its own seeded generator: the
    # layers above keep their random draws); nothing learns from them here either
    g.add_layer("Hydra", "hydra", {"num_features": 256, "max_dilations": 3})
    g.connect("embed", "y", "hydra", "x")
    # every other registered cell (a cell is a folder: this graph holds it unnamed), reading
    # the embedding and following cont, on its fused engine or unrolled; last, so that the
    # layers above keep their random draws
    drawn = {layer.type for layer in g.layers()}
    for kind in (k for k in registry.recurrent_kinds() if k not in drawn):
        params = {"num_output": 4}
        if registry.get(kind).has_param("engine"):
            params["engine"] = "CAFFE" if engine == "CAFFE" else registry.cell(kind).engines[0]
        g.add_layer(kind, f"cell_{kind.lower()}", params)
        g.connect("embed", "y", f"cell_{kind.lower()}", "x")
        g.connect("data", "cont", f"cell_{kind.lower()}", "cont")
    return g


@pytest.fixture
def every_layer(corpus):
    return lambda engine="CUDNN": every_layer_graph(corpus, engine)
