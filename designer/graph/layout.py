"""Auto-layout: layers in rows by their depth in the net, ordered to limit crossings.

Rows are networkx's topological generations (a layer sits one row below the deepest layer
feeding it); within a row, a few barycentre sweeps order the layers by the positions of their
neighbours, the usual layered (Sugiyama-style) heuristic. Pure networkx: the canvas (Ctrl+L)
and the prototxt importer both use it.
"""
from __future__ import annotations

import networkx as nx

ROW = 110.0
COLUMN = 250.0
SWEEPS = 4


def layered_positions(graph) -> dict[str, tuple[float, float]]:
    """New top-left positions for every layer of ``graph``."""
    g = nx.DiGraph()
    g.add_nodes_from(graph.names())
    g.add_edges_from((k.src, k.dst) for k in graph.links())
    rows = [sorted(gen, key=lambda n: (graph.layer(n).pos[0], graph.names().index(n)))
            for gen in nx.topological_generations(g)]
    index = {n: i for row in rows for i, n in enumerate(row)}
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        order = rows[1:] if down else list(reversed(rows[:-1]))
        for row in order:
            def key(n, row=row):
                near = list(g.predecessors(n)) if down else list(g.successors(n))
                return sum(index[m] for m in near) / len(near) if near else index[n]
            row.sort(key=key)
            for i, n in enumerate(row):
                index[n] = i
    out = {}
    for r, row in enumerate(rows):
        width = (len(row) - 1) * COLUMN
        for i, n in enumerate(row):
            out[n] = (round(i * COLUMN - width / 2), r * ROW)
    return out
