"""The registry of readings: how each recurrent layer type's steps are read from its unrolled
net's blobs (:func:`designer.engines.measure.trace.trace_recurrent` runs the net, a reading reads it).

Each cell registers its reading with :func:`reading` from its ``engines/readings`` module:
which gates it reads, which of them lie in [-1, 1], how one level is read (:class:`Level`
gives its blobs by name and step), and which of the layer's parameters a module of it was
built with. Inspection shows what it reads (:mod:`designer.training.readout.inspect`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from designer.graph import parts
from designer.graph.cell import article


@dataclass
class LevelSteps:
    """One stacked level of a traced layer.

    Attributes
    ----------
    level : int
        0-based.
    gates : dict
        Gate name -> list over steps of (N, H) activations.
    c : list or None
        The cell state c_t of every step, (N, H) each (or what the cell reads as its
        memory, e.g. the norm of each head's matrix memory, (N, heads)); None without one.
    h : list
        The ``h_t`` blobs themselves, (1, N, H) each: differentiate a loss with respect to
        them for the gradient that reaches step t (through the output and the recurrence).
    n : list or None
        The normaliser n_t of every step, (N, H) each, for a cell that keeps one.
    """

    level: int
    gates: dict
    c: list | None
    h: list
    n: list | None = None


@dataclass
class LayerSteps:
    """Everything one traced recurrent layer did, level by level."""

    kind: str
    engine: str            # the engine the layer trains on
    hidden: int
    levels: list


@dataclass
class Level:
    """The blobs of one level of a traced layer, as a :class:`Reading` reads them.

    ``blobs`` holds every blob of the unrolled net (``x``, ``cont`` and each level's, named
    with its ``prefix``); ``params`` the layer's parameters (:func:`describe`)."""

    blobs: dict
    prefix: str
    level: int
    steps: int
    hidden: int
    params: dict

    def blob(self, name: str, t: int) -> torch.Tensor:
        """Step ``t``'s ``name`` blob of this level, (N, ...)."""
        return self.blobs[f"{self.prefix}{name}_{t}"][0]

    def each(self, name: str) -> list:
        """``name`` at every step 1..T."""
        return [self.blob(name, t) for t in range(1, self.steps + 1)]

    def hs(self) -> list:
        """The ``h_t`` blobs themselves, (1, N, H) each."""
        return [self.blobs[f"{self.prefix}h_{t}"] for t in range(1, self.steps + 1)]

    def cont(self, t: int) -> torch.Tensor:
        """Step ``t``'s continuation flags as (N, 1): 0 where the state restarts."""
        return self.blobs["cont"][t - 1].unsqueeze(-1)


@dataclass(frozen=True)
class Reading:
    """How a layer type's steps are read.

    Attributes
    ----------
    gates
        The gates read at every step, in order.
    read
        ``Level -> LevelSteps``: one level of a traced layer.
    params
        ``module -> dict``: the layer's parameters, beyond its sizes, that a module of the type
        was built with (what its unrolled net and its parity pair are built with again).
    tanh
        The gates whose values lie in [-1, 1] (the others in [0, 1]).
    """

    gates: tuple
    read: Callable[[Level], LevelSteps]
    params: Callable[[torch.nn.Module], dict] = lambda module: {}
    tanh: tuple = ()


READINGS: dict[str, Reading] = {}


def reading(*kinds: str, gates: tuple, tanh: tuple = (), params=None):
    """Register the decorated ``read(level) -> LevelSteps`` as the reading of ``kinds``."""
    def register(read):
        extra = {} if params is None else {"params": params}
        for kind in kinds:
            READINGS[kind] = Reading(tuple(gates), read, tanh=tuple(tanh), **extra)
        return read
    return register


def reading_of(kind: str) -> Reading:
    """The reading of a ``kind`` layer; ``TypeError`` (one sentence) when there is none."""
    parts.need(parts.ENGINES)
    try:
        return READINGS[kind]
    except KeyError:
        raise TypeError(f"{article(kind)} layer cannot be read step by step") from None
