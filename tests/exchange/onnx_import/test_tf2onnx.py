"""Keras models as tf2onnx 1.16 writes them: built here with onnx.helper (TensorFlow itself is not
run), each imports, matches ONNX Runtime within 1e-4 and trains two steps.

The node layout follows tf2onnx 1.16's source:

- ``rewriter/lstm_tf2_rewriter.py`` and ``rewriter/gru_tf2_rewriter.py``: Keras' while loop
  becomes one ``LSTM``/``GRU`` over the ``TensorListFromTensor`` input (Keras' time-major
  ``Transpose`` perm 1,0,2 of the batch-major input), its initial states each an
  ``Unsqueeze`` (axes 0) of Keras' (N, H) zero state, its ``Y`` a ``Squeeze`` (axes 1);
- ``rewriter/lstm_rewriter.py`` (``from_keras``): Keras' i, f, c, o gates reordered to ONNX's
  i, o, f, c, the kernels transposed, the recurrent half of ``B`` zeros;
  ``rewriter/gru_rewriter.py`` ``_process_weights_and_bias_keras``: z, r, h kept, ``B`` the
  input and recurrent bias rows side by side, ``linear_before_reset=1`` (``reset_after``);
- Keras' zero state ``tf.zeros((tf.shape(x)[0], H))``: ``Shape`` + ``Cast`` int32,
  ``StridedSlice`` with a shrink axis (``onnx_opset/tensor.py``: ``Slice`` + ``Squeeze``),
  ``Pack`` (``Unsqueeze`` + ``Concat``), ``Fill`` (``onnx_opset/generator.py`` version 9:
  ``Cast`` int64 + ``ConstantOfShape``), or ``tf.broadcast_to`` (``BroadcastTo``: ``Expand``);
- the last output, ``outputs[-1]``: ``Slice`` (starts -1) + ``Squeeze`` (axes 0); a
  ``return_sequences`` output: the ``Transpose`` back to batch-major;
- ``Dense``: ``MatMul`` + ``Add`` (``BiasAdd``), its activation ``Softmax`` (axis -1).
"""
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

ort = pytest.importorskip("onnxruntime")

from designer.exchange.errors import ExchangeError  # noqa: E402
from designer.exchange.onnx_import import import_onnx  # noqa: E402

from designer.engines.net.build import Net  # noqa: E402

from tests.exchange.onnx_import.test_foreign_more import sequences, trains  # noqa: E402

T, F, K = 5, 3, 4
INT32, INT64 = TensorProto.INT32, TensorProto.INT64


