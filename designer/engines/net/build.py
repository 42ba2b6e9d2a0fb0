"""Build a ``torch.nn.Module`` from a validated graph.

Each layer type id has one builder registered with :func:`builder` (a recurrent cell's by its
engines, when first needed: :mod:`designer.engines.net.builders`); :class:`Net` runs the built
layers in topological order, passing tensors along the graph's links. Recurrent layers carry
state: ``Net.forward`` takes and returns it, so text can be generated one step at a time and
contiguous batches can continue where the last one stopped.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from designer.graph import registry
from designer.graph.model import Graph
from designer.graph.shapes import resolve_params

from designer.engines.net import conv as _conv  # noqa: F401  (and of the convolution over time
# the builders of the plain layers register themselves on import
from designer.engines.net import layers as _layers  # noqa: F401
from designer.engines.net import pooling as _pooling  # noqa: F401  (and of pooling over time
from designer.engines.net import rocket as _rocket  # noqa: F401  (and of the random convolution
from designer.engines.net import hydra as _hydra  # noqa: F401  features, MiniRocket and Hydra)
from designer.engines.net import norm as _norm  # noqa: F401  (and of BatchNorm and LayerNorm
# (the recurrent cells' builders register when their engines are first needed: builder_for)
from designer.engines.net.builders import (BUILDERS, BuildContext, BuildError,  # noqa: F401
                                       builder, builder_for)  # (public here)
from designer.engines.net.layers import per_sample
from designer.engines.net.remembered import FittedFeatures, remembers
from designer.engines.tensors.recurrent_state import zero_state

CLASS_LOSSES = ("SoftmaxWithLoss",)
REGRESSION_LOSSES = ("EuclideanLoss", "L1Loss")
ENGINE_NAMES = {"auto": "AUTO", "cudnn": "CUDNN", "caffe": "CAFFE", "persist": "PERSIST",
                "AUTO": "AUTO", "CUDNN": "CUDNN", "CAFFE": "CAFFE", "PERSIST": "PERSIST"}


@dataclass
class NetOutput:
    """Every computed blob, keyed ``(layer, port)``, and the recurrent state after the batch."""

    blobs: dict
    state: dict

    def __getitem__(self, key: tuple[str, str]) -> torch.Tensor:
        return self.blobs[key]


class Net(nn.Module):
    """The module a graph describes.

    Parameters
    ----------
    graph
        A graph with no errors.
    engine
        ``None`` keeps each recurrent layer's own engine parameter; ``"auto"``, ``"cudnn"``,
        ``"caffe"`` or ``"persist"`` runs every recurrent layer on the engine its cell answers
        for it (:func:`designer.graph.registry.engine_for`: that engine, or the cell's own
        fused engine for all but ``"caffe"``).
    """

    def __init__(self, graph: Graph, engine: str | None = None) -> None:
        super().__init__()
        errors = graph.errors()
        if errors:
            raise BuildError(f"the net has {len(errors)} problem(s); the first: {errors[0]}")
        if engine is not None and engine not in ENGINE_NAMES:
            raise BuildError(f"unknown engine '{engine}' (use auto, cudnn, caffe or persist)")
        self.order = graph.topological_order()
        self.types: dict[str, str] = {}
        self.ports: dict[str, list[str]] = {}
        self.wiring: dict[str, list] = {}
        self.engines: dict[str, str] = {}
        self.layers = nn.ModuleDict()
        for name in self.order:
            layer = graph.layer(name)
            spec = layer.spec
            params = resolve_params(spec, layer.params, graph.dims)
            cell = registry.cell(layer.type)
            if engine is not None and layer.type in registry.engine_kinds():
                params["engine"] = registry.engine_for(layer.type, ENGINE_NAMES[engine])
            if cell is not None:
                self.engines[name] = params.get("engine", cell.engines[0])
            ctx = BuildContext(name, layer, params, graph.info(name), dict(graph.dims))
            try:
                make = builder_for(layer.type)
            except BuildError as e:
                raise BuildError(f"{name}: {e}") from None
            self.layers[name] = make(ctx)
            self.types[name] = layer.type
            self.ports[name] = [p.name for p in spec.outputs]
            wires = []
            for port in spec.inputs:
                link = graph.link_into(name, port.name)
                if link is None:
                    wires.append(None)
                else:
                    src_spec = graph.layer(link.src).spec
                    wires.append((link.src, src_spec.output_index(link.src_port)))
            self.wiring[name] = wires
        self.sources = [n for n in self.order if graph.layer(n).spec.is_source]
        self.losses = [n for n in self.order
                       if self.types[n] in CLASS_LOSSES + REGRESSION_LOSSES]
        self.regressions = [n for n in self.losses if self.types[n] in REGRESSION_LOSSES]
        self.metrics = [n for n in self.order if self.types[n] == "Accuracy"]
        self.recurrent = list(self.engines)  # the recurrent layers, in order
        # layers of fixed features (MiniRocket, Hydra) that read the data alone: :meth:`stage`
        # runs them before a step
        self.staged = [n for n in self.order if isinstance(self.layers[n], FittedFeatures)
                       and all(w is None or w[0] in self.sources for w in self.wiring[n])]
        self._needed_cache: dict[tuple, list[str]] = {}
        self.register_buffer("unit_scale", torch.ones(1), persistent=False)

    # ------------------------------------------------------------------------------------
    def logits_source(self) -> tuple[str, int]:
        """``(layer, output index)`` feeding the first loss layer's logits (or, for a
        regression loss, its predictions)."""
        if not self.losses:
            raise BuildError("the net has no loss layer to read predictions from")
        return self.wiring[self.losses[0]][0]

    def set_unit_scale(self, scale: torch.Tensor) -> None:
        """How many of the target's own units one unit of a regression label is, per target
        (its last axis): :meth:`squared_error` then speaks in those units."""
        self.unit_scale = scale.to(self.unit_scale.device, torch.float32).reshape(-1)

    def squared_error(self, out: "NetOutput", loss: str) -> torch.Tensor:
        """The mean squared difference, in the target's units, between a regression loss
        layer's predictions and labels (a 0-dim tensor; the RMSE is its square root)."""
        (pred_at, label_at), axes = self.wiring[loss], self.layers[loss].batch_axes
        label = out.blobs[label_at].detach()
        diff = per_sample(out.blobs[pred_at].detach(), axes[0]) - per_sample(label, axes[1])
        if label.dim() and label.shape[-1] == self.unit_scale.numel():
            diff = (diff.reshape(label.movedim(axes[1] or 0, 0).shape) * self.unit_scale)
        return diff.square().mean()

    def initial_state(self, batch: int, device=None) -> dict:
        """Zero recurrent state for every recurrent layer (for carrying across batches)."""
        out = {}
        for name in self.recurrent:
            m = self.layers[name]
            p = next(m.parameters())
            if hasattr(m, "initial_state"):  # a state whose sizes are the module's to say
                out[name] = m.initial_state(batch, device or p.device, p.dtype)
                continue
            like = torch.empty(0, device=device or p.device, dtype=p.dtype)
            out[name] = zero_state(m.kind, m.state_layers, batch, m.hidden, like)
        return out

    def capture_blockers(self, carries_state: bool = True) -> list[str]:
        """Why a CUDA graph could not hold a step of this net (empty: it can).

        ``carries_state``: whether the step keeps the recurrent state (a carry between
        batches). Each recurrent module that needs the host for some input says why
        (``capture_blocker(cont, lengths, carries_state)``: a sentence after the layer's name,
        or ``None``); e.g. the cuDNN engine runs padded ``lengths`` on the device in a step that
        throws the state away, which a graph can hold, and packs them on the host in one that
        keeps it.
        """
        out = []
        for name in self.recurrent:
            blocker = getattr(self.layers[name], "capture_blocker", None)
            wires = self.wiring[name]
            why = None if blocker is None else blocker(
                cont=wires[1] is not None, lengths=len(wires) > 2 and wires[2] is not None,
                carries_state=carries_state)
            if why:
                out.append(f"{name} {why}")
        return out

    def stage(self, feeds: dict) -> dict:
        """``feeds`` with the outputs of the layers in ``staged`` added (``"rocket.y"``), which
        :meth:`forward` then takes as given. They learn nothing and read only the data, and
        the features of sequences read before come from their memory, which needs the host:
        run here, outside a training step, the step itself can be captured in a CUDA graph."""
        if not self.staged or not remembers():
            return feeds
        out = dict(feeds)
        for name in self.staged:
            ins = [None if w is None else feeds.get(f"{w[0]}.{self.ports[w[0]][w[1]]}")
                   for w in self.wiring[name]]
            out[f"{name}.{self.ports[name][0]}"] = self.layers[name](*ins)
        return out

    def needed(self, want: tuple[str, ...] | None) -> list[str]:
        """The layers (in order) that ``want`` depends on."""
        if want is None:
            return self.order
        key = tuple(want)
        if key not in self._needed_cache:
            need, stack = set(), list(want)
            while stack:
                n = stack.pop()
                if n in need:
                    continue
                need.add(n)
                stack.extend(w[0] for w in self.wiring[n] if w is not None)
            self._needed_cache[key] = [n for n in self.order if n in need]
        return self._needed_cache[key]

    def forward(self, feeds: dict, state: dict | None = None,
                want: tuple[str, ...] | None = None, recurrent=None) -> NetOutput:
        """Run the net.

        Parameters
        ----------
        feeds
            The data layers' outputs, keyed ``"layer.port"`` (e.g. ``"data.data"``); a missing
            optional feed (``"data.cont"``) is treated as "no resets".
        state
            Recurrent state per layer name, as returned by an earlier call (or ``None``: zeros).
        want
            Only compute what these layers need (``None``: everything).
        recurrent
            Runs each recurrent layer instead of calling it: ``recurrent(name, module, x,
            cont, state) -> (y, new_state)`` (``designer.training.readout.inspect`` reads its steps
            this way); ``None`` calls the module.
        """
        blobs: dict = {}
        new_state: dict = {}
        for name in self.needed(want):
            mod = self.layers[name]
            if name in self.sources or (name in self.staged
                                        and f"{name}.{self.ports[name][0]}" in feeds):
                outs = tuple(feeds.get(f"{name}.{p}") for p in self.ports[name])
            else:
                ins = [None if w is None else blobs[w] for w in self.wiring[name]]
                if name in self.recurrent:
                    lengths = ins[2] if len(ins) > 2 else None
                    st = None if state is None else state.get(name)
                    y, new_state[name] = (mod(ins[0], ins[1], st, lengths) if recurrent is None
                                          else recurrent(name, mod, ins[0], ins[1], st))
                    outs = (y,)
                else:
                    out = mod(*ins)
                    outs = out if isinstance(out, tuple) else (out,)
            for i, t in enumerate(outs):
                blobs[(name, i)] = t
        return NetOutput(blobs, new_state)

    def loss(self, out: NetOutput) -> torch.Tensor:
        """The training loss: the sum of the loss layers' outputs."""
        return sum(out.blobs[(n, 0)] for n in self.losses)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def detach_state(state: dict) -> dict:
    """The recurrent state with its history cut (truncated backprop between batches)."""
    def cut(x):
        if isinstance(x, torch.Tensor):
            return x.detach()
        if isinstance(x, (tuple, list)):
            return type(x)(cut(v) for v in x)
        return x
    return {k: cut(v) for k, v in state.items()}
