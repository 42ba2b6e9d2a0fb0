"""Learning-rate schedules: fixed, step and cosine, each with an optional linear warm-up."""
from __future__ import annotations

import math


def learning_rate(step: int, solver: dict) -> float:
    """The learning rate for ``step`` (0-based) under the project's solver settings.

    The horizon of the cosine policy is ``max_steps``, whatever number of steps a run is asked
    to stop at, so a run that is stopped and resumed follows the same schedule.
    """
    base = solver["base_lr"]
    warm = solver["warmup_steps"]
    if warm and step < warm:
        return base * (step + 1) / warm
    policy = solver["lr_policy"]
    if policy == "fixed":
        return base
    if policy == "step":
        return base * solver["gamma"] ** (step // solver["stepsize"])
    if policy == "cosine":
        span = max(solver["max_steps"] - warm, 1)
        progress = min(max(step - warm, 0) / span, 1.0)
        low = base * solver["min_lr_ratio"]
        return low + (base - low) * 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"unknown lr_policy '{policy}'")
