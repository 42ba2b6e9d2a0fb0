"""The data of an unrolled net: its nodes (:class:`Node`) and the whole (:class:`Expansion`),
as :mod:`designer.engines.expansion` and :mod:`designer.cells.mlstm.engines.unrolled` build them."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Node:
    """One layer of the unrolled net.

    ``bottoms`` and ``tops`` name blobs (see ``Expansion.shapes``); ``step`` is the 1-based time
    step (``None`` for the once-per-layer nodes); ``level`` the stacked layer (0-based);
    ``direction`` 0 forward, 1 the backward chain of a bidirectional layer.
    """

    name: str
    type: str
    bottoms: tuple
    tops: tuple
    step: int | None = None
    level: int = 0
    params: dict = field(default_factory=dict, compare=False, hash=False)
    direction: int = 0


@dataclass
class Expansion:
    """The unrolled net of one recurrent layer: its nodes in execution order and blob shapes."""

    layer: str
    kind: str
    steps: int
    batch: object
    hidden: int
    levels: int
    nodes: list
    shapes: dict          # blob -> shape tuple (ints or dim names)
    inputs: tuple         # blobs fed from outside: x, cont, and the initial states per level
    outputs: tuple        # the blob holding the output sequence, and the final states
    weights: dict         # weight name -> shape
    directions: int = 1   # 2: bidirectional (a backward chain per level)

    @property
    def chains(self) -> int:
        """How many chains of steps (bands in the view): levels x directions."""
        return self.levels * self.directions

    def chain_of(self, node: Node) -> int:
        """The chain a node belongs to: ``level * directions + direction``."""
        return node.level * self.directions + node.direction

    def counts(self) -> dict:
        """How many nodes of each type."""
        return dict(Counter(n.type for n in self.nodes))

    def edges(self) -> list[tuple[str, str, str]]:
        """(producer node, consumer node, blob) for every blob passed between nodes."""
        producer = {}
        for n in self.nodes:
            for t in n.tops:
                producer[t] = n.name
        out = []
        for n in self.nodes:
            for b in n.bottoms:
                if b in producer:
                    out.append((producer[b], n.name, b))
        return out

    def step_nodes(self, step: int, level: int = 0, direction: int = 0) -> list[Node]:
        return [n for n in self.nodes if n.step == step and n.level == level
                and n.direction == direction]

    def to_json(self) -> dict:
        edges = self.edges()
        return {
            "layer": self.layer,
            "type": self.kind,
            "steps": self.steps,
            "levels": self.levels,
            "directions": self.directions,
            "node_count": len(self.nodes),
            "edge_count": len(edges),
            "counts": self.counts(),
            "weights": {k: list(v) for k, v in self.weights.items()},
            "nodes": [
                {"name": n.name, "type": n.type, "step": n.step, "level": n.level,
                 "direction": n.direction, "bottoms": list(n.bottoms), "tops": list(n.tops),
                 "bottom_shapes": [list(self.shapes[b]) for b in n.bottoms],
                 "top_shapes": [list(self.shapes[t]) for t in n.tops]}
                for n in self.nodes
            ],
        }


def step_rails(add, shapes: dict, p: str, s: str, bottom: str, g: int, steps: int, n,
               lengths: bool, weights: tuple[str, str]) -> dict:
    """The input transform of all steps as one INNER_PRODUCT (``weights``: W_xc and b_c,
    ``g`` outputs, ``n`` sequences), then that, ``cont`` and (with ``lengths``) ``valid`` sliced into one blob a
    step; returns ``{rail: (its blob at step 1, 2, ...)}``. ``p`` and ``s``: the level's
    prefix and the direction's suffix of every name."""
    xt = f"{p}W_xc_x{s}"
    shapes[xt] = (steps, n, g)
    add(f"{p}x_transform{s}", "INNER_PRODUCT", (bottom,), (xt,), None,
        {"num_output": g, "axis": 2, "bias_term": True, "weights": weights})
    rails = {"W_xc_x": xt, "cont": "cont"}
    if lengths:
        rails["valid"] = "valid"
    per_step = {}
    for rail, blob in rails.items():
        tops = tuple(f"{p}{rail}_{t}{s}" for t in range(1, steps + 1))
        for b in tops:
            shapes[b] = (1,) + tuple(shapes[blob][1:])
        add(f"{p}{rail}_slice{s}", "SLICE", (blob,), tops, None, {"axis": 0})
        per_step[rail] = tops
    return per_step
