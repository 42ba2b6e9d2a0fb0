"""Audio samples to classes and back: mu-law to 256 classes, or 128 uniform buckets.

A quantiser is plain data (``to_dict`` / ``from_dict``), so a trained run can turn generated
classes back into sound without the WAV it was trained on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Quantizer:
    """Maps samples in [-1, 1] to classes in ``[0, classes)`` and classes back to samples.

    ``scheme`` is ``"mu_law_256"`` (mu-law companding with mu = 255, then 256 equal steps of
    the companded value) or ``"uniform_128"`` (128 equal buckets between ``low`` and ``high``,
    the file's minimum and maximum, as MyCaffe does; a class maps back to its bucket's
    centre).
    """

    scheme: str
    classes: int
    low: float = -1.0
    high: float = 1.0

    @classmethod
    def for_samples(cls, scheme: str, samples: np.ndarray) -> "Quantizer":
        """The quantiser ``scheme`` gives for these samples (uniform needs their range)."""
        if scheme == "mu_law_256":
            return cls(scheme, 256)
        if scheme == "uniform_128":
            return cls(scheme, 128, float(np.min(samples)), float(np.max(samples)))
        raise ValueError(f"unknown quantization {scheme!r}")

    def to_dict(self) -> dict:
        """The quantiser as plain data (for a checkpoint)."""
        return {"scheme": self.scheme, "classes": self.classes, "low": self.low,
                "high": self.high}

    @classmethod
    def from_dict(cls, d: dict) -> "Quantizer":
        """The quantiser ``to_dict`` saved."""
        return cls(str(d["scheme"]), int(d["classes"]), float(d["low"]), float(d["high"]))

    def encode(self, samples: np.ndarray) -> np.ndarray:
        """Classes (int64) of samples."""
        x = np.asarray(samples, dtype=np.float64)
        if self.scheme == "mu_law_256":
            return mu_law_encode(x, self.classes)
        return uniform_encode(x, self.low, self.high, self.classes)

    def decode(self, classes) -> np.ndarray:
        """Samples (float64) of classes; ids outside ``[0, classes)`` raise ``ValueError``."""
        c = np.asarray(classes).astype(np.int64, copy=False).reshape(-1)
        if c.size and (c.min() < 0 or c.max() >= self.classes):
            raise ValueError(f"classes must lie in [0, {self.classes}); got "
                             f"{int(c.min())}..{int(c.max())}")
        if self.scheme == "mu_law_256":
            return mu_law_decode(c, self.classes)
        return uniform_decode(c, self.low, self.high, self.classes)


def mu_law_encode(x: np.ndarray, classes: int = 256) -> np.ndarray:
    """mu-law companding (mu = classes - 1) of samples in [-1, 1] to ids in [0, classes)."""
    mu = classes - 1
    x = np.clip(x, -1.0, 1.0)
    y = np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu)
    return np.clip(np.round((y + 1.0) / 2.0 * mu), 0, mu).astype(np.int64)


def mu_law_decode(c: np.ndarray, classes: int = 256) -> np.ndarray:
    """The inverse of :func:`mu_law_encode` (up to its rounding)."""
    mu = classes - 1
    y = 2.0 * np.asarray(c, dtype=np.float64) / mu - 1.0
    return np.sign(y) * np.expm1(np.abs(y) * np.log1p(mu)) / mu


def uniform_encode(x: np.ndarray, low: float, high: float, classes: int = 128) -> np.ndarray:
    """Equal buckets between ``low`` and ``high``; ``high`` itself falls in the last one."""
    width = (high - low) / classes
    if width <= 0:
        return np.zeros(np.shape(x), dtype=np.int64)
    return np.clip(np.floor((x - low) / width), 0, classes - 1).astype(np.int64)


def uniform_decode(c: np.ndarray, low: float, high: float, classes: int = 128) -> np.ndarray:
    """Each class's bucket centre."""
    width = (high - low) / classes
    return low + (np.asarray(c, dtype=np.float64) + 0.5) * width
