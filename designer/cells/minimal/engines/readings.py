"""How MinGRU and MinLSTM are read step by step (inspect) and what ``parity`` compares for
them: their gates from each step's input transform ``W_xc_x_t`` (MinGRU: its first block gives
the update gate z = sigmoid(k); MinLSTM: the normalised forget and input gates f' and i' from
its first two) and ``h_t``; parity compares the SCAN engine (the parallel scan) with the
unrolled net."""
from __future__ import annotations

import torch

from designer.engines.measure.parity_pairs import parity_pair
from designer.engines.measure.readings import Level, LevelSteps, reading


@reading("MinGRU", gates=("z",))
def _min_gru(level: Level) -> LevelSteps:
    z = [torch.sigmoid(xw[:, :level.hidden]) for xw in level.each("W_xc_x")]
    return LevelSteps(level.level, {"z": z}, None, level.hs())


@reading("MinLSTM", gates=("f", "i"))
def _min_lstm(level: Level) -> LevelSteps:
    gates: dict = {"f": [], "i": []}
    for xw in level.each("W_xc_x"):
        f, i = torch.sigmoid(xw[:, :2 * level.hidden]).split(level.hidden, -1)
        gates["f"].append(f / (f + i))
        gates["i"].append(i / (f + i))
    return LevelSteps(level.level, gates, None, level.hs())


parity_pair("MinGRU", "MinLSTM", engine="SCAN", says=lambda m: "the parallel scan",
            padding="scan", label="parallel scan")
