"""A net as a standalone, readable PyTorch file: ``model.py`` plus ``weights.safetensors``.

The generated module is a plain ``nn.Module`` with one attribute per layer as drawn (a comment
names each), built from ``torch.nn`` alone: ``model.py`` imports torch and safetensors, never
rnn-designer. Each layer is written by the writer of its type (:mod:`pytorch_layers`); a
recurrent layer's is its cell's (``designer/cells/<cell>/exports/pytorch.py``): a torch.nn layer
whatever engine trained it, or, for a cell torch.nn lacks, a class of the cell's own written
into the file with the functions of its arithmetic (:mod:`pytorch_copies`).
``python model.py`` loads the weights and prints a test output.
"""
from __future__ import annotations

import json
import keyword
import os
import re
from pathlib import Path

from designer import __version__
from designer.graph.atomic import atomic_write_bytes, atomic_write_text
from designer.graph.shapes import resolve_params

from designer.exchange.errors import ExchangeError
from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.snippets import (data_constant, helper_names, helpers, imports,
                                                main_block)
from designer.exchange.source import ModelSource

RESERVED = {"self", "state", "new_state", "torch", "nn", "F", "tokens", "data", "cont", "Model",
            "load", "caffe_reshape", "Path", "VOCAB", "lengths", "sequence_last", "DATA",
            "test_input", "batch_norm", "conv_over_time", "sequence_pool", "math", "MiniRocket",
            "Hydra", "difference", "fitted_series"}
TRAINING_ONLY = ("SoftmaxWithLoss", "Accuracy", "EuclideanLoss", "L1Loss")


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
    if keyword.iskeyword(base) or base in RESERVED or base in helper_names():
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
        x = self._in(name)
        comment = f"# {name} ({layer.type})"
        write = LAYERS.of_type(layer.type, name)
        self._assign(name, var, layer, write(self, name, var, layer, module, p, x, comment))

    def _assign(self, name, var, layer, expr) -> None:
        outs = [port.name for port in layer.spec.outputs]
        if layer.spec.cell is not None:
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
        needs = imports(self.helpers)  # what the helpers read besides torch and nn
        lines = [f'"""{project.name}: exported by rnn-designer {__version__} as plain PyTorch.',
                 "",
                 "Run ``python model.py`` to load ``weights.safetensors`` (next to this file) and "
                 "print a test",
                 "output. Needs torch and safetensors only.",
                 "",
                 f"``Model()({args}, state)`` returns the output and the recurrent state of "
                 "every recurrent",
                 "layer (as its class gives it back: one tensor, or a tuple of the states it "
                 "carries); pass the",
                 "state back in to continue the sequences. Input layout: (T, N) ids or (T, N, F) "
                 "values, unless",
                 "a layer is batch-first.",
                 '"""',
                 *["import math"] * ("math" in needs), "from pathlib import Path", "",
                 "import torch"]
        if "F" in needs:
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


def generate(source: ModelSource) -> tuple[str, dict]:
    """(the text of model.py, its state dict) for the source's net and weights."""
    writer = _Writer(source)
    return writer.emit(), writer.weights
