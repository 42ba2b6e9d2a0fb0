"""Telling a run whose loss has risen far above its best and stays there (it diverged).

A non-finite loss stops a run (``nan_patience``); a loss that is finite but far above the best
it reached does not, yet the run is lost all the same, often for good (a learning rate too
high, gradient clipping off). :class:`DivergenceWatch` reads the logged training losses and
says so once per episode: when the loss has stayed above ``factor`` times its best for at
least ``steps`` steps. The run goes on (it may recover; the best checkpoint is kept).
"""
from __future__ import annotations

import math


class DivergenceWatch:
    """Feed it ``(step, loss)`` for each logged record; it answers a warning record once.

    Parameters
    ----------
    factor
        How many times its best the loss must be (0 turns the watch off).
    steps
        For how many steps in a row.
    """

    def __init__(self, factor: float = 5.0, steps: int = 100) -> None:
        self.factor, self.steps = factor, steps
        self.best = math.inf
        self.since: int | None = None  # the first logged step of the current episode
        self.warned = False

    def update(self, step: int, loss: float) -> dict | None:
        """The warning record when this loss completes an episode, else ``None``."""
        if not self.factor or not math.isfinite(loss):
            return None
        if loss <= self.factor * self.best:
            self.best = min(self.best, loss)
            self.since, self.warned = None, False  # back below: a later episode warns again
            return None
        if self.since is None:
            self.since = step
        if self.warned or step - self.since < self.steps:
            return None
        self.warned = True
        return {"kind": "warning", "step": step, "since": self.since, "loss": loss,
                "best_loss": self.best, "message": (
                    f"the loss has been above {self.factor:g} times its best ({self.best:.3f}) "
                    f"since step {self.since:,} (now {loss:.3f}): the run has probably "
                    "diverged; try a lower base_lr or gradient clipping (the best checkpoint "
                    "is kept)")}
