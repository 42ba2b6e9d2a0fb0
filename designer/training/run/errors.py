"""The error a run that cannot go on raises (its own module, so that the loop, the run folder
and the data-parallel machinery can all raise it without importing each other)."""
from __future__ import annotations


class TrainingError(Exception):
    """A run that cannot go on; ``str()`` is one sentence; ``code`` the CLI's exit code.

    ``shared`` is true when every process of a data-parallel run raised it together (they
    agreed on it), so one of them, rank 0, is enough to tell the user.
    """

    def __init__(self, message: str, code: int = 1, shared: bool = False):
        super().__init__(message)
        self.code = code
        self.shared = shared
