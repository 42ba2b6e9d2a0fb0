"""Where the unrolled net's nodes go, computed directly: time steps are columns.

Per stacked layer (a band, top to bottom): the input transform on the left feeds two SLICE
rails running over every step column (the per-step input transforms and the continuation
flags); each step column holds the step's SCALE, INNER_PRODUCT, ELTWISE and unit in rows; the
CONCAT rail below gathers the step outputs. A collapsed step is one narrow box per band.

Pure Python (no Qt), so it is cheap and testable; ``edge_points`` routes an edge as a polyline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

NODE_W, NODE_H = 132.0, 42.0
GUTTER = 36.0                 # left of every step column: lanes for edges coming down or across
COL_W = NODE_W + GUTTER
COLLAPSED_W = 46.0
ROW_H = 58.0
RAIL_H, RAIL_GAP = 20.0, 8.0
HEADER_H = 22.0
INPUT_X, ONCE_X, STEPS_X = 0.0, 170.0, 330.0
BAND_GAP = 50.0
TOP = 0.0


@dataclass
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h


@dataclass
class UnrolledLayout:
    """Boxes for every node and input blob of an expansion.

    ``kinds`` says how each is drawn (``node``, ``rail`` or ``input``); nodes of a collapsed step
    keep a box (for their row) but are listed in ``hidden`` and drawn as their ``groups`` box.
    """

    boxes: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    rail_index: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)      # (level, step) -> Box
    group_of: dict = field(default_factory=dict)    # node -> (level, step)
    rows: dict = field(default_factory=dict)        # node -> row within its step
    hidden: set = field(default_factory=set)
    columns: dict = field(default_factory=dict)     # step -> (x, width)
    collapsed: set = field(default_factory=set)
    captions: list = field(default_factory=list)   # (x, y, text): the band of each layer
    width: float = 0.0
    height: float = 0.0

    def anchor(self, name: str) -> Box:
        """The box an edge to ``name`` attaches to (its step's box when collapsed)."""
        if name in self.hidden:
            return self.groups[self.group_of[name]]
        return self.boxes[name]


def input_name(blob: str) -> str:
    return "in:" + blob


def default_collapsed(steps: int) -> set[int]:
    """Show the first three steps and the last one; collapse the rest (long sequences)."""
    if steps <= 6:
        return set()
    return set(range(4, steps))


def _level_of(blob: str) -> int:
    if blob.startswith("L") and "/" in blob:
        head = blob.split("/", 1)[0][1:]
        if head.isdigit():
            return int(head)
    return 0


def layout(exp, collapsed: set[int] | None = None) -> UnrolledLayout:
    """Place every node of ``exp`` (an ``Expansion``); steps in ``collapsed`` are folded."""
    collapsed = set(collapsed or ()) & set(range(1, exp.steps + 1))
    out = UnrolledLayout(collapsed=collapsed)
    x = STEPS_X
    for t in range(1, exp.steps + 1):
        w = COLLAPSED_W if t in collapsed else COL_W
        out.columns[t] = (x, w)
        x += w
    right = x + 12
    per_step: dict = {}
    for n in exp.nodes:
        if n.step is not None:
            per_step.setdefault((n.level, n.step), []).append(n)
    rows = max((len(v) for v in per_step.values()), default=1)
    group_h = HEADER_H + (rows - 1) * ROW_H + NODE_H + 10
    band_h = 2 * (RAIL_H + RAIL_GAP) + 6 + group_h + 16 + RAIL_H + BAND_GAP
    for lv in range(exp.levels):
        y0 = TOP + lv * band_h
        gy = y0 + 2 * (RAIL_H + RAIL_GAP) + 6
        concat_y = gy + group_h + 16
        if exp.levels > 1:
            out.captions.append((INPUT_X, gy, f"LAYER {lv + 1} OF {exp.levels}"))
        for t, (cx, cw) in out.columns.items():
            if t in collapsed:
                out.groups[(lv, t)] = Box(cx + 8, gy, cw - 12, group_h)
            else:
                out.groups[(lv, t)] = Box(cx + GUTTER - 8, gy, NODE_W + 16, group_h)
        slices = 0
        for n in exp.nodes:
            if n.level != lv:
                continue
            if n.step is not None:
                row = per_step[(lv, n.step)].index(n)
                cx, cw = out.columns[n.step]
                out.boxes[n.name] = Box(cx + GUTTER, gy + HEADER_H + row * ROW_H, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
                out.rows[n.name] = row
                out.group_of[n.name] = (lv, n.step)
                if n.step in collapsed:
                    out.hidden.add(n.name)
            elif n.type == "SLICE":
                y = y0 + slices * (RAIL_H + RAIL_GAP)
                out.boxes[n.name] = Box(STEPS_X - 4, y, right - STEPS_X + 4, RAIL_H)
                out.kinds[n.name] = "rail"
                out.rail_index[n.name] = slices
                slices += 1
            elif n.type == "CONCAT":
                out.boxes[n.name] = Box(STEPS_X - 4, concat_y, right - STEPS_X + 4, RAIL_H)
                out.kinds[n.name] = "rail"
            elif n.type == "DROPOUT":
                out.boxes[n.name] = Box(ONCE_X, concat_y + RAIL_H / 2 - NODE_H / 2, NODE_W,
                                        NODE_H)
                out.kinds[n.name] = "node"
            else:  # the input transform, level with the first rail
                out.boxes[n.name] = Box(ONCE_X, y0 + RAIL_H / 2 - NODE_H / 2, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
        first = {}
        for n in per_step.get((lv, 1), []):
            for b in n.bottoms:
                first.setdefault(b, out.boxes[n.name])
        for blob in exp.inputs:
            if _level_of(blob) != lv and blob not in ("x", "cont"):
                continue
            if blob in ("x", "cont") and lv > 0:
                continue
            if blob == "x":
                y = y0 + RAIL_H / 2
            elif blob == "cont":
                y = y0 + RAIL_H + RAIL_GAP + RAIL_H / 2
            elif blob in first:
                y = first[blob].cy
            else:
                continue
            out.boxes[input_name(blob)] = Box(INPUT_X, y - 12, 150, 24)
            out.kinds[input_name(blob)] = "input"
    out.width = right + 20
    out.height = TOP + exp.levels * band_h - BAND_GAP + 20
    return out


def edge_points(lay: UnrolledLayout, boxes: dict, src: str, dst: str) -> list | None:
    """The polyline of an edge from ``src`` to ``dst`` (``None`` when both are folded into the
    same collapsed step). ``boxes`` holds the current boxes (nodes may have been dragged)."""
    def anchor(name):
        return lay.groups[lay.group_of[name]] if name in lay.hidden else boxes[name]

    a, b = anchor(src), anchor(dst)
    if a is b:
        return None
    ka, kb = lay.kinds.get(src, "input"), lay.kinds.get(dst, "node")
    ya = boxes[src].cy if src in lay.hidden or ka != "rail" else a.cy
    yb = boxes[dst].cy if dst in lay.hidden or kb != "rail" else b.cy
    if ka == "rail" and src in lay.rail_index:  # a SLICE rail feeding a step below it
        if b.y >= a.bottom - 1 and a.x <= b.cx <= a.right:
            if dst in lay.hidden or lay.rows.get(dst) == 0:
                return [(b.cx, a.bottom), (b.cx, b.y)]
            xg = b.x - (12 + 8 * (1 - lay.rail_index[src]))
            return [(xg, a.bottom), (xg, yb), (b.x, yb)]
    if ka == "rail":  # the CONCAT rail feeding what comes after it, to its left
        if abs(a.cy - b.cy) < 1:
            return [(a.x, a.cy), (b.right, b.cy)]
        return [(a.x, a.cy), (b.cx, a.cy), (b.cx, b.y)]
    if kb == "rail" and dst not in lay.rail_index:  # into the CONCAT rail below
        return [(a.cx, a.bottom), (a.cx, b.y)]
    if kb == "rail":  # into a SLICE rail from its left
        if abs(ya - b.cy) < 1:
            return [(a.right, ya), (b.x, b.cy)]
        xm = b.x - 14
        return [(a.right, ya), (xm, ya), (xm, b.cy), (b.x, b.cy)]
    if abs(a.cx - b.cx) < 1 and b.y >= a.bottom:  # down the same column
        if b.y - a.bottom <= ROW_H - NODE_H + 1 or src not in lay.rows:
            return [(a.cx, a.bottom), (b.cx, b.y)]
        xr = a.right + 10
        return [(a.right, ya), (xr, ya), (xr, yb), (b.right, yb)]
    if b.x >= a.right - 1:  # to the right: straight, or round the gutter before ``dst``
        if abs(ya - yb) < 1:
            return [(a.right, ya), (b.x, yb)]
        xg = b.x - 28 if b.x - 28 > a.right + 2 else (a.right + b.x) / 2
        return [(a.right, ya), (xg, ya), (xg, yb), (b.x, yb)]
    return [(a.cx, a.bottom), (b.cx, b.y)]
