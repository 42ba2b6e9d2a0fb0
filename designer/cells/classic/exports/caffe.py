"""LSTM, GRU, RNN and LSTMSimple in a prototxt: MyCaffe's ``Lstm`` (``recurrent_param``), ``GRU``
and ``RNN`` (which MyCaffe lacks; the file names it so), and ``LstmSimple`` (the caffe-lstm
layer, ``lstm_simple_param``), written with what MyCaffe would run otherwise in the notes; and
read back from Caffe's and MyCaffe's files (an ``RNN`` of the CAFFE engine as an RNN followed
by its output transform, which Caffe's layer adds). Caffe's ``LSTMUnit`` is read as the LSTMUnit
building block.
"""
from __future__ import annotations

from designer.exchange.caffe.exporter import CAFFE_TYPES, PARAMS, bias, filler
from designer.cells.classic.spec import LSTM_UNIT
from designer.exchange.caffe.layers import (CONVERTERS, ENGINES, RECURRENT, fillers, key, num,
                                            param)
from designer.exchange.errors import ExchangeError
from designer.exchange.caffe.textformat import Enum, Message

CAFFE_TYPES.update({"LSTM": "Lstm", "LSTMSimple": "LstmSimple"})  # MyCaffe's names
KINDS = {"lstm": "LSTM", "gru": "GRU", "rnn": "RNN"}  # Caffe's recurrent_param layers


# ------------------------------------------------------------------------------- write --
@PARAMS.register("LSTM", "GRU", "RNN")
def recurrent_param(msg, g, layer, p, notes):
    """MyCaffe's recurrent_param, and what MyCaffe would run otherwise."""
    h = p["num_output"]
    if p["engine"] == "PERSIST":
        notes.append(f"{layer.name}: Caffe and MyCaffe have no PERSIST engine; the file says "
                     "CUDNN, whose weights PERSIST holds")
        p = dict(p, engine="CUDNN")
    if p["engine"] == "AUTO":   # the default: cuDNN's layout, which AUTO holds (the #@ line
        p = dict(p, engine="CUDNN")   # keeps AUTO for rnn-designer)
    r = Message().add("engine", Enum(p["engine"])).add("num_output", h)
    r.add("weight_filler", filler(p, h, h, "uniform")).add("bias_filler", bias(p))
    r.add("debug_info", False).add("expose_hidden", False)
    if p["engine"] == "CUDNN" or p["num_layers"] > 1:
        r.add("dropout_ratio", p["dropout_ratio"]).add("dropout_seed", 0)
        r.add("num_layers", p["num_layers"])
    if p["engine"] == "CAFFE" and p["num_layers"] > 1:
        notes.append(f"{layer.name}: MyCaffe stacks num_layers only on the CUDNN engine; on "
                     "CAFFE it runs one level")
    if p["batch_first"]:
        notes.append(f"{layer.name}: batch_first has no Caffe field; MyCaffe reads (T, N, ...)")
    if p.get("bidirectional"):
        notes.append(f"{layer.name}: Caffe and MyCaffe run one direction; the file keeps "
                     "bidirectional on its #@ line, which rnn-designer reads back")
    if g.link_into(layer.name, "lengths") is not None:
        notes.append(f"{layer.name}: Caffe and MyCaffe have no sequence lengths (their third "
                     "bottom is a static input); the lengths bottom is for rnn-designer")
    if layer.type == "GRU":
        notes.append(f"{layer.name}: Caffe and MyCaffe have no GRU layer; the file names it GRU, "
                     "which rnn-designer reads back")
    if layer.type == "RNN" and not (p["engine"] == "CUDNN" and p["nonlinearity"] == "relu"):
        notes.append(f"{layer.name}: MyCaffe's RNN adds an output transform tanh(W_ho h + b_o) "
                     "on the CAFFE engine and uses ReLU on CUDNN; it will not compute this "
                     f"{p['nonlinearity']} RNN exactly")
    msg.add("recurrent_param", r)


