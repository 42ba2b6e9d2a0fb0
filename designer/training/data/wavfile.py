"""Reading and writing WAV files, with every failure told in one sentence.

The RIFF header is parsed here first, whatever decodes the samples: that catches a file that is
not a WAV, an empty one, and a truncated one (libsndfile silently reads fewer frames when the
data chunk claims more bytes than the file holds). Samples are then decoded by soundfile when
it is importable (any encoding libsndfile reads), else by numpy straight from the parsed
header: PCM 8/16/24/32-bit and 32/64-bit float, little- or big-endian (RIFX), plain or
WAVE_FORMAT_EXTENSIBLE. (The stdlib ``wave`` module would add nothing: it hands back raw bytes
and refuses float and, before Python 3.12, the extensible header.)
"""
from __future__ import annotations

import io
import struct
import wave
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from designer.graph.atomic import atomic_write_bytes

from designer.training.data.errors import DataError

PCM, FLOAT, EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
TAG_NAMES = {0x0001: "PCM", 0x0002: "Microsoft ADPCM", 0x0003: "IEEE float", 0x0006: "A-law",
             0x0007: "mu-law", 0x0011: "IMA ADPCM", 0x0031: "GSM 6.10", 0x0050: "MPEG",
             0x0055: "MPEG Layer 3", 0x0161: "Windows Media Audio", 0x2000: "AC-3",
             0xFFFE: "extensible"}
UNKNOWN_SIZE = 0xFFFFFFFF


@dataclass
class WavHeader:
    """What the RIFF header says (tag resolved through WAVE_FORMAT_EXTENSIBLE)."""

    tag: int
    channels: int
    rate: int
    bits: int
    block_align: int
    data_offset: int
    data_bytes: int
    big_endian: bool = False

    @property
    def frames(self) -> int:
        return self.data_bytes // self.block_align

    @property
    def encoding(self) -> str:
        if self.tag == PCM:
            return f"{self.bits}-bit PCM"
        if self.tag == FLOAT:
            return f"{self.bits}-bit float"
        return TAG_NAMES.get(self.tag, f"format 0x{self.tag:04X}")


@dataclass
class Wav:
    """Decoded audio: mono samples in [-1, 1] and what they came from."""

    samples: np.ndarray          # float32, mono
    rate: int
    channels: int
    encoding: str
    notes: list[str] = field(default_factory=list)


