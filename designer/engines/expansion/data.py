"""The data of an unrolled net: its nodes (:class:`Node`), the whole (:class:`Expansion`) and
one step of a chain as a cell adds its nodes to it (:class:`Step`), as
:mod:`designer.engines.expansion.expand` and the cells' own expansions build them."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

SUFFIXES = ("", "_reverse")  # of the blobs, nodes and weights of each direction


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
    ``g`` outputs, ``n`` sequences), then that, ``cont`` and (with ``lengths``) ``valid``
    sliced into one blob a step; returns ``{rail: (its blob at step 1, 2, ...)}``. ``p`` and ``s``: the level's
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


@dataclass(frozen=True)
class Step:
    """One step of a chain as a cell's step function sees it
    (:func:`designer.engines.expansion.expand.chain`): the blobs the step reads and those it must
    make, and helpers that add its nodes under the names every executor and export reads.

    The generic chain has added the step's SCALE (``h_conted``) and adds the HOLD after it
    (with lengths); the cell adds what lies between: its product of ``h_conted`` by its
    recurrent weights, the sum with the step's input transform ``x``, and its unit, which
    reads the states the step ``found`` and makes ``h`` and the ``made`` states.
    """

    add: Callable       # the expansion's add(name, type, bottoms, tops, step, params)
    shapes: dict        # blob -> shape, where a new blob's shape goes
    cell: object        # the layer's CellSpec
    params: dict        # the layer's effective parameters
    prefix: str         # the level's ("L1/"; "" for a single level)
    suffix: str         # the direction's ("", or "_reverse" for the backward chain)
    t: int              # this step, 1-based
    prev: int           # the step whose state it reads (0: the initial state)
    batch: object       # N
    rows: int           # G: the rows of W_xc (a block of H per gate)
    h_conted: str       # the h the step found, times its cont (1, N, H)
    x: str              # the step's slice of the input transform (1, N, G)
    cont: str           # the step's continuation flags (1, N)
    found: tuple        # the other states the step found (the cell's states after h)
    made: tuple         # the blobs of those states the step makes
    h: str              # the blob of the h the step makes

    def weight(self, stem: str) -> str:
        """The chain's weight ``stem`` (``W_hc`` -> ``L1/W_hc_reverse``)."""
        return f"{self.prefix}{stem}{self.suffix}"

    def product(self, node_type: str = "INNER_PRODUCT", weights: tuple = ("W_hc",)) -> str:
        """The node ``transform_t`` multiplying ``h_conted`` by ``weights`` (a matrix, and a
        bias when two); returns its top, ``W_hc_h_{prev}`` (1, N, G)."""
        top = f"{self.prefix}W_hc_h_{self.prev}{self.suffix}"
        self.shapes[top] = (1, self.batch, self.rows)
        names = tuple(self.weight(w) for w in weights)
        self.add(f"{self.prefix}transform_{self.t}{self.suffix}", node_type, (self.h_conted,),
                 (top,), self.t, {"num_output": self.rows, "axis": 2,
                                  "bias_term": len(names) > 1, "weights": names})
        return top

    def sum(self, product: str) -> str:
        """The ELTWISE ``gate_input_t``: ``product`` plus the step's input transform."""
        top = f"{self.prefix}gate_input_{self.t}{self.suffix}"
        self.shapes[top] = (1, self.batch, self.rows)
        self.add(top, "ELTWISE", (product, self.x), (top,), self.t, {"operation": "SUM"})
        return top

    def unit(self, node_type: str, bottoms: tuple, tops: tuple, params: dict | None = None):
        """The step's unit node ``unit_t`` of ``node_type``."""
        self.add(f"{self.prefix}unit_{self.t}{self.suffix}", node_type, bottoms, tops, self.t,
                 params)
