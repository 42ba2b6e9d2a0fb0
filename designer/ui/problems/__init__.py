"""The Problems dock: every error and warning in words, one-click fixes, and the smoke step
that runs the net on a real batch after each edit."""
from .panel import ProblemsPanel
from .smoke import SmokeChecker

__all__ = ["ProblemsPanel", "SmokeChecker"]
