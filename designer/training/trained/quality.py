"""Is generated output worth hearing or reading? Levels of audio, and the two ways a sampled
model most often fails: audio that collapses into near-silence and text caught in a short loop.

>>> levels(np.array([0.5, -0.25, 0.0]))
Levels(peak_dbfs=-6.02..., rms_dbfs=-9.82...)
>>> text_loop("Once upon a time the the the the the the the the")
'the '

Plain numpy, no torch, so the window can use it on what a worker hands back.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SILENCE_DBFS = -50.0     # below this (AC) RMS, audio is near-silence whatever it was trained on
SILENCE_SHARE = 0.05     # ... or below this share of the training audio's RMS, when known
LOOP_MAX_PERIOD = 40     # the longest repeating unit called "one short loop", in characters
LOOP_MIN_SHARE = 0.5     # the loop must fill at least this share of the text
LOOP_MIN_REPEATS = 3


def dbfs(x: float) -> float:
    """An amplitude (1.0 = full scale) in dB relative to full scale; ``-inf`` for 0."""
    return 20.0 * math.log10(x) if x > 0 else -math.inf


def dbfs_text(db: float) -> str:
    """``-21.4 dBFS``; digital silence reads ``-inf dBFS``."""
    return f"{db:.1f} dBFS" if math.isfinite(db) else "-inf dBFS"


@dataclass(frozen=True)
class Levels:
    """The peak and RMS of audio samples (full scale = 1.0), in dBFS."""

    peak_dbfs: float
    rms_dbfs: float

    def __str__(self) -> str:
        return f"peak {dbfs_text(self.peak_dbfs)}, RMS {dbfs_text(self.rms_dbfs)}"


def levels(samples) -> Levels:
    """Peak and RMS of ``samples`` (floats in [-1, 1]); an empty array is silence."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    if x.size == 0:
        return Levels(-math.inf, -math.inf)
    return Levels(dbfs(float(np.max(np.abs(x)))), dbfs(float(np.sqrt(np.mean(x * x)))))


def is_near_silence(samples, reference_rms: float | None = None) -> bool:
    """True when ``samples`` would sound like nothing.

    The level that counts is the RMS about the mean (a constant offset is silent too). It must
    fall below ``SILENCE_SHARE`` of ``reference_rms`` (the training audio's RMS) when that is
    known, and below ``SILENCE_DBFS`` otherwise. Output stuck on at most three values is
    silence as well, whatever their level.
    """
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    if x.size == 0:
        return False
    ac = float(np.std(x))
    if reference_rms:
        if ac < SILENCE_SHARE * reference_rms:
            return True
    elif dbfs(ac) < SILENCE_DBFS:
        return True
    return x.size >= 100 and np.unique(x[: 1 << 16]).size <= 3 and np.unique(x).size <= 3


def text_loop(text: str, max_period: int = LOOP_MAX_PERIOD) -> str | None:
    """The unit a text keeps repeating, when its end is one short loop.

    The loop (a unit of at most ``max_period`` characters, repeated at least three times) must
    cover at least half of the text; ``None`` otherwise. Found with one vectorised comparison
    of the text with itself shifted by each period, so a million characters take milliseconds.
    """
    n = len(text)
    if n < 2 * LOOP_MIN_REPEATS:
        return None
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    for period in range(1, min(max_period, n // LOOP_MIN_REPEATS) + 1):
        same = codes[period:] == codes[:-period]
        breaks = np.flatnonzero(~same)
        start = int(breaks[-1]) + 1 if breaks.size else 0  # the periodic tail is text[start:]
        tail = n - start
        if tail >= max(LOOP_MIN_SHARE * n, LOOP_MIN_REPEATS * period):
            return _readable_rotation(text, start, period)
    return None


def _readable_rotation(text: str, start: int, period: int) -> str:
    """The loop's unit, starting where a line or else a word starts ('the ', not 'e th')."""
    for breaks in ("\n", " \t"):
        for k in range(period):
            i = start + k
            if (i == 0 or text[i - 1] in breaks) and not text[i].isspace():
                return text[i:i + period]
    return text[start:start + period]


def temperature_text(t: float) -> str:
    """``1.0``, ``0.8``, ``0.75``: at least one decimal, as people write temperatures."""
    return f"{t:.1f}" if round(t, 1) == t else f"{t:g}"


WHITESPACE_NAMES = {" ": "spaces", "\n": "newlines", "\t": "tabs", "\r\n": "newlines"}


def _shown(unit: str) -> str:
    """The loop's unit as a reader takes it in: quoted, shortened, whitespace named."""
    if unit in WHITESPACE_NAMES:
        return WHITESPACE_NAMES[unit]
    return repr(unit if len(unit) <= 20 else unit[:20] + "\u2026")


def _where(bad: list[int], total: int) -> str:
    """`` in stream 2``, `` in streams 1 and 3``, `` in 5 of 8 streams``, `` in every stream``."""
    if total == 1:
        return ""
    if len(bad) == total:
        return " in every stream"
    names = [str(k + 1) for k in bad]
    if len(bad) == 1:
        return f" in stream {names[0]}"
    if len(bad) <= 3:
        return f" in streams {', '.join(names[:-1])} and {names[-1]}"
    return f" in {len(bad)} of {total} streams"


def audio_hint(streams: list, temperature: float, default_temperature: float,
               reference_rms: float | None = None) -> str | None:
    """A one-line hint when generated audio is near-silence (``None`` when it is not).

    Parameters
    ----------
    streams
        The samples of each generated stream.
    temperature, default_temperature
        The temperature used, and the data's own default (what to suggest).
    reference_rms
        The RMS of the training audio, when the run recorded it.
    """
    bad = [k for k, s in enumerate(streams) if is_near_silence(s, reference_rms)]
    if not bad:
        return None
    quiet = dbfs_text(min(levels(streams[k]).rms_dbfs for k in bad))
    text = f"the model wrote near-silence{_where(bad, len(streams))} (RMS {quiet})"
    if temperature < default_temperature:
        return f"{text}; try temperature {temperature_text(default_temperature)}"
    return (f"{text} even at temperature {temperature_text(temperature)}; it may need more "
            "training")


def text_hint(texts: list[str], temperature: float, default_temperature: float) -> str | None:
    """A one-line hint when generated text ends in one short loop (``None`` when it does not)."""
    loops = [(k, u) for k, u in enumerate(text_loop(t) for t in texts) if u is not None]
    if not loops:
        return None
    text = (f"the model repeats {_shown(loops[0][1])} over and over"
            f"{_where([k for k, _ in loops], len(texts))}")
    if temperature < default_temperature:
        return f"{text}; try temperature {temperature_text(default_temperature)}"
    return f"{text}; try a higher temperature, or train it longer"
