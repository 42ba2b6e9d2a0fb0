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
