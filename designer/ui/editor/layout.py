"""Auto-layout for the canvas: the layered layout lives with the graph model (it is pure), and
so does the size of a layer's card, by which it spaces the layers."""
from designer.graph.layout import (CARD_H, CARD_W, CLEAR_H, CLEAR_W, COLUMN, GRID, ROW,
                                   clashes, layered_positions, spread_clashes)

__all__ = ["CARD_H", "CARD_W", "CLEAR_H", "CLEAR_W", "COLUMN", "GRID", "ROW", "clashes",
           "layered_positions", "spread_clashes"]
