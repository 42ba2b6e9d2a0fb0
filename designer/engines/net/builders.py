"""The builder registry: one function ``BuildContext -> nn.Module`` per layer type id.

The layer modules (``layers``, ``conv``, ``norm``...) and each recurrent cell's engines
(imported when first needed: :mod:`designer.graph.parts`) register their builders here with
:func:`builder`; ``build.Net`` looks them up with :func:`builder_for`. Keeping the
registry apart lets ``build`` import the layer modules at the top without an import loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from torch import nn

from designer.graph import parts
from designer.graph.cell import article
from designer.graph.elements import Layer
from designer.graph.once import put
from designer.graph.shapes import LayerInfo


class BuildError(Exception):
    """The graph cannot be built into a module; ``str()`` says why, for a user."""


@dataclass
class BuildContext:
    """What a builder sees: the layer, its resolved parameters and inferred shapes."""

    name: str
    layer: Layer
    params: dict
    info: LayerInfo
    dims: dict
    extra: dict = field(default_factory=dict)

    def input_shape(self, i: int = 0) -> tuple:
        return self.info.inputs[i].shape

    def input_size(self) -> int:
        """The size of a step of the first input (a recurrent layer's E, of (T, N, E))."""
        return self.int_dim(self.input_shape()[2], "the input size")

    def int_dim(self, value, what: str) -> int:
        if isinstance(value, int):
            return value
        raise BuildError(f"{self.name}: {what} is '{value}', which is not known yet; make the "
                         "data readable so that the designer can work it out")


BUILDERS: dict[str, Callable[[BuildContext], nn.Module]] = {}


def builder(*type_ids: str):
    """Register a function ``BuildContext -> nn.Module`` for the given layer type ids."""
    def register(fn):
        for t in type_ids:
            put(BUILDERS, t, fn, "the builder")
        return fn
    return register


def build_unrolled(ctx: BuildContext) -> nn.Module:
    """A recurrent layer as its unrolled net (the CAFFE engine), node by node, for the cells
    whose unrolled layer is :class:`designer.engines.unrolled.UnrolledRecurrent`."""
    # imported when first built: the unrolled net's module imports modules that register here
    from designer.engines.unrolled import UnrolledRecurrent
    return UnrolledRecurrent.from_params(ctx.layer.type, ctx.input_size(), ctx.params,
                                         name=ctx.name)


def builder_for(type_id: str) -> Callable[[BuildContext], nn.Module]:
    """The builder of ``type_id`` layers, once every cell's engines have registered theirs;
    ``BuildError`` naming the type when none is registered."""
    parts.need(parts.ENGINES)
    try:
        return BUILDERS[type_id]
    except KeyError:
        raise BuildError(f"no engine can build {article(type_id)} layer") from None
