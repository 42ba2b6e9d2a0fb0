"""Fetching a named corpus into the user cache: checksummed, atomic, with progress.

Only entries of :data:`designer.graph.datasets.CATALOGUE` are ever downloaded. The bytes go to
a temporary file in the cache folder; only when their sha256 matches the catalogue's is the
file renamed into place, so the cache never holds half a corpus or the wrong one. Set
``RNN_DESIGNER_OFFLINE=1`` to never try the network.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

from designer.graph import datasets
from designer.graph.datasets import DATA_ENV, NamedData

from designer.training.data.errors import DataError

OFFLINE_ENV = "RNN_DESIGNER_OFFLINE"
CHUNK = 1 << 16
MAX_BYTES = 256 << 20        # no corpus in the catalogue comes near this
TIMEOUT_S = 30.0

Progress = Callable[[int, int], None]


def fetch(entry: NamedData, progress: Progress | None = None, timeout: float = TIMEOUT_S,
          opener: Callable | None = None) -> Path:
    """Download a catalogue entry into the cache and return its path there.

    Parameters
    ----------
    entry : NamedData
        The catalogue entry (its ``url``, ``sha256`` and ``filename``).
    progress : callable, optional
        Called as ``progress(done_bytes, total_bytes)`` as the bytes arrive; ``total_bytes``
        is 0 when the server does not say.
    timeout : float
        Seconds to wait for the server at each step.
    opener : callable, optional
        Stands in for ``urllib.request.urlopen`` (tests).

    Raises
    ------
    DataError
        No network, a server error, a short or oversized download, a checksum mismatch or a
        cache folder that cannot be written: one sentence saying what to do.
    """
    url = entry.url
    folder = datasets.cache_dir()
    dest = folder / entry.filename
    advice = f"download it yourself and set {DATA_ENV} to its folder"
    if os.environ.get(OFFLINE_ENV, "") not in ("", "0"):
        raise DataError(_unreachable(entry, f"downloads are off because {OFFLINE_ENV} is set",
                                     advice))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{entry.filename}.", suffix=".part", dir=folder)
    except OSError as e:
        raise DataError(f"{entry.name} could not be downloaded because the cache folder "
                        f"{folder} cannot be written ({e.strerror or e}): {advice}") from None
    try:
        digest = hashlib.sha256()
        done = total = 0
        with os.fdopen(fd, "wb") as out:
            with (opener or urllib.request.urlopen)(url, timeout=timeout) as response:
                total = _content_length(response)
                if progress:
                    progress(0, total)
                while chunk := response.read(CHUNK):
                    done += len(chunk)
                    if done > MAX_BYTES:
                        raise DataError(f"the download of {entry.name} from {url} was stopped "
                                        f"at {MAX_BYTES >> 20} MiB, far more than the corpus "
                                        f"holds: {advice}")
                    digest.update(chunk)
                    out.write(chunk)
                    if progress:
                        progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        if total and done != total:
            raise DataError(_unreachable(entry, f"the connection closed after {done:,} of "
                                                f"{total:,} bytes", advice))
        got = digest.hexdigest()
        if entry.sha256 and got != entry.sha256.lower():
            raise DataError(
                f"{entry.name} was downloaded from {url} but its checksum does not match "
                f"(sha256 {got[:16]}..., expected {entry.sha256[:16]}...), so it was not kept: "
                f"{advice}"
            )
        os.replace(tmp, dest)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
        raise DataError(_unreachable(entry, _reason(e, timeout), advice)) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def _unreachable(entry: NamedData, reason: str, advice: str) -> str:
    return (f"{entry.name} is not in {DATA_ENV} or the cache and could not be downloaded from "
            f"{entry.url} ({reason}): {advice}")


def _content_length(response) -> int:
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return max(0, int(value)) if value else 0
    except ValueError:
        return 0


def _reason(error: BaseException, timeout: float) -> str:
    """A few words for why a download failed."""
    if isinstance(error, urllib.error.HTTPError):
        return f"the server answered HTTP {error.code} {error.reason}"
    cause = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(cause, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s"
    if isinstance(cause, socket.gaierror):
        return "no network: the host name could not be resolved"
    strerror = getattr(cause, "strerror", None)
    if strerror and (isinstance(error, urllib.error.URLError) or
                     isinstance(cause, ConnectionError)):
        return f"no network: {strerror[:1].lower()}{strerror[1:]}"
    if strerror:
        return strerror[:1].lower() + strerror[1:]
    if isinstance(cause, str):
        return cause
    return str(cause) or type(cause).__name__
