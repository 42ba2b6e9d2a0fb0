"""The Problems dock: every error and warning in words, one-click fixes, and the smoke step
that runs the net on a real batch after each edit."""
from designer.ui.problems.panel import ProblemsPanel
from designer.ui.problems.smoke import SmokeChecker

__all__ = ["ProblemsPanel", "SmokeChecker"]
