"""LSTM, GRU, RNN and LSTMSimple in an exported ``model.py``: torch.nn's own layers.

Whatever engine trained them, they become ``nn.LSTM``/``nn.GRU``/``nn.RNN``: the cuDNN engine
holds such a layer already, and the unrolled engine's weights (and LSTMSimple's) are converted
to torch's gate order (:mod:`designer.engines.net.convert`), which computes the same function.
Padded sequences of different lengths run through the ``packed`` helper.
"""
from __future__ import annotations

from designer.graph.registry import weight_layout

from designer.exchange.pytorch_export.layers import LAYERS

TORCH_RNN = {"LSTM": "nn.LSTM", "GRU": "nn.GRU", "RNN": "nn.RNN", "LSTMSimple": "nn.LSTM"}


def torch_state(module) -> dict:
    """The recurrent layer's weights as ``nn.LSTM/GRU/RNN`` keys (converted from Caffe's)."""
    if hasattr(module, "rnn"):
        return dict(module.rnn.state_dict())
    from designer.cells.classic.engines.convert import caffe_to_cudnn
    sd = {k: v.detach() for k, v in module.named_parameters()}
    return caffe_to_cudnn("LSTM" if module.kind == "LSTMSimple" else module.kind, sd,
                          module.levels)


@LAYERS.register(*TORCH_RNN)
def torch_recurrent(writer, name, var, layer, module, p, x, comment) -> str:
    """Write the layer into ``writer`` (a ``pytorch_code`` writer) as a torch.nn layer: its
    attribute and weights; returns the expression of its call."""
    kind, cls = layer.type, TORCH_RNN[layer.type]
    rnn = getattr(module, "rnn", None)  # cuDNN and PERSIST hold a torch.nn layer
    e = (rnn if rnn is not None else module).input_size
    h, levels = module.hidden, module.levels
    args = [str(e), str(h)]
    if levels > 1:
        args.append(f"num_layers={levels}")
    dropout = p.get("dropout_ratio", 0.0)
    if levels > 1 and dropout:
        args.append(f"dropout={dropout!r}")
    if p.get("batch_first"):
        args.append("batch_first=True")
    if kind == "RNN" and p.get("nonlinearity") == "relu":
        args.append("nonlinearity='relu'")
    if p.get("bidirectional"):
        args.append("bidirectional=True")
    engine = writer.net.engines.get(name, "CAFFE")
    how = "the cuDNN engine" if weight_layout(engine) == "CUDNN" else \
        "the unrolled Caffe engine; its weights are converted to torch's gate order"
    if kind == "LSTMSimple":
        how = "the caffe-lstm LSTM_SIMPLE layer; its weights are converted to torch's " \
              "gate order\n# (its gradient clipping only mattered while training)"
    writer.init += [f"{comment}: {e} -> {h}" + (f", {levels} stacked layers" if levels > 1
                                                 else ""), f"# trained on {how}",
                    f"self.{var} = {cls}({', '.join(args)})"]
    for key, value in torch_state(module).items():
        writer.weights[f"{var}.{key}"] = value
    wires = writer.net.wiring[name]
    if len(wires) > 2 and wires[2] is not None:  # padded sequences of different lengths
        writer.helpers.add("packed")
        return f"packed(self.{var}, {x}, state.get({name!r}), {writer._in(name, 2)})"
    return f"self.{var}({x}, state.get({name!r}))"