def read_header(path: Path) -> WavHeader:
    """Parse and check a WAV file's RIFF header.

    Raises
    ------
    DataError
        An empty file, not a RIFF/WAVE file, a damaged or missing format chunk, no data chunk,
        a data chunk larger than the file (truncated) or one that holds no samples.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            return _parse(path, f, size)
    except OSError as e:
        raise DataError(f"{path} cannot be read ({e.strerror or e})") from None


def _parse(path: Path, f, size: int) -> WavHeader:
    if size == 0:
        raise DataError(f"{path} is empty")
    head = f.read(12)
    if len(head) < 12 or head[:4] not in (b"RIFF", b"RIFX", b"RF64") or head[8:12] != b"WAVE":
        raise DataError(f"{path} is not a WAV file (it has no RIFF/WAVE header)")
    big = head[:4] == b"RIFX"
    u32, u16 = (">I", ">H") if big else ("<I", "<H")
    fmt = data = None
    ds64_data = None
    pos = 12
    while pos + 8 <= size and (fmt is None or data is None):
        f.seek(pos)
        chunk_id, chunk_size = f.read(4), struct.unpack(u32, f.read(4))[0]
        body = pos + 8
        if chunk_id == b"ds64" and head[:4] == b"RF64":
            ds64_data = struct.unpack("<Q", _body(path, f, size, body, chunk_size, 16)[8:16])[0]
        elif chunk_id == b"fmt ":
            fmt = _fmt(path, _body(path, f, size, body, chunk_size, 16), big)
        elif chunk_id == b"data":
            if chunk_size == UNKNOWN_SIZE and ds64_data is not None:
                chunk_size = ds64_data
            data = (body, chunk_size)
        pos = body + chunk_size + (chunk_size & 1)
    if fmt is None:
        raise DataError(f"{path} is truncated or damaged: it has no format (fmt) chunk")
    if data is None:
        raise DataError(f"{path} is truncated or holds no audio: it has no data chunk")
    offset, declared = data
    there = size - offset
    if declared == UNKNOWN_SIZE:  # written by a streaming tool that never came back to it
        declared = there
    if declared > there:
        raise DataError(f"{path} is truncated: its data chunk declares {declared:,} bytes but "
                        f"the file holds only {max(there, 0):,} of them")
    tag, channels, rate, bits, align = fmt
    header = WavHeader(tag, channels, rate, bits, align, offset, declared, big)
    if header.frames == 0:
        raise DataError(f"{path} holds no audio samples (its data chunk is empty)")
    return header


def _body(path: Path, f, size: int, start: int, length: int, least: int) -> bytes:
    if length < least or start + length > size:
        raise DataError(f"{path} is truncated or damaged: its header chunks are cut short")
    f.seek(start)
    return f.read(length)


def _fmt(path: Path, raw: bytes, big: bool) -> tuple[int, int, int, int, int]:
    e = ">" if big else "<"
    tag, channels, rate, _, align, bits = struct.unpack(e + "HHIIHH", raw[:16])
    if tag == EXTENSIBLE and len(raw) >= 26:
        tag = struct.unpack(e + "H", raw[24:26])[0]  # the sub-format GUID's first two bytes
    if channels == 0 or rate == 0 or align == 0:
        raise DataError(f"{path} has a damaged format chunk ({channels} channels, {rate} Hz, "
                        f"{align}-byte frames)")
    return tag, channels, rate, bits, align


def read_wav(path: Path, use_soundfile: bool = True) -> Wav:
    """Read a WAV file as mono float32 samples in [-1, 1].

    Stereo (or more) is mixed to mono by averaging; integer PCM is scaled by its full range;
    float samples beyond [-1, 1] are clipped (with a note).

    Parameters
    ----------
    path : Path
    use_soundfile : bool
        Decode with soundfile when it is importable (tests turn this off to check the numpy
        decoder).

    Raises
    ------
    DataError
        Any problem with the file, in one sentence naming it.
    """
    header = read_header(path)
    sf = None
    if use_soundfile:
        try:
            import soundfile as sf
        except (ImportError, OSError):  # not installed, or libsndfile missing
            sf = None
    frames = _decode_soundfile(sf, path, header) if sf else _decode_numpy(path, header)
    notes = []
    if not np.isfinite(frames).all():
        raise DataError(f"{path} holds samples that are not numbers (NaN or infinity)")
    if frames.shape[1] > 1:
        notes.append(f"{path} has {frames.shape[1]} channels; they were mixed to mono")
        mono = frames.mean(axis=1)
    else:
        mono = frames[:, 0]
    over = int(np.count_nonzero(np.abs(mono) > 1.0))
    if over:
        notes.append(f"{path}: {over:,} float samples beyond [-1, 1] were clipped")
        mono = np.clip(mono, -1.0, 1.0)
    return Wav(np.ascontiguousarray(mono, dtype=np.float32), header.rate, header.channels,
               header.encoding, notes)


def _unsupported(path: Path, header: WavHeader, needs: str = "") -> DataError:
    return DataError(f"{path} uses an audio encoding that cannot be read here "
                     f"({header.encoding}, WAVE format tag 0x{header.tag:04X}){needs}; "
                     f"convert it to 16-bit PCM")


def _decode_soundfile(sf, path: Path, header: WavHeader) -> np.ndarray:
    try:
        frames, _ = sf.read(str(path), dtype="float64", always_2d=True)
    except (RuntimeError, ValueError, TypeError) as e:  # LibsndfileError is a RuntimeError
        if header.tag in (PCM, FLOAT):
            raise DataError(f"{path} cannot be decoded ({_first_line(e)})") from None
        raise _unsupported(path, header) from None
    if len(frames) < header.frames and header.tag in (PCM, FLOAT):
        raise DataError(f"{path} is truncated: its header promises {header.frames:,} frames "
                        f"but only {len(frames):,} could be read")
    return frames


def _decode_numpy(path: Path, header: WavHeader) -> np.ndarray:
    width = header.block_align // header.channels
    kinds = {(PCM, 1): "u1", (PCM, 2): "i2", (PCM, 3): "i3", (PCM, 4): "i4",
             (FLOAT, 4): "f4", (FLOAT, 8): "f8"}
    kind = kinds.get((header.tag, width))
    if kind is None or width * header.channels != header.block_align:
        raise _unsupported(path, header, " without the soundfile package")
    count = header.frames * header.block_align
    with open(path, "rb") as f:
        f.seek(header.data_offset)
        raw = f.read(count)
    order = ">" if header.big_endian else "<"
    if kind == "i3":
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3)
        if header.big_endian:
            b = b[:, ::-1]
        wide = np.zeros((len(b), 4), dtype=np.uint8)
        wide[:, 1:] = b
        values = (wide.view("<i4")[:, 0] >> 8).astype(np.float64) / 2.0 ** 23
    elif kind == "u1":
        values = (np.frombuffer(raw, dtype=np.uint8).astype(np.float64) - 128.0) / 128.0
    else:
        values = np.frombuffer(raw, dtype=order + kind).astype(np.float64)
        if kind[0] == "i":
            values /= 2.0 ** (8 * width - 1)
    return values.reshape(-1, header.channels)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[-1]


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    """A 16-bit PCM mono WAV file holding ``samples`` (floats in [-1, 1], clipped)."""
    pcm = np.round(np.clip(np.asarray(samples, dtype=np.float64), -1.0, 1.0) * 32767.0)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(rate))
        w.writeframes(pcm.astype("<i2").tobytes())
    return buf.getvalue()


def write_wav(path: str | Path, samples: np.ndarray, rate: int) -> Path:
    """Write ``samples`` as a 16-bit PCM mono WAV, atomically (old file or new, never half).

    Raises
    ------
    DataError
        The file cannot be written (no such folder, no permission, a full disk).
    """
    path = Path(path)
    data = wav_bytes(samples, rate)
    try:
        atomic_write_bytes(path, data)
    except OSError as e:
        raise DataError(f"{path} cannot be written ({e.strerror or e})") from None
    return path
