"""The reference executor of the unrolled net: every node run as its own torch op, autograd
doing the backward pass. It is the definition the fast executors are checked against.

A node type's op is looked up in :data:`UNIT_OPS`. The generic node types (SCALE,
INNER_PRODUCT, ELTWISE, SLICE, CONCAT, DROPOUT, SEQUENCE_MASK, HOLD, TANH, RELU) register here;
a cell registers the nodes it adds to its steps (its units, its own products) with
:func:`unit_op` from its engines (:mod:`designer.graph.parts`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from designer.graph import parts
from designer.graph.once import put

from designer.engines.expansion.expand import SUFFIXES, Expansion, Node

REFERENCE = "the reference executor, node by node"  # what ran, in words (a module's ``ran``)


def weight_key(blob_weight: str) -> str:
    """Expansion weight name (``L1/W_hc``, ``W_hc_reverse``) -> parameter name (``W_hc_l1``,
    ``W_hc_l0_reverse``)."""
    level, _, name = blob_weight.rpartition("/")
    k = int(level[1:]) if level else 0
    name, reverse, _ = name.partition(SUFFIXES[1])
    return f"{name}_l{k}{reverse}"


@dataclass
class Run:
    """What a node's op reads besides its bottoms: the layer's weights (by parameter name),
    the blobs so far, whether it trains, and the threshold its units clip their gates'
    gradient at (0: none)."""

    weights: dict
    blobs: dict
    training: bool
    clip: float = 0.0

    def weight(self, blob_weight: str):
        """The tensor of an expansion weight (``L1/W_hc``)."""
        return self.weights[weight_key(blob_weight)]


UnitOp = Callable[[Node, list, Run], tuple]
UNIT_OPS: dict[str, UnitOp] = {}  # node type -> its op: op(node, bottoms, run) -> tops


def unit_op(*node_types: str):
    """Decorator: the op that runs the ``node_types`` nodes, ``op(node, bottoms, run)`` ->
    the tuple of its tops' values."""
    def register(op: UnitOp) -> UnitOp:
        for node_type in node_types:
            put(UNIT_OPS, node_type, op, "the unrolled op")
        return op
    return register


def run_reference(exp: Expansion, weights: dict, blobs: dict, training: bool,
                  clip: float = 0.0) -> dict:
    """Run every node of ``exp`` as its own op; ``blobs`` holds the inputs and gets the rest.

    ``weights`` holds the layer's tensors by parameter name (:func:`weight_key`); ``clip``
    the gate-gradient clipping threshold of the units that clip (0: none).
    """
    parts.need(parts.ENGINES)
    run = Run(weights, blobs, training, clip)
    for node in exp.nodes:
        op = UNIT_OPS.get(node.type)
        if op is None:
            raise ValueError(f"the unrolled executor cannot run a {node.type} node: no op is "
                             "registered for it")
        for name, value in zip(node.tops, op(node, [blobs[x] for x in node.bottoms], run)):
            blobs[name] = value
    return blobs


# -- the generic node types -----------------------------------------------------------------
@unit_op("INNER_PRODUCT")
def _inner_product(node: Node, b: list, run: Run) -> tuple:
    w = [run.weight(k) for k in node.params["weights"]]
    return (F.linear(b[0], w[0], w[1] if len(w) > 1 else None),)


@unit_op("SLICE")
def _slice(node: Node, b: list, run: Run) -> tuple:
    return b[0].split(1, dim=0)


@unit_op("SEQUENCE_MASK")
def _sequence_mask(node: Node, b: list, run: Run) -> tuple:
    steps = torch.arange(node.params["steps"], device=b[0].device)
    return ((steps.unsqueeze(1) < b[0].unsqueeze(0)).to(run.blobs["cont"].dtype),)


@unit_op("HOLD")
def _hold(node: Node, b: list, run: Run) -> tuple:
    """The new state where the step is valid, else the state it found."""
    keep = b[-1].unsqueeze(-1) > 0
    half = (len(b) - 1) // 2
    return tuple(torch.where(keep, new, old) for new, old in zip(b[:half], b[half:-1]))


@unit_op("SCALE")
def _scale(node: Node, b: list, run: Run) -> tuple:
    return (b[0] * b[1].unsqueeze(-1),)


@unit_op("ELTWISE")
def _eltwise(node: Node, b: list, run: Run) -> tuple:
    return (b[0] + b[1],)


@unit_op("TANH")
def _tanh(node: Node, b: list, run: Run) -> tuple:
    return (torch.tanh(b[0]),)


@unit_op("RELU")
def _relu(node: Node, b: list, run: Run) -> tuple:
    return (torch.relu(b[0]),)


@unit_op("CONCAT")
def _concat(node: Node, b: list, run: Run) -> tuple:
    return (torch.cat(b, node.params["axis"]),)


@unit_op("DROPOUT")
def _dropout(node: Node, b: list, run: Run) -> tuple:
    return (F.dropout(b[0], node.params["dropout_ratio"], run.training),)
