"""Where layers sit on the canvas: auto-layout in rows, and cards pulled apart where they clash.

Rows are networkx's topological generations (a layer sits one row below the deepest layer
feeding it); within a row, a few barycentre sweeps order the layers by the positions of their
neighbours, the usual layered (Sugiyama-style) heuristic. Pure networkx: the canvas (Ctrl+L)
and the prototxt importer both use it.

Every layer is drawn as a card of one size, ``CARD_W`` x ``CARD_H`` (the canvas draws what
this module says), plus ``MARGIN`` round it for its ports, badge and selection glow. A
project may place two cards closer than that (a hand-written file, or one made by another
version of the program): `spread_clashes` moves such cards apart sideways, the canvas does so
when it opens a project.
"""
from __future__ import annotations

import networkx as nx

CARD_W, CARD_H = 200.0, 60.0   # a layer's card on the canvas
MARGIN = 8.0                   # drawn beyond the card's edges: ports, the problem badge, the glow
GRID = 10.0                    # positions snap to this on the canvas
ROW = 110.0
COLUMN = 250.0
SWEEPS = 4
CLEAR_W = CARD_W + 2 * MARGIN  # closer than this side by side, two cards are drawn over each other
CLEAR_H = CARD_H + 2 * MARGIN


def snap(value: float) -> float:
    """``value`` on the canvas grid."""
    return GRID * round(value / GRID)


def layered_positions(graph) -> dict[str, tuple[float, float]]:
    """New top-left positions for every layer of ``graph``, on the grid."""
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
            out[n] = (snap(i * COLUMN - width / 2), snap(r * ROW))
    return out


def clashes(positions: dict) -> list[tuple[str, str]]:
    """The pairs of layers whose cards (with their margins) overlap, at ``positions``
    (name -> top-left)."""
    names = sorted(positions, key=lambda n: positions[n][1])
    out = []
    for i, a in enumerate(names):
        xa, ya = positions[a]
        for b in names[i + 1:]:
            xb, yb = positions[b]
            if yb - ya >= CLEAR_H:
                break
            if abs(xb - xa) < CLEAR_W:
                out.append((a, b))
    return out


def spread_clashes(graph) -> dict[str, tuple[float, float]]:
    """New positions for the layers whose cards clash with another's; the others stay.

    Cards whose heights overlap form a band (a row of the drawing); in a band, cards closer
    side by side than a card's width are spread ``COLUMN`` apart about where they were,
    keeping their order from left to right (ties in the graph's order), the way auto-layout
    spaces a row. Returns only the layers that move, positions on the grid.
    """
    names = graph.names()
    order = {n: i for i, n in enumerate(names)}
    pos = {n: tuple(float(v) for v in graph.layer(n).pos) for n in names}
    if not clashes(pos):
        return {}
    by_y = sorted(names, key=lambda n: (pos[n][1], order[n]))
    bands: list[list[str]] = []
    for n in by_y:
        if bands and pos[n][1] - pos[bands[-1][-1]][1] < CLEAR_H:
            bands[-1].append(n)
        else:
            bands.append([n])
    out = {}
    for band in bands:
        row = sorted(band, key=lambda n: (pos[n][0], order[n]))
        for names_, xs in _spread_row([pos[n][0] for n in row], row):
            for n, x in zip(names_, xs):
                if x != pos[n][0]:
                    out[n] = (x, pos[n][1])
    return out


def _spread_row(xs: list[float], names: list[str]):
    """Blocks of cards in one band, left to right: each block's cards ``COLUMN`` apart round
    the mean of where they were, merged with the block on its left while they would clash
    (pool-adjacent-violators). Yields ``(names, new x)`` per block that changed."""
    blocks: list[tuple[list[str], list[float]]] = []   # (names, original xs)

    def placed(block) -> list[float]:
        members, original = block
        if len(members) == 1:
            return list(original)
        centre = sum(original) / len(original)
        first = centre - (len(members) - 1) * COLUMN / 2
        return [snap(first + i * COLUMN) for i in range(len(members))]

    for n, x in zip(names, xs):
        blocks.append(([n], [x]))
        # a little more than a card apart, so that snapping to the grid cannot make a clash
        while len(blocks) > 1 and placed(blocks[-1])[0] - placed(blocks[-2])[-1] < \
                CLEAR_W + GRID:
            right = blocks.pop()
            left = blocks.pop()
            blocks.append((left[0] + right[0], left[1] + right[1]))
    for block in blocks:
        if len(block[0]) > 1:
            yield block[0], placed(block)
