"""The error a run that cannot go on raises (its own module, so that the loop and what it
builds on can both raise it without importing each other)."""
from __future__ import annotations


class TrainingError(Exception):
    """A run that cannot go on; ``str()`` is one sentence; ``code`` the CLI's exit code."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code
