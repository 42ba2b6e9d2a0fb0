"""WAV audio: samples quantised to classes, served like characters; classes back to a WAV."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .errors import DataError
from .quantize import Quantizer
from .sequence import SequenceSource
from .wavfile import read_wav, write_wav


def _as_array(classes) -> np.ndarray:
    if isinstance(classes, torch.Tensor):
        classes = classes.detach().cpu().numpy()
    return np.asarray(classes).reshape(-1)


class AudioSource(SequenceSource):
    """The samples of a WAV file as classes in ``[0, V)``: V = 256 (mu-law) or 128 (uniform).

    Attributes
    ----------
    sample_rate : int
        Frames per second of the file (and of what ``to_wav`` writes).
    quantizer : Quantizer
        Turns samples into classes and back; ``codec`` is it with the rate, as plain data.
    rms : float
        The root mean square of the file's samples (full scale 1.0): how loud generated audio
        should be, roughly.
    """

    kind = "audio"

    def __init__(self, path: Path, params: dict, seed: int = 0, use_soundfile: bool = True):
        wav = read_wav(path, use_soundfile)
        samples = wav.samples
        if samples.min() == samples.max():
            raise DataError(f"{path} is silent: every sample has the same value, so there is "
                            f"nothing to learn")
        self.quantizer = Quantizer.for_samples(params["quantization"], samples)
        self.sample_rate = wav.rate
        self.channels = wav.channels
        self.encoding = wav.encoding
        self.frames = len(samples)
        self.rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
        classes = self.quantizer.encode(samples)
        super().__init__(path, classes, self.quantizer.classes, params, seed, "samples", None,
                         wav.notes)

    def describe(self) -> str:
        layout = {1: "mono", 2: "stereo"}.get(self.channels, f"{self.channels} channels")
        return (f"{self.path}: {self.frames / self.sample_rate:.1f} s at {self.sample_rate:,} "
                f"Hz, {self.encoding} {layout}, {self.frames:,} samples; "
                f"{self.quantizer.scheme} ({self.num_classes} classes); {self.split_text()}; "
                f"{self.batching} batches of {self._batch_text(f' x {self.seq_len}')}")

    @property
    def codec(self) -> dict:
        """The quantiser, the sample rate and the training audio's RMS as plain data (for a
        checkpoint); see :func:`codec_to_wav`."""
        return {"quantizer": self.quantizer.to_dict(), "sample_rate": self.sample_rate,
                "rms": self.rms}

    def classes_to_samples(self, classes) -> np.ndarray:
        """Samples (float64 in [-1, 1]) of generated classes (a list, array or tensor)."""
        return self.quantizer.decode(_as_array(classes))

    def to_wav(self, classes, path: str | Path) -> Path:
        """Write generated classes as a 16-bit PCM mono WAV at the file's rate, atomically.

        Raises
        ------
        ValueError
            A class outside ``[0, V)``.
        DataError
            The file cannot be written.
        """
        return write_wav(path, self.classes_to_samples(classes), self.sample_rate)


def codec_to_wav(classes, path: str | Path, codec: dict) -> Path:
    """Write classes as a WAV with a saved ``AudioSource.codec``, without the training file."""
    quantizer = Quantizer.from_dict(codec["quantizer"])
    return write_wav(path, quantizer.decode(_as_array(classes)), int(codec["sample_rate"]))
