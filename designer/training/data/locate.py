"""Where a data layer's file is: an explicit path, RNN_DESIGNER_DATA, the cache, a download."""
from __future__ import annotations

import os
from pathlib import Path

from designer.graph import datasets

from designer.training.data import download
from designer.training.data.errors import DataError


def locate(name: str, project_dir=None, override: str | os.PathLike | None = None,
           what: str = "file", progress=None, folder: bool = False) -> Path:
    """The path a data layer reads, found in the documented order.

    Parameters
    ----------
    name : str
        The layer's parameter: a path (absolute, or relative to the project's folder or the
        working folder) or a name looked up in ``RNN_DESIGNER_DATA`` and the user cache.
    project_dir : path, optional
        The project's folder.
    override : path, optional
        A path given on the command line (``--corpus``); it wins over ``name``. A catalogue
        name (``tinyshakespeare``) is accepted here too.
    what : str
        What the thing is, for messages ("corpus", "audio file", "MNIST folder").
    progress : callable, optional
        ``progress(done_bytes, total_bytes)`` while a named corpus downloads.
    folder : bool
        Whether a folder (not a file) is wanted.

    Raises
    ------
    DataError
        Not found (with every place looked), the wrong kind of thing, or a failed download.
    """
    if override is not None and str(override) != "":
        path = Path(os.path.expanduser(os.fspath(override)))
        if path.exists():
            return _check_kind(path, what, folder)
        if str(override) not in datasets.CATALOGUE:
            raise DataError(f"{path} does not exist (it was given as the {what})")
        name = str(override)
    if not str(name).strip():
        raise DataError(f"no {what} is set in the data layer")
    path = datasets.find_data(name, project_dir)
    if path is not None:
        return _check_kind(path, what, folder)
    entry = datasets.CATALOGUE.get(name)
    if entry is not None and entry.url:
        return download.fetch(entry, progress)
    raise DataError(f"the {what} " + datasets.not_found_message(name, project_dir))


def _check_kind(path: Path, what: str, folder: bool) -> Path:
    if folder and not path.is_dir():
        raise DataError(f"{path} is a file, not a folder (it was given as the {what})")
    problem = None if folder else datasets.not_regular(path)
    if problem:  # a named pipe, a device, a socket, a folder: never opened
        raise DataError(f"{problem} (it was given as the {what})")
    return path
