"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace`` (or,
where nothing may be replaced, a hard link that fails when the name is taken).

A crash or a full disk mid-write leaves the old file as it was.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike, data: bytes, replace: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    ``replace`` off: raise ``FileExistsError`` when ``path`` exists, even when it is made
    while ``data`` is written, and leave it as it is."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            try:
                os.chmod(tmp, path.stat().st_mode & 0o777)
            except OSError:
                pass
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        if replace:
            os.replace(tmp, path)
        else:
            _create(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


def atomic_write_text(path: str | os.PathLike, text: str, replace: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), replace)


def _create(tmp: str, path: Path) -> None:
    """The finished ``tmp`` as ``path``, which must not exist: a hard link, which fails when
    the name is taken where a rename would replace it; then ``tmp`` goes."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: look, then rename
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
