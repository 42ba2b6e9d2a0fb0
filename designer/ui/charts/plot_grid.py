"""Where the training charts go in their grid, for the room they have: loss over accuracy and
RMSE on the left, learning rate over tokens/s on the right; where that would make a plot shorter
than ``ROW_MIN`` (a short dock on a laptop), all of them side by side in one row. The runs
table under them keeps ``TABLE_MIN`` where there is room for it and for a row of plots."""
from __future__ import annotations

ROW_MIN = 120     # a plot's least height stacked; shorter, the plots share one row
TABLE_MIN = 120   # the runs table's height (a header and three runs), where it fits
# ten rows: loss 10, or 6 over 4, or 4 over 3 and 3 (its plots below it); lr 5, tokens/s 5
SPANS = {0: [10], 1: [6, 4], 2: [4, 3, 3]}


def fits_stacked(height: int, below: int, spacing: int) -> bool:
    """Whether plots stacked in ``height`` (``below`` plots under the loss) would each be
    ``ROW_MIN`` tall: the smallest span's share of it."""
    least = min(SPANS[below] + [5]) / 10
    return least * height - spacing >= ROW_MIN


def place(grid, main: list, side: list, stacked: bool) -> None:
    """Put ``main`` (the loss and the plots under it) and ``side`` (learning rate, tokens/s)
    into ``grid``, stacked in two columns or side by side in one row."""
    for widget in main + side:
        grid.removeWidget(widget)
    for i in range(10):
        grid.setRowStretch(i, 0)
        grid.setColumnStretch(i, 0)
    if stacked:
        row = 0
        for widget, span in zip(main, SPANS[len(main) - 1]):
            grid.addWidget(widget, row, 0, span, 1)
            row += span
        for i, widget in enumerate(side):
            grid.addWidget(widget, 5 * i, 1, 5, 1)
        for r in range(10):  # the spans share the height in proportion
            grid.setRowStretch(r, 1)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        return
    for col, widget in enumerate(main + side):
        grid.addWidget(widget, 0, col)
        grid.setColumnStretch(col, 3 if col == 0 else 2)
    grid.setRowStretch(0, 1)


def table_height(height: int) -> int:
    """The runs table's share of the plots' and the table's ``height``."""
    if height >= TABLE_MIN + ROW_MIN:
        return max(TABLE_MIN, height // 5)
    return max(48, height // 3)
