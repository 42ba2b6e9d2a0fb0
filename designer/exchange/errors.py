"""The one error the exchange package raises."""
from __future__ import annotations


class ExchangeError(Exception):
    """A model that cannot be exported or a file that cannot be imported.

    ``str()`` is one sentence naming the file (or layer) and the problem; the command line prints
    it and exits with ``code``.
    """

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def taken(path) -> ExchangeError:
    """``path`` is there already: an import writes a new project file, never over one."""
    return ExchangeError(f"{path} already exists; give another --out (nothing was written)")


def run_taken(run) -> ExchangeError:
    """``run`` is a file, or a folder that holds files: an import writes a new run folder."""
    if not run.is_dir():
        return ExchangeError(f"{run} is a file; give a new folder for the run")
    return ExchangeError(f"{run} already holds files; give a new folder for the run")
