"""How often the live charts redraw: often enough to follow a run at any speed, and cheaply
enough that the trainer and the rest of the window never wait on them.

`RedrawPacer` is a token bucket of GUI-thread CPU time charged with the charts' own work only:
handing the curves their data (`ChartsPanel.refresh`) and painting the plots
(`PlotView.paintEvent`). It fills at ``BUDGET`` of a core; while it is empty the next redraw
waits, but never past ``MAX_LAG_S`` after the data it would show arrived. So cheap redraws run
at up to 10 Hz inside 5 % of a core, and costly ones (many runs, a wide window) still follow
the run about once a second.

The rest of the GUI thread's work (the log's surprise-coloured samples, the device panel,
the status bar) is none of the bucket's business: skipping a redraw does not make that work
any smaller, so charging it to the charts only stopped them while a fast run (a GPU's twenty
records a second) kept the thread busy.
"""
from __future__ import annotations

import time

import pyqtgraph as pg

BUDGET = 0.05                # share of a core the charts' own work may use...
MAX_LAG_S = 0.9              # ...unless that would leave them more than this behind the data
BURST_S = 0.05               # CPU seconds of credit the charts may save up,
DEBT_S = BUDGET * MAX_LAG_S  # and owe (one-off work, such as the first paint, is forgiven)


class RedrawPacer:
    """A token bucket of CPU seconds for the charts' own drawing.

    Parameters
    ----------
    budget
        The share of one core the bucket fills at.
    burst, debt
        The most CPU seconds of credit it saves up, and the most it lets the charts owe.
    """

    def __init__(self, budget: float = BUDGET, burst: float = BURST_S,
                 debt: float = DEBT_S) -> None:
        self.budget, self.burst, self.debt = budget, burst, debt
        self.credit = burst
        self.spent = 0.0            # CPU seconds charged in all (for benchmarks)
        self._at = time.perf_counter()

    def _fill(self) -> float:
        now = time.perf_counter()
        self.credit = min(self.burst, self.credit + self.budget * (now - self._at))
        self._at = now
        return now

    def charge(self, seconds: float) -> None:
        """The charts spent ``seconds`` of GUI-thread CPU time drawing."""
        self._fill()
        self.spent += seconds
        self.credit = max(-self.debt, self.credit - seconds)

    def wait_s(self) -> float:
        """Seconds until the credit is back to zero (0.0: the charts may draw now)."""
        self._fill()
        return max(0.0, -self.credit / self.budget)


class PlotView(pg.PlotWidget):
    """A plot widget that charges the CPU time of each of its paints to ``pacer``."""

    def __init__(self, pacer: RedrawPacer, parent=None, **kwargs) -> None:
        super().__init__(parent=parent, **kwargs)
        self.pacer = pacer

    def paintEvent(self, event) -> None:
        start = time.thread_time()
        try:
            super().paintEvent(event)
        finally:
            self.pacer.charge(time.thread_time() - start)
