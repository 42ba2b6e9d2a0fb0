"""LSTM, GRU, RNN and LSTMSimple in an exported ``model.py``: torch.nn's own layers.

Whatever engine trained them, they become ``nn.LSTM``/``nn.GRU``/``nn.RNN``: the cuDNN engine
holds such a layer already, and the unrolled engine's weights (and LSTMSimple's) are converted
to torch's gate order (:mod:`designer.engines.net.convert`), which computes the same function.
Padded sequences of different lengths run through the ``packed`` helper. The LSTMUnit building
block is a call of the ``lstm_unit`` helper (Caffe's LSTM_UNIT).
"""
from __future__ import annotations

from designer.graph.registry import weight_layout

from designer.cells.classic.spec import LSTM_UNIT
from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.snippets import CELL_HELPERS

TORCH_RNN = {"LSTM": "nn.LSTM", "GRU": "nn.GRU", "RNN": "nn.RNN", "LSTMSimple": "nn.LSTM"}

LSTM_UNIT_SOURCE = '''
def lstm_unit(c_prev, gates, cont):
    """One LSTM step, Caffe's LSTM_UNIT: gates [i, f, o, g]."""
    h = c_prev.shape[-1]
    i, f, o = torch.sigmoid(gates[..., :3 * h]).split(h, -1)
    g = torch.tanh(gates[..., 3 * h:])
    c = f * (cont.unsqueeze(-1) * c_prev) + i * g
    return c, o * torch.tanh(c)
'''

PACKED = '''
def packed(rnn, x, state, lengths):
    """Run ``rnn`` over padded sequences, sequence n valid for its first ``lengths[n]`` steps
    (``None``: all of them):
    padded steps give zeros and the final state is each sequence's after its last valid step
    (the backward direction's: after the first step). A length of 0 gives no output and leaves
    the state as it came in."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    if lengths is None:  # every step counts
        return rnn(x, state)
    first = rnn.batch_first
    lengths = lengths.to("cpu", torch.int64)
    steps, n = (x.shape[1], x.shape[0]) if first else (x.shape[0], x.shape[1])
    if state is None:
        zeros = x.new_zeros(rnn.num_layers * (2 if rnn.bidirectional else 1), n,
                            rnn.hidden_size)
        state = (zeros, zeros.clone()) if isinstance(rnn, nn.LSTM) else zeros
    seqs = pack_padded_sequence(x, lengths.clamp(min=1), batch_first=first,
                                enforce_sorted=False)
    y, new = rnn(seqs, state)
    y, _ = pad_packed_sequence(y, batch_first=first, total_length=steps)
    alive = (lengths > 0).to(x.device)
    if not bool(alive.all()):
        y = torch.where(alive.view((-1, 1, 1) if first else (1, -1, 1)), y, 0.0)
        keep = alive.view(1, -1, 1)
        if isinstance(new, tuple):
            new = tuple(torch.where(keep, a, b) for a, b in zip(new, state))
        else:
            new = torch.where(keep, new, state)
    return y, new
'''

CELL_HELPERS["lstm_unit"] = lambda: LSTM_UNIT_SOURCE
CELL_HELPERS["packed"] = lambda: PACKED


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


@LAYERS.register(LSTM_UNIT.id)
def lstm_unit_layer(writer, name, var, layer, module, p, x, comment) -> str:
    """The LSTMUnit building block: a call of ``lstm_unit`` (its outputs c and h, so the
    comment naming it stays off the line above)."""
    writer.helpers.add("lstm_unit")
    return f"lstm_unit({x}, {writer._in(name, 1)}, {writer._in(name, 2)})"
