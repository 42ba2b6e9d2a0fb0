"""Auto-layout for the canvas: the layered layout lives with the graph model (it is pure)."""
from designer.graph.layout import COLUMN, ROW, layered_positions

__all__ = ["COLUMN", "ROW", "layered_positions"]
