"""How the RG-LRU is read step by step (inspect) and what ``parity`` compares for it: its
recurrence gate r = sigmoid(W_a x + b_a) and input gate i = sigmoid(W_x x + b_x) from each
step's input transform ``W_xc_x_t`` (its first two blocks), and ``h_t``; parity compares the
SCAN engine (the linear scan, in chunks of a third of the steps, so that the check crosses
chunks) with the unrolled net."""
from __future__ import annotations

import torch

from designer.cells.rglru.spec import KIND
from designer.engines.measure.parity_pairs import parity_pair
from designer.engines.measure.readings import Level, LevelSteps, reading


@reading(KIND, gates=("r", "i"))
def _rglru(level: Level) -> LevelSteps:
    gates: dict = {"r": [], "i": []}
    for xw in level.each("W_xc_x"):
        r, i = torch.sigmoid(xw[:, :2 * level.hidden]).split(level.hidden, -1)
        gates["r"].append(r)
        gates["i"].append(i)
    return LevelSteps(level.level, gates, None, level.hs())


parity_pair(KIND, engine="SCAN", says=lambda m: f"the linear scan, chunks of {m.chunk} steps",
            padding="scan", label="linear scan",
            settings=lambda steps: {"chunk": max(2, steps // 3)})
