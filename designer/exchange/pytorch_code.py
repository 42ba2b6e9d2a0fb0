"""A net as a standalone, readable PyTorch file: ``model.py`` plus ``weights.safetensors``.

The generated module is a plain ``nn.Module`` with one attribute per layer as drawn (a comment
names each), built from ``torch.nn`` alone: ``model.py`` imports torch and safetensors, never
rnn-designer. Recurrent layers become ``nn.LSTM``/``nn.GRU``/``nn.RNN`` whatever engine trained
them: weights of the unrolled engine are converted to torch's gate order
(:mod:`designer.engines.convert`), which computes the same function. MinGRU and MinLSTM, which
torch.nn lacks, become a ``MinRNN`` written into the file (:mod:`pytorch_min_rnn`); the sLSTM
an ``SLSTM`` (:mod:`pytorch_slstm`) and the mLSTM an ``MLSTM`` (:mod:`pytorch_mlstm`).
``python model.py`` loads the weights and prints a test output.
"""
from __future__ import annotations

import json
import keyword
import os
import re
from pathlib import Path

from designer import __version__
from designer.graph.registry import recurrent_kinds
from designer.cells.classic.engines.convert import caffe_to_cudnn
from designer.graph.atomic import atomic_write_bytes, atomic_write_text
from designer.graph.registry import weight_layout
from designer.graph.shapes import resolve_params

from designer.exchange.errors import ExchangeError
from designer.cells.minimal.exports.pytorch import min_recurrent
from designer.cells.mlstm.exports.pytorch import mlstm_recurrent
from designer.exchange.pytorch_rocket import mini_rocket
from designer.exchange.pytorch_sequence import conv1d, norm, sequence_pool
from designer.cells.slstm.exports.pytorch import slstm_recurrent

# the recurrent layers torch.nn lacks -> the writer of the class model.py gets for each
OWN_CLASSES = {"MinRNN": min_recurrent, "sLSTM": slstm_recurrent, "mLSTM": mlstm_recurrent}
from designer.exchange.pytorch_snippets import data_constant, helpers, main_block
from designer.exchange.source import ModelSource

RESERVED = {"self", "state", "new_state", "torch", "nn", "F", "tokens", "data", "cont", "Model",
            "load", "caffe_reshape", "lstm_unit", "Path", "VOCAB", "lengths", "packed",
            "sequence_last", "DATA", "test_input", "batch_norm", "conv_over_time",
            "sequence_pool", "MinRNN", "SLSTM", "MLSTM", "math", "CHUNK", "MiniRocket"}
TRAINING_ONLY = ("SoftmaxWithLoss", "Accuracy", "EuclideanLoss", "L1Loss")
TORCH_RNN = {"LSTM": "nn.LSTM", "GRU": "nn.GRU", "RNN": "nn.RNN", "LSTMSimple": "nn.LSTM"}


def export_pytorch(source: ModelSource, folder: str | os.PathLike) -> list[str]:
    """Write ``model.py`` and ``weights.safetensors`` into ``folder``; returns notes."""
    from safetensors.torch import save as st_save
    code, weights = generate(source)
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ExchangeError(f"{folder} is a file; --out needs a folder for the PyTorch export")
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous() for k, v in weights.items()}
    atomic_write_bytes(folder / "weights.safetensors", st_save(tensors))
    atomic_write_text(folder / "model.py", code)
    return list(source.notes)


def _ident(name: str, taken: set) -> str:
    base = re.sub(r"\W", "_", name)
    if not base or base[0].isdigit():
        base = "l_" + base
    if keyword.iskeyword(base) or base in RESERVED:
        base += "_"
    out, i = base, 2
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    taken.add(out)
    return out


