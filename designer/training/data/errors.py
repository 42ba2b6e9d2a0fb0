"""The one exception data sources raise for bad input."""
from __future__ import annotations


class DataError(Exception):
    """A data file or folder that cannot be used.

    ``str()`` is one sentence that names the file and says the problem (and, where it helps,
    what to do); the CLI prints it and exits with status ``code`` (2).
    """

    code = 2