@PARAMS.register("LSTMSimple")
def lstm_simple_param(msg, g, layer, p, notes):
    """MyCaffe's lstm_simple_param."""
    h = p["num_output"]
    s = Message().add("num_output", h)
    if p["clipping_threshold"]:
        s.add("clipping_threshold", p["clipping_threshold"])
    s.add("weight_filler", filler(p, h, h, "uniform")).add("bias_filler", bias(p))
    n = g.dims.get("N")
    if isinstance(n, int):
        s.add("batch_size", n)
    if p["enable_clockwork_forgetgate_bias"]:
        s.add("enable_clockwork_forgetgate_bias", True)
    msg.add("lstm_simple_param", s)


# -------------------------------------------------------------------------------- read --
def _recurrent(kind: str):
    """The converter of Caffe's (MyCaffe's) recurrent layer ``kind``."""
    def convert(b, layer):
        p = param(layer, "recurrent_param")
        if num(p, "expose_hidden", False, bool):
            raise ExchangeError(f"layer '{layer.name}' ({layer.type}) exposes its hidden state as "
                                "extra bottoms and tops (expose_hidden), which rnn-designer "
                                "does not support")
        if len(layer.bottoms) > 2:
            raise ExchangeError(f"layer '{layer.name}' ({layer.type}) has a static input (a "
                                "third bottom), which rnn-designer does not support")
        engine = ENGINES.get(str(p.get("engine", "DEFAULT")), "CAFFE")
        params = {"num_output": num(p, "num_output", 0, int), "engine": engine}
        levels = num(p, "num_layers", 1, int)
        if levels != 1:
            params["num_layers"] = levels
            params["dropout_ratio"] = num(p, "dropout_ratio", 0.0)
        fillers(b, layer, p, params)
        if kind == "RNN" and engine == "CUDNN":
            params["nonlinearity"] = "relu"  # MyCaffe's cuDNN RNN runs cuDNN's RNN_RELU mode
            b.note(f"{layer.name}: MyCaffe runs an RNN on the CUDNN engine with ReLU; so does "
                   "the imported layer")
        made = b.add(layer, kind, params)
        b.wire(layer, made, ("x", "cont"), ("y",) if kind != "RNN" or engine == "CUDNN" else ())
        if kind == "RNN" and engine != "CUDNN":
            _caffe_rnn_output(b, layer, made, params)
    return convert


def _caffe_rnn_output(b, layer, rnn: str, params: dict) -> None:
    """Caffe's RNN layer also computes o_t = tanh(W_ho h_t + b_o): an InnerProduct and a TanH."""
    ip = b.add_extra(f"{layer.name}_W_ho", "InnerProduct", {
        "num_output": params["num_output"], "axis": 2,
        **{k: v for k, v in params.items() if k in ("weight_filler", "bias_filler")}})
    b.connect(rnn, "y", ip, "x")
    tanh = b.add_extra(f"{layer.name}_o", "TanH", {})
    b.connect(ip, "y", tanh, "x")
    b.produce(layer.tops[0], tanh, "y")
    b.note(f"{layer.name}: Caffe's RNN layer is imported as an RNN (h_t) followed by its output "
           f"transform o_t = tanh(W_ho h_t + b_o): {ip} and {tanh}")


@CONVERTERS.register("lstmsimple")
def _lstm_simple(b, layer):
    p = param(layer, "lstm_simple_param")
    params = {"num_output": num(p, "num_output", 0, int)}
    clip = num(p, "clipping_threshold", 0.0)
    if clip:
        params["clipping_threshold"] = clip
    if num(p, "enable_clockwork_forgetgate_bias", False, bool):
        params["enable_clockwork_forgetgate_bias"] = True
    fillers(b, layer, p, params)
    made = b.add(layer, "LSTMSimple", params)
    b.wire(layer, made, ("x", "cont"), ("y",))


for _key, _kind in KINDS.items():
    CONVERTERS.register(_key)(_recurrent(_kind))
RECURRENT.update(KINDS, ("lstmsimple",))


@CONVERTERS.register(key(LSTM_UNIT.caffe_type))
def _lstm_unit(b, layer):
    """Caffe's LSTMUnit: bottoms (c_prev, gates, cont), tops (c, h)."""
    made = b.add(layer, LSTM_UNIT.id, {})
    b.wire(layer, made, tuple(p.name for p in LSTM_UNIT.inputs),
           tuple(p.name for p in LSTM_UNIT.outputs))
