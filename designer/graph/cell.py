"""What a recurrent cell declares once, in its layer spec (``LayerSpec.cell``): its gates, the
state its chains carry, the engines it runs on and whose tensors each engine holds.

The memory rules, the unrolled expansion, parity, the exports, search's retyping, the engine
pickers and the window read these facts from here; a cell family's folder under
``designer/cells`` declares them and registers its spec (:func:`designer.graph.registry.register`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping


@dataclass(frozen=True)
class CellSpec:
    """The facts of one recurrent cell.

    Attributes
    ----------
    gates
        The blocks of the input transform ``W_xc``, in the unrolled net's order (one block of
        ``H`` rows each, unless ``rows`` says otherwise).
    states
        What each chain carries from one step to the next, in the order every engine, the
        checkpoints and the exports hold it (``("h", "c")``); each ``(levels x directions, N,
        size)``.
    engines
        The choices of the layer's ``engine`` parameter, the default first.
    holds
        Engine -> the engine whose tensors it holds (``{"AUTO": "CUDNN"}``); an engine not
        named holds its own. A checkpoint of one engine loads into every engine that holds
        the same tensors.
    fused
        The engine the layer runs on when a run asks every recurrent layer for an engine
        other than ``CAFFE`` (the unrolled net): its own fused engine. Empty: the engine
        asked for.
    fused_words
        That engine in a few words, as the engine pickers say where the layer runs ("the
        parallel scan", "its chunkwise form"); empty: "its own engine".
    unit
        The type of its unit node in the unrolled net (``LSTM_UNIT``).
    unit_flops
        Element-wise FLOPs of one unit step per hidden value (approximate).
    state_sizes
        ``params -> sizes``, one per state; by default each holds ``num_output`` values.
    """

    gates: tuple
    states: tuple = ("h",)
    engines: tuple = ("CAFFE",)
    holds: Mapping = field(default_factory=dict)
    fused: str = ""
    fused_words: str = ""
    unit: str = ""
    unit_flops: int = 0
    state_sizes: Callable[[dict], tuple] | None = None

    def sizes(self, params: dict) -> tuple:
        """The values per sequence of each state, for the layer's ``params``."""
        if self.state_sizes is not None:
            return tuple(self.state_sizes(params))
        return (params["num_output"],) * len(self.states)

    def layout(self, engine: str) -> str:
        """The engine whose tensors ``engine`` holds."""
        return self.holds.get(engine, engine)

    def runs_on(self, engine: str) -> str:
        """The engine this cell runs on when every recurrent layer is asked to run on
        ``engine`` (auto, cudnn, caffe, persist, in any case)."""
        engine = engine.upper()
        if self.fused and engine != "CAFFE":
            return self.fused
        return engine


def article(kind: str) -> str:
    """A layer type with its article, an acronym read letter by letter: 'an RBF', 'a ReLU',
    'an xLayer', 'a Conv1D', 'an Embed'."""
    spoken_vowel = "AEFHILMNORSX" if kind[1:2].isupper() else "AEIOU"
    return f"{'an' if kind[:1].upper() in spoken_vowel else 'a'} {kind}"
