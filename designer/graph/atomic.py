"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace`` (or,
where nothing may be replaced, a hard link that fails when the name is taken).

A crash or a full disk mid-write leaves the old file as it was. A process killed mid-write
leaves its temporary file, ``.<name>.<8 random characters>.tmp``, hidden beside the file;
`remove_leftovers` clears those from a folder that is opened again. A writer holds a lock on
its temporary file (``flock``) until the file is in place, so that a temporary file nobody
holds is known to be a leftover, never a write still under way.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no locks, an old temporary file is taken as left over
    fcntl = None

PREFIX, SUFFIX = ".", ".tmp"
# tempfile.mkstemp(prefix=".<name>.", suffix=".tmp"): its random part is 8 of [a-z0-9_]
TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
GRACE_S = 2.0         # younger than this, a temporary file may not be locked by its writer yet
UNLOCKED_S = 3600.0   # where files cannot be locked: a temporary file older is left over


def atomic_write_bytes(path: str | os.PathLike, data: bytes, replace: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    ``replace`` off: raise ``FileExistsError`` when ``path`` exists, even when it is made
    while ``data`` is written, and leave it as it is."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f"{PREFIX}{path.name}.", suffix=SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            held = _try_lock(f.fileno()) is True  # nobody else can hold a new file
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            _set_mode(tmp, path)
            if held:  # in place while still held (a file open cannot be renamed elsewhere)
                _place(tmp, path, replace)
        if not held:
            _place(tmp, path, replace)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


def atomic_write_text(path: str | os.PathLike, text: str, replace: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), replace)


def _place(tmp: str, path: Path, replace: bool) -> None:
    if replace:
        os.replace(tmp, path)
    else:
        _create(tmp, path)


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


def remove_leftovers(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files of atomic writes cut short in ``folder`` and the folders
    below it (not following links): the files named as `atomic_write_bytes` names them that
    no writer holds and that are older than `GRACE_S`. Returns those removed; a file that
    cannot be removed (a read-only folder) is left, silently."""
    removed = []
    for here, _, files in os.walk(folder):
        for name in files:
            if TEMP_NAME.fullmatch(name) and _remove_if_left(os.path.join(here, name)):
                removed.append(Path(here) / name)
    return removed


def _remove_if_left(path: str) -> bool:
    """Remove the temporary file ``path`` if its write was cut short."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # gone already (its write ended), or not ours to touch
        return False
    try:
        info = os.fstat(fd)
        age = time.time() - info.st_mtime
        if not stat.S_ISREG(info.st_mode) or age < GRACE_S:
            return False
        locked = _try_lock(fd)
        if locked is False or (locked is None and age < UNLOCKED_S):
            return False
        os.unlink(path)  # while holding its lock: no writer has it
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool | None:
    """Lock the open file ``fd`` without waiting: True when locked, False when another open
    file holds the lock, None where files cannot be locked."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks
        return None


def _set_mode(tmp: str, path: Path) -> None:
    """The new file's permissions: the old file's, else what the umask allows."""
    if path.exists():
        try:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        except OSError:
            pass
    else:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)


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
