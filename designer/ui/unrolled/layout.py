"""Where the unrolled net's nodes go, computed directly: time steps are columns.

Per chain of steps (a band, top to bottom: each stacked layer, and in it the forward then the
backward chain of a bidirectional layer): the input transform on the left feeds the SLICE rails
running over every step column (the per-step input transforms, the continuation flags and, for
padded sequences, the valid-step flags); each step column holds the step's SCALE,
INNER_PRODUCT, ELTWISE, unit (and HOLD) in rows; the CONCAT rail below gathers the step
outputs. A backward chain runs from the last column to the first: its initial state enters on
the right. What a layer does once after its chains (joining the directions, zeroing padded
steps, dropout) stacks on the left under the last band. A collapsed step is one narrow box per
band.

Pure Python (no Qt), so it is cheap and testable; ``edge_points`` routes an edge as a polyline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

NODE_W, NODE_H = 132.0, 42.0
GUTTER = 44.0                 # left of every step column: lanes for edges coming down or across
COL_W = NODE_W + GUTTER
COLLAPSED_W = 46.0
ROW_H = 58.0
RAIL_H, RAIL_GAP = 20.0, 8.0
HEADER_H = 22.0
INPUT_X, ONCE_X = 0.0, 190.0
STEPS_X = ONCE_X + NODE_W + 48.0
INPUT_W = 150.0
STACKED_INPUT = 28.0          # between initial states that enter the same node
INPUT_W_RIGHT = 180.0         # the backward chains' initial states (longer names), on the right
BAND_GAP = 50.0
TOP = 0.0
LANE_STEP = 34.0              # the lane of an edge from one step to the next, in the gutter
LANE_SKIP = ONCE_X - 12.0     # once-per-layer nodes passing others in their column
RAIL_LANES = (26.0, 18.0, 10.0)  # per SLICE rail: how far left of a step node its lane runs


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
    skip_lanes: dict = field(default_factory=dict)  # node -> x of its lane past other nodes
    backward: set = field(default_factory=set)      # bands of backward chains
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


def _caption(exp, level: int, direction: int) -> str | None:
    parts = [f"LAYER {level + 1} OF {exp.levels}"] if exp.levels > 1 else []
    if exp.directions == 2:
        parts.append("BACKWARD, STEP T TO 1" if direction else "FORWARD")
    return " \u00b7 ".join(parts) or None


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
    rails: dict = {}
    tails: dict = {}
    for n in exp.nodes:
        band = exp.chain_of(n)
        if n.step is not None:
            per_step.setdefault((band, n.step), []).append(n)
        elif n.type == "SLICE":
            rails.setdefault(band, []).append(n)
        elif n.type not in ("INNER_PRODUCT", "SEQUENCE_MASK") and not (
                n.type == "CONCAT" and n.params.get("axis") == 0):
            # after the chains: joining the directions, masking, dropout
            tails.setdefault(n.level, []).append(n)
    rows = max((len(v) for v in per_step.values()), default=1)
    group_h = HEADER_H + (rows - 1) * ROW_H + NODE_H + 10
    places: dict = {}   # band -> (y0, group y, concat y)
    y0 = TOP
    for band in range(exp.chains):
        lv, d = divmod(band, exp.directions)
        gy = y0 + len(rails.get(band, ())) * (RAIL_H + RAIL_GAP) + 6
        concat_y = gy + group_h + 16
        places[band] = (y0, gy, concat_y)
        extra = max(0, len(tails.get(lv, ())) - 1) * ROW_H if d == exp.directions - 1 else 0
        y0 = concat_y + RAIL_H + extra + BAND_GAP
    first: dict = {}    # input blob -> the box of the first step node reading it
    for band in range(exp.chains):
        y_top, gy, concat_y = places[band]
        lv, d = divmod(band, exp.directions)
        if d == 1:
            out.backward.add(band)
        caption = _caption(exp, lv, d)
        if caption:
            out.captions.append((INPUT_X, gy, caption))
        for t, (cx, cw) in out.columns.items():
            if t in collapsed:
                out.groups[(band, t)] = Box(cx + 8, gy, cw - 12, group_h)
            else:
                out.groups[(band, t)] = Box(cx + GUTTER - 8, gy, NODE_W + 16, group_h)
        for t in range(1, exp.steps + 1):
            for row, n in enumerate(per_step.get((band, t), ())):
                cx, cw = out.columns[t]
                out.boxes[n.name] = Box(cx + GUTTER, gy + HEADER_H + row * ROW_H, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
                out.rows[n.name] = row
                out.group_of[n.name] = (band, t)
                if t in collapsed:
                    out.hidden.add(n.name)
                for b in n.bottoms:
                    first.setdefault(b, out.boxes[n.name])
        for i, n in enumerate(rails.get(band, ())):
            out.boxes[n.name] = Box(STEPS_X - 4, y_top + i * (RAIL_H + RAIL_GAP),
                                    right - STEPS_X + 4, RAIL_H)
            out.kinds[n.name] = "rail"
            out.rail_index[n.name] = i
        for n in exp.nodes:
            if n.step is not None or exp.chain_of(n) != band:
                continue
            if n.type == "CONCAT" and n.params.get("axis") == 0:
                out.boxes[n.name] = Box(STEPS_X - 4, concat_y, right - STEPS_X + 4, RAIL_H)
                out.kinds[n.name] = "rail"
            elif n.type == "INNER_PRODUCT":  # the input transform, level with the first rail
                out.boxes[n.name] = Box(ONCE_X, y_top + RAIL_H / 2 - NODE_H / 2, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
            elif n.type == "SEQUENCE_MASK":  # level with the valid-steps rails
                y = y_top + 2 * (RAIL_H + RAIL_GAP) + RAIL_H / 2
                out.boxes[n.name] = Box(ONCE_X, y - NODE_H / 2, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
                out.skip_lanes[n.name] = LANE_SKIP - 8
        if d == exp.directions - 1:
            for i, n in enumerate(tails.get(lv, ())):
                y = concat_y + RAIL_H / 2 - NODE_H / 2 + i * ROW_H
                out.boxes[n.name] = Box(ONCE_X, y, NODE_W, NODE_H)
                out.kinds[n.name] = "node"
    y0 = places[0][0]
    fixed = {"x": 0, "cont": 1, "lengths": 2}
    sharing: dict = {}  # states entering the same node (a unit's several states): stacked
    for blob in exp.inputs:
        if blob in fixed:
            y = y0 + fixed[blob] * (RAIL_H + RAIL_GAP) + RAIL_H / 2
            bx = INPUT_X
            w = INPUT_W
        elif blob in first:
            k = sharing[id(first[blob])] = sharing.get(id(first[blob]), -1) + 1
            y = first[blob].cy + k * STACKED_INPUT
            # a backward chain starts at the last step: its initial state enters on the right
            left = first[blob].x < (STEPS_X + right) / 2
            bx, w = (INPUT_X, INPUT_W) if left else (right + 40, INPUT_W_RIGHT)
        else:
            continue
        out.boxes[input_name(blob)] = Box(bx, y - 12, w, 24)
        out.kinds[input_name(blob)] = "input"
    out.width = right + 20 + (40 + INPUT_W_RIGHT if exp.directions == 2 else 0)
    out.height = max(b.bottom for b in list(out.boxes.values()) + list(out.groups.values())) + 20
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
            xg = b.x - RAIL_LANES[min(lay.rail_index[src], len(RAIL_LANES) - 1)]
            return [(xg, a.bottom), (xg, yb), (b.x, yb)]
    if ka == "rail":  # the CONCAT rail feeding what comes after it, to its left
        if abs(a.cy - b.cy) < 1:
            return [(a.x, a.cy), (b.right, b.cy)]
        if b.right < a.x:  # down the lane between the once-per-layer nodes and the steps
            xl = a.x - 6
            return [(a.x, a.cy), (xl, a.cy), (xl, b.cy), (b.right, b.cy)]
        return [(a.x, a.cy), (b.cx, a.cy), (b.cx, b.y)]
    if kb == "rail" and dst not in lay.rail_index:  # into the CONCAT rail below
        return [(a.cx, a.bottom), (a.cx, b.y)]
    if kb == "rail":  # into a SLICE rail from its left
        if abs(ya - b.cy) < 1:
            return [(a.right, ya), (b.x, b.cy)]
        xm = b.x - 12 - 8 * lay.rail_index[dst]
        return [(a.right, ya), (xm, ya), (xm, b.cy), (b.x, b.cy)]
    if abs(a.cx - b.cx) < 1 and b.y >= a.bottom:  # down the same column
        if src not in lay.rows and _blocked(lay, boxes, src, dst, a, b):
            xl = lay.skip_lanes.get(src, LANE_SKIP)
            return [(a.x, ya), (xl, ya), (xl, yb), (b.x, yb)]
        if b.y - a.bottom <= ROW_H - NODE_H + 1 or src not in lay.rows:
            return [(a.cx, a.bottom), (b.cx, b.y)]
        xr = a.right + 10
        return [(a.right, ya), (xr, ya), (xr, yb), (b.right, yb)]
    if b.x >= a.right - 1:  # to the right: straight, or round the gutter before ``dst``
        if abs(ya - yb) < 1:
            return [(a.right, ya), (b.x, yb)]
        xg = b.x - LANE_STEP if b.x - LANE_STEP > a.right + 2 else (a.right + b.x) / 2
        return [(a.right, ya), (xg, ya), (xg, yb), (b.x, yb)]
    if b.right <= a.x + 1:  # to the left (a backward chain): the gutter after ``dst``
        if abs(ya - yb) < 1:
            return [(a.x, ya), (b.right, yb)]
        lane = b.right + GUTTER - LANE_STEP
        xg = lane if lane < a.x - 2 else (a.x + b.right) / 2
        return [(a.x, ya), (xg, ya), (xg, yb), (b.right, yb)]
    return [(a.cx, a.bottom), (b.cx, b.y)]


def _blocked(lay: UnrolledLayout, boxes: dict, src: str, dst: str, a: Box, b: Box) -> bool:
    """Whether another node sits between ``a`` and ``b`` in their column."""
    for name, box in boxes.items():
        if name not in (src, dst) and lay.kinds.get(name) == "node" and \
                abs(box.cx - a.cx) < 1 and a.bottom <= box.y < b.y:
            return True
    return False