class Keras:
    """A graph being written as tf2onnx writes a Keras model (opset 15, axes as inputs)."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, array, name=None):
        self.k += 1
        name = name or f"const__{self.k}"
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        self.k += 1
        outs = [f"{op_type}__{self.k}:{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, f"{op_type}__{self.k}",
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def weights(self, *shape):
        return (self.rng.standard_normal(shape) * 0.4).astype(np.float32)

    def zero_state(self, x, hidden, how="fill", fill=0.0):
        """Keras' ``tf.zeros((tf.shape(x)[0], H))``, then the rewriter's ``Unsqueeze``."""
        shape = self.op("Cast", [self.op("Shape", [x])], to=INT32)
        batch = self.op("Squeeze", [self.op("Slice", [shape, self.const(np.int64([0])),
                                                      self.const(np.int64([1])),
                                                      self.const(np.int64([0]))]),
                                    self.const(np.int64([0]))])
        dims = self.op("Concat", [self.op("Unsqueeze", [batch, self.const(np.int64([0]))]),
                                  self.const(np.int32([hidden]))], axis=0)
        dims = self.op("Cast", [dims], to=INT64)
        if how == "fill":
            zeros = self.op("ConstantOfShape", [dims],
                            value=numpy_helper.from_array(np.float32([fill])))
        else:
            zeros = self.op("Expand", [self.const(np.float32(fill)), dims])
        return self.op("Unsqueeze", [zeros, self.const(np.int64([0]))])

    def lstm(self, x, hidden, features, zeros="fill", fill=0.0):
        """Keras ``LSTM(hidden)`` on batch-major ``x``: ``Y`` squeezed, time-major."""
        kernel, recurrent = self.weights(features, 4 * hidden), self.weights(hidden, 4 * hidden)
        bias = self.weights(4 * hidden)
        i, f, c, o = zip(*(np.split(a, 4, axis=-1) for a in (kernel, recurrent, bias)))
        w = np.concatenate([i[0], o[0], f[0], c[0]], -1).T[None]
        r = np.concatenate([i[1], o[1], f[1], c[1]], -1).T[None]
        b = np.concatenate([i[2], o[2], f[2], c[2], np.zeros(4 * hidden, np.float32)])[None]
        h0 = self.zero_state(x, hidden, zeros, fill)
        c0 = self.zero_state(x, hidden, zeros, fill)
        xt = self.op("Transpose", [x], perm=[1, 0, 2])
        y = self.op("LSTM", [xt, self.const(w), self.const(r), self.const(b), "", h0, c0],
                    3, hidden_size=hidden)[0]
        return self.op("Squeeze", [y, self.const(np.int64([1]))])

    def gru(self, x, hidden, features, zeros="fill", fill=0.0):
        """Keras ``GRU(hidden, reset_after=True)`` on batch-major ``x``."""
        w = self.weights(features, 3 * hidden).T[None]
        r = self.weights(hidden, 3 * hidden).T[None]
        b = self.weights(2, 3 * hidden).reshape(1, -1)
        h0 = self.zero_state(x, hidden, zeros, fill)
        xt = self.op("Transpose", [x], perm=[1, 0, 2])
        y = self.op("GRU", [xt, self.const(w), self.const(r), self.const(b), "", h0], 2,
                    hidden_size=hidden, linear_before_reset=1)[0]
        return self.op("Squeeze", [y, self.const(np.int64([1]))])

    def last(self, y):
        cut = self.op("Slice", [y, self.const(np.int64([-1])),
                                self.const(np.int64([2 ** 31 - 1])), self.const(np.int64([0]))])
        return self.op("Squeeze", [cut, self.const(np.int64([0]))])

    def batch_major(self, y):
        return self.op("Transpose", [y], perm=[1, 0, 2])

    def dense_softmax(self, x, inputs, outputs):
        y = self.op("Add", [self.op("MatMul", [x, self.const(self.weights(inputs, outputs))]),
                            self.const(self.weights(outputs))])
        return self.op("Softmax", [y], axis=-1)

    def save(self, out, path, out_shape):
        self.nodes.append(helper.make_node("Identity", [out], ["dense"], "Identity"))
        graph = helper.make_graph(
            self.nodes, "tf2onnx",
            [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["unk__7", T, F])],
            [helper.make_tensor_value_info("dense", TensorProto.FLOAT, out_shape)],
            self.inits)
        model = helper.make_model(graph, producer_name="tf2onnx", producer_version="1.16.1",
                                  opset_imports=[helper.make_opsetid("", 15)])
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path


def matches(path, result):
    x = np.random.default_rng(1).standard_normal((4, T, F)).astype(np.float32)
    net = Net(result.project.graph)
    net.load_state_dict(result.weights)
    layer, _, _ = result.outputs["dense"]
    with torch.no_grad():
        got = net.eval()({"data.data": torch.from_numpy(x.transpose(1, 0, 2))}, None,
                         want=(layer,)).blobs[(layer, 0)].numpy()
    ref = ort.InferenceSession(str(path)).run(None, {"input_1": x})[0]
    assert got.shape[-2:] == ref.shape[-2:] and np.abs(got - ref).max() < 1e-4


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_a_keras_classifier_imports_matches_and_trains(tmp_path, kind):
    k = Keras()
    zeros = "fill" if kind == "lstm" else "expand"
    y = getattr(k, kind)("input_1", 6, F, zeros)
    path = k.save(k.dense_softmax(k.last(y), 6, K), tmp_path / "model.onnx", ["unk__7", K])
    result = import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)
    assert [la.type for la in result.project.graph.layers()] == [
        "SequenceClasses", kind.upper(), "SequenceLast", "InnerProduct", "Softmax",
        "SoftmaxWithLoss"]
    matches(path, result)
    trains(result, tmp_path)


def test_a_keras_stack_with_return_sequences_imports_matches_and_trains(tmp_path):
    k = Keras(seed=2)
    y = k.batch_major(k.lstm("input_1", 7, F))  # LSTM(7, return_sequences=True)
    y = k.batch_major(k.gru(y, 5, 7, "expand"))  # GRU(5, return_sequences=True)
    y = k.gru(y, 6, 5)
    path = k.save(k.dense_softmax(k.last(y), 6, K), tmp_path / "stack.onnx", ["unk__7", K])
    result = import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)
    assert [la.type for la in result.project.graph.layers()][:4] == [
        "SequenceClasses", "LSTM", "GRU", "GRU"]
    matches(path, result)
    trains(result, tmp_path)


def test_a_keras_initial_state_that_is_not_zeros_is_refused(tmp_path):
    for how in ("fill", "expand"):
        k = Keras()
        y = k.gru("input_1", 6, F, how, fill=0.5)
        path = k.save(k.dense_softmax(k.last(y), 6, K), tmp_path / "m.onnx", ["unk__7", K])
        with pytest.raises(ExchangeError, match="value other than zero"):
            import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)


def test_without_data_the_features_are_pinned_and_the_data_layer_asks_for_its_file(
        tmp_path, capsys):
    from designer.cli import main
    from designer.graph import hints, project
    k = Keras()
    path = k.save(k.dense_softmax(k.last(k.lstm("input_1", 6, F)), 6, K), tmp_path / "m.onnx",
                  ["unk__7", K])
    out, run = tmp_path / "m.json", tmp_path / "run"
    assert main(["import", str(path), "--out", str(out), "--run", str(run)]) == 0
    said = capsys.readouterr().out
    assert "no run folder is written: a run needs --data FILE" in said and not run.exists()
    loaded = project.load(out)
    g = loaded.graph
    assert loaded.dims == {"F": F} and g.errors() == [] and g.layer("data").get("file") == ""
    [note] = [p for p in g.problems() if getattr(p, "fix", None)]
    assert note.layer == "data" and "no data file yet: pick the file this model was trained " \
        "on" in str(note) and note.fix.kind == "pick_data"
    hints.apply(g, note.fix, str(sequences(tmp_path)))
    assert g.layer("data").get("file").endswith("seqs.csv")
    assert not [p for p in g.problems() if getattr(p, "fix", None)] and g.dims["K"] == K
