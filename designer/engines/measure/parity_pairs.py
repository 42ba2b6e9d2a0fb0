"""What ``parity`` compares for each recurrent layer type: the registry of parity pairs.

A pair is the module of one of the layer's engines (its fused engine, say) against its
unrolled net's, both built by the builder registry from the same parameters and holding the
same weights (converted where the engines hold different tensors). Each cell registers its
pair with :func:`parity_pair` from its ``engines/readings`` module; a cell that registers
none is compared on its own fused engine (``CellSpec.fused``) with every default below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from torch import nn

from designer.graph import parts, registry
from designer.graph.cell import article
from designer.graph.elements import Layer
from designer.graph.shapes import LayerInfo
from designer.graph.spec import TensorInfo

from designer.engines.net.builders import BUILDERS, BuildContext, BuildError


def _ran(m: nn.Module) -> str:
    return m.ran


@dataclass(frozen=True)
class ParityPair:
    """What parity compares for one layer type.

    Attributes
    ----------
    engine
        The engine compared with the unrolled net (``CAFFE``: the unrolled net's fused steps,
        against its node-by-node executor).
    says
        ``module -> words``: what computed the engine's last call (by default its ``ran``).
    padding, label
        The engine's name in the differences at padded steps, and in a step-by-step
        comparison (inspect's).
    reference_label
        The unrolled side's name in a step-by-step comparison.
    reference_first
        A step-by-step comparison lists the unrolled side first.
    reference_steps
        The unrolled side may run its fused steps (False: always node by node).
    carries
        The layer's parameters, beyond its sizes, that both sides are built with.
    spread
        The weights are drawn uniformly from ``[-spread, spread)``.
    grads
        ``(kind, grads, levels) -> grads``: the engine's parameter gradients in the unrolled
        net's layout, where the two hold different tensors.
    start
        ``states -> states``: a drawn starting state made one the layer can hold.
    settings
        ``steps -> {attribute: value}`` set on the engine's module for a layer of that many
        steps (``layer_parity``), e.g. a chunk length that crosses chunks.
    """

    engine: str
    says: Callable[[nn.Module], str] = _ran
    padding: str = "fused"
    label: str = ""
    reference_label: str = "unrolled"
    reference_first: bool = False
    reference_steps: bool = True
    carries: tuple = ()
    spread: float = 0.1
    grads: Callable[[str, dict, int], dict] | None = None
    start: Callable[[list], list] | None = None
    settings: Callable[[int], dict] | None = None

    def engine_words(self, m: nn.Module) -> str:
        """``ENGINE: what computed it``, for the engine's module."""
        return f"{self.engine}: {self.says(m)}"


PARITY_PAIRS: dict[str, ParityPair] = {}


def parity_pair(*kinds: str, **facts) -> ParityPair:
    """Register the :class:`ParityPair` made of ``facts`` for each of ``kinds``."""
    pair = ParityPair(**facts)
    for kind in kinds:
        PARITY_PAIRS[kind] = pair
    return pair


def pair_of(kind: str) -> ParityPair:
    """The pair parity compares for ``kind``; ``ValueError`` (one sentence) when there is
    none (not a recurrent type, or one with no engine but its unrolled net)."""
    parts.need(parts.ENGINES)
    pair = PARITY_PAIRS.get(kind)
    if pair is not None:
        return pair
    cell = registry.cell(kind)
    if cell is None or not cell.fused:
        raise ValueError(f"{article(kind)} layer has no second engine to compare with its "
                         "unrolled net")
    return ParityPair(cell.fused)


def build(kind: str, params: dict, input_size: int, name: str = "rnn") -> nn.Module:
    """The module the builder registry makes of a ``kind`` layer with ``params`` (over its
    spec's defaults; ``engine`` picks which) reading ``input_size`` features."""
    from designer.engines.net import build as _builders  # noqa: F401  (every builder registered
    parts.need(parts.ENGINES)
    p = {**registry.get(kind).defaults(), **params}
    info = LayerInfo(inputs=[TensorInfo(("T", "N", input_size))])
    try:
        make = BUILDERS[kind]
    except KeyError:
        raise BuildError(f"{name}: no engine can build {article(kind)} layer") from None
    return make(BuildContext(name, Layer(name, kind, p), p, info, {}))
