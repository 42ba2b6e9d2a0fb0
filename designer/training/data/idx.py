"""The IDX format of the MNIST files: a magic number, the dimensions, then the bytes."""
from __future__ import annotations

import gzip
import struct
import zlib
from pathlib import Path

import numpy as np

from designer.training.data.errors import DataError

IMAGES, LABELS = 2051, 2049      # ubyte data (0x08) with 3 and 1 dimensions
WHAT = {IMAGES: "images", LABELS: "labels"}


def read_idx(path: Path, magic: int) -> np.ndarray:
    """Read an IDX file of unsigned bytes (gzipped or not) as a uint8 array.

    Parameters
    ----------
    path : Path
    magic : int
        The magic number the file must have (2051 for images, 2049 for labels).

    Raises
    ------
    DataError
        An empty file, a damaged gzip stream, a wrong magic number or a file shorter than its
        header promises (one sentence naming the file).
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None
    if not raw:
        raise DataError(f"{path} is empty")
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as e:
            raise DataError(f"{path} is a damaged or truncated gzip file ({e})") from None
        if not raw:
            raise DataError(f"{path} is empty once unzipped")
    what = WHAT[magic]
    if len(raw) < 4:
        raise DataError(f"{path} is truncated: it ends inside its header")
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        kind = WHAT.get(found)
        was = f"MNIST {kind}" if kind else ("not an IDX file" if raw[:2] != b"\0\0"
                                            else "an IDX file of another kind")
        raise DataError(f"{path} is not an MNIST {what} file: its magic number is {found} "
                        f"({was}), not {magic}")
    ndim = raw[3]
    start = 4 + 4 * ndim
    if len(raw) < start:
        raise DataError(f"{path} is truncated: it ends inside its header")
    dims = struct.unpack(f">{ndim}I", raw[4:start])
    need = int(np.prod(dims, dtype=np.int64))
    have = len(raw) - start
    if have < need:
        shape = " x ".join(str(d) for d in dims[1:])
        promise = f"{dims[0]:,} {what}" + (f" of {shape}" if shape else "")
        raise DataError(f"{path} is truncated: its header promises {promise} ({need:,} bytes) "
                        f"but it holds only {have:,}")
    return np.frombuffer(raw, dtype=np.uint8, count=need, offset=start).reshape(dims)