class _Writer:
    def __init__(self, source: ModelSource):
        self.source = source
        self.net = source.build_net()
        source.check_fitted(self.net)
        self.g = source.project.graph
        self.init: list[str] = []
        self.body: list[str] = []
        self.weights: dict = {}
        self.helpers: set[str] = set()
        self.attrs: set[str] = set()
        self.values: dict = {}  # (layer, output index) -> python expression (a variable)
        self.inputs: list[str] = []
        self.made_cont = False

    def emit(self) -> str:
        net, g = self.net, self.g
        logits = [net.logits_source()] if net.losses else None
        wanted = tuple(w[0] for w in logits) if logits else None
        for name in net.needed(wanted):
            layer = g.layer(name)
            if layer.type in TRAINING_ONLY:
                continue
            if name in net.sources:
                self._data(name, layer)
                continue
            self._layer(name, layer)
        if logits:
            result = self.values[logits[0]]
        else:
            read = {w[0] for n in net.order for w in net.wiring[n] if w is not None}
            ends = [self.values[(n, 0)] for n in net.order if n not in read and
                    (n, 0) in self.values and n not in net.sources]
            result = ends[0] if len(ends) == 1 else "(" + ", ".join(ends) + ")"
        self.body.append(f"return {result}, new_state")
        return self._file()

    # ------------------------------------------------------------------------ layers --
    def _data(self, name, layer):
        t = self.g.output(name, "data")
        var = "tokens" if t.dtype == "index" else "data"
        self.inputs.append(var)
        self.values[(name, 0)] = var
        ports = [port.name for port in layer.spec.outputs]
        if "cont" in ports:
            self.values[(name, ports.index("cont"))] = "cont"  # made when a layer reads it
        if "lengths" in ports:
            self.values[(name, ports.index("lengths"))] = "lengths"  # an input when read

    def _in(self, name, i=0) -> str:
        w = self.net.wiring[name][i]
        if w is None:
            return "None"
        if self.values.get(w) == "cont" and not self.made_cont:
            self.made_cont = True
            self.body.append(f"cont = torch.ones({self.inputs[0]}.shape[:2])  # no restarts")
        if self.values.get(w) == "lengths" and "lengths" not in self.inputs:
            self.inputs.append("lengths")
        return self.values[w]

    def _layer(self, name, layer):
        p = resolve_params(layer.spec, layer.params, self.g.dims)
        var = _ident(name, self.attrs)
        module = self.net.layers[name]
        info = self.g.info(name)
        x = self._in(name)
        comment = f"# {name} ({layer.type})"
        t = layer.type
        if t == "Embed":
            k, m = module.embedding.num_embeddings, module.embedding.embedding_dim
            self.init += [f"{comment}: ids in [0, {k}) -> vectors of {m}"
                          + (", plus a learned bias" if module.bias is not None else ""),
                          f"self.{var} = nn.Embedding({k}, {m})"]
            self.weights[f"{var}.weight"] = module.embedding.weight
            expr = f"self.{var}({x})"
            if module.bias is not None:
                self.init.append(f"self.{var}_bias = nn.Parameter(torch.zeros({m}))")
                self.weights[f"{var}_bias"] = module.bias
                expr += f" + self.{var}_bias"
        elif t == "InnerProduct":
            lin = module.linear
            rank = len(info.inputs[0].shape)
            a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
            self.init += [f"{comment}: {lin.in_features} -> {lin.out_features}, flattening the "
                          f"dims from axis {p['axis']} on",
                          f"self.{var} = nn.Linear({lin.in_features}, {lin.out_features}"
                          f"{'' if lin.bias is not None else ', bias=False'})"]
            self.weights[f"{var}.weight"] = lin.weight
            if lin.bias is not None:
                self.weights[f"{var}.bias"] = lin.bias
            expr = f"self.{var}({x})" if a == rank - 1 else f"self.{var}({x}.flatten({a}))"
        elif t in recurrent_kinds():
            expr = self._recurrent(name, var, layer, module, p, x, comment)
        elif t == "Conv1D":
            expr = conv1d(self, name, var, module, p, x, comment)
        elif t in ("BatchNorm", "LayerNorm"):
            expr = norm(self, name, var, module, p, x, comment)
        elif t == "MiniRocket":
            expr = mini_rocket(self, name, var, module, p, x, comment)
        elif t == "Dropout":
            self.init += [f"{comment}: zeroes values with probability {p['dropout_ratio']:g} "
                          "while training",
                          f"self.{var} = nn.Dropout({p['dropout_ratio']!r})"]
            expr = f"self.{var}({x})"
        else:
            expr = self._function(name, var, layer, p, x, info)
            if t not in ("Slice", "LSTMUnit"):
                self.body.append(f"{comment}")
        self._assign(name, var, layer, expr)

    def _recurrent(self, name, var, layer, module, p, x, comment) -> str:
        own = OWN_CLASSES.get("MinRNN" if layer.type in ("MinGRU", "MinLSTM") else layer.type)
        if own is not None:  # torch.nn has none: a class of its own written into the file
            return own(self, name, var, layer, module, p, x, comment)
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
        engine = self.net.engines.get(name, "CAFFE")
        how = "the cuDNN engine" if weight_layout(engine) == "CUDNN" else \
            "the unrolled Caffe engine; its weights are converted to torch's gate order"
        if kind == "LSTMSimple":
            how = "the caffe-lstm LSTM_SIMPLE layer; its weights are converted to torch's " \
                  "gate order\n# (its gradient clipping only mattered while training)"
        self.init += [f"{comment}: {e} -> {h}" + (f", {levels} stacked layers" if levels > 1
                                                   else ""), f"# trained on {how}",
                      f"self.{var} = {cls}({', '.join(args)})"]
        for key, value in torch_state(module).items():
            self.weights[f"{var}.{key}"] = value
        wires = self.net.wiring[name]
        if len(wires) > 2 and wires[2] is not None:  # padded sequences of different lengths
            self.helpers.add("packed")
            return f"packed(self.{var}, {x}, state.get({name!r}), {self._in(name, 2)})"
        return f"self.{var}({x}, state.get({name!r}))"

    def _function(self, name, var, layer, p, x, info) -> str:
        t = layer.type
        if t == "ReLU":
            s = p["negative_slope"]
            return f"torch.nn.functional.leaky_relu({x}, {s!r})" if s else f"torch.relu({x})"
        if t in ("TanH", "Sigmoid"):
            return f"torch.{t.lower()}({x})"
        if t == "Softmax":
            return f"torch.softmax({x}, {p['axis']})"
        if t == "Clip":
            return f"{x}.clamp({p['min']!r}, {p['max']!r})"
        if t == "Reshape":
            self.helpers.add("caffe_reshape")
            return f"caffe_reshape({x}, {p['shape']!r}, {p['axis']}, {p['num_axes']})"
        if t == "Eltwise":
            y = self._in(name, 1)
            return {"SUM": f"{x} + {y}", "PROD": f"{x} * {y}",
                    "MAX": f"torch.maximum({x}, {y})"}[p["operation"]]
        if t == "Concat":
            return f"torch.cat([{x}, {self._in(name, 1)}], {p['axis']})"
        if t == "Slice":
            a, point = p["axis"], p["slice_point"]
            return f"{x}.narrow({a}, 0, {point}), {x}.narrow({a}, {point}, {x}.shape[{a}] - " \
                   f"{point})"
        if t == "Scale":
            return self._scale(name, var, p, x, info)
        if t == "LSTMUnit":
            self.helpers.add("lstm_unit")
            return f"lstm_unit({x}, {self._in(name, 1)}, {self._in(name, 2)})"
        if t == "SequencePool":
            return sequence_pool(self, name, var, p, x)
        if t == "SequenceLast":
            self.helpers.add("sequence_last")
            return (f"sequence_last({x}, {self._in(name, 1)}, batch_first={p['batch_first']}, "
                    f"bidirectional={p['bidirectional']})")
        raise ExchangeError(f"{name}: a {t} layer has no PyTorch form yet")

    def _scale(self, name, var, p, x, info) -> str:
        rank = len(info.inputs[0].shape)
        a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
        if info.inputs[1] is not None:
            k = rank - a - len(info.inputs[1].shape)
            return f"{x} * {self._in(name, 1)}[(...,) + (None,) * {k}]"
        module = self.net.layers[name]
        shape = tuple(module.weight.shape)
        view = shape + (1,) * (rank - a - len(shape))
        self.init += [f"# {name} (Scale): a learned scale over dims {shape}",
                      f"self.{var}_weight = nn.Parameter(torch.ones({shape!r}))"]
        self.weights[f"{var}_weight"] = module.weight
        expr = f"{x} * self.{var}_weight.view({view!r})"
        if module.bias is not None:
            self.init.append(f"self.{var}_bias = nn.Parameter(torch.zeros({shape!r}))")
            self.weights[f"{var}_bias"] = module.bias
            expr += f" + self.{var}_bias.view({view!r})"
        return expr

    def _assign(self, name, var, layer, expr) -> None:
        outs = [port.name for port in layer.spec.outputs]
        if layer.type in recurrent_kinds():
            self.body.append(f"{var}, new_state[{name!r}] = {expr}")
            self.values[(name, 0)] = var
            return
        if len(outs) == 1:
            self.body.append(f"{var} = {expr}")
            self.values[(name, 0)] = var
            return
        names = [f"{var}_{o}" for o in outs]
        self.body.append(f"# {name} ({layer.type})")
        self.body.append(f"{', '.join(names)} = {expr}")
        for i, n in enumerate(names):
            self.values[(name, i)] = n

    # -------------------------------------------------------------------------- file --
    def _file(self) -> str:
        project = self.source.project
        vocab = self.source.data_meta.get("vocab")
        args = ", ".join(self.inputs)
        lines = [f'"""{project.name}: exported by rnn-designer {__version__} as plain PyTorch.',
                 "",
                 "Run ``python model.py`` to load ``weights.safetensors`` (next to this file) and "
                 "print a test",
                 "output. Needs torch and safetensors only.",
                 "",
                 f"``Model()({args}, state)`` returns the output and the recurrent state of "
                 "every recurrent",
                 "layer (torch's own form: ``(h, c)`` for an LSTM, ``h`` otherwise); pass the "
                 "state back in to",
                 "continue the sequences. Input layout: (T, N) ids or (T, N, F) values, unless a "
                 "layer is",
                 "batch-first.",
                 '"""',
                 *["import math"] * ("mlstm" in self.helpers), "from pathlib import Path", "",
                 "import torch"]
        if self.helpers & {"min_rnn", "slstm", "mlstm"}:
            lines.append("import torch.nn.functional as F")
        lines += ["from torch import nn", ""]
        if vocab is not None:
            lines += ["# the characters, in id order",
                      f"VOCAB = {json.dumps(vocab, ensure_ascii=False)}", ""]
        lines += data_constant(self.source, self.net)
        lines += helpers(self.helpers)
        lines += ["", "class Model(nn.Module):",
                  '    """The net as drawn in rnn-designer: one attribute per layer."""', "",
                  "    def __init__(self):", "        super().__init__()"]
        lines += [f"        {line}" for chunk in self.init for line in chunk.split("\n")]
        params = ", ".join(f"{a}=None" if a == "lengths" else a for a in self.inputs)
        lines += ["", f"    def forward(self, {params}, state=None):",
                  "        state = {} if state is None else state", "        new_state = {}"]
        lines += [f"        {line}" for line in self.body]
        lines += main_block(self.inputs, self.g, vocab)
        return "\n".join(lines) + "\n"


def torch_state(module) -> dict:
    """The recurrent layer's weights as ``nn.LSTM/GRU/RNN`` keys (converted from Caffe's)."""
    if hasattr(module, "rnn"):
        return dict(module.rnn.state_dict())
    sd = {k: v.detach() for k, v in module.named_parameters()}
    if module.kind in ("MinGRU", "MinLSTM", "sLSTM", "mLSTM"):  # MinRNN, SLSTM, MLSTM: the designer's
        return sd
    return caffe_to_cudnn("LSTM" if module.kind == "LSTMSimple" else module.kind, sd,
                          module.levels)


def generate(source: ModelSource) -> tuple[str, dict]:
    """(the text of model.py, its state dict) for the source's net and weights."""
    writer = _Writer(source)
    return writer.emit(), writer.weights
