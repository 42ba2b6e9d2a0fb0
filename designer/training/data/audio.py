"""WAV audio: samples quantised to classes, served like characters; classes back to a WAV."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from designer.training.data.errors import DataError
from designer.training.data.quantize import Quantizer
from designer.training.data.sequence import SequenceSource
from designer.training.data.wavfile import read_wav, write_wav


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
        self.prime = prime_excerpt(samples, classes, wav.rate, self.rms)
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
        """The quantiser, the sample rate, the training audio's RMS and a short excerpt of it
        (``prime``, classes: what generation continues) as plain data (for a checkpoint); see
        :func:`codec_to_wav`."""
        return {"quantizer": self.quantizer.to_dict(), "sample_rate": self.sample_rate,
                "rms": self.rms, "prime": self.prime}

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


PRIME_SECONDS = 0.25


def prime_excerpt(samples: np.ndarray, classes: np.ndarray, rate: int, rms: float) -> list[int]:
    """The first stretch of ``PRIME_SECONDS`` at least as loud as the whole file, as classes.

    A sample-level model started from silence tends to stay there (a pause predicts a pause);
    started inside speech, it goes on with speech. The excerpt is stored with the run so that
    generation needs no access to the training file.
    """
    width = max(1, int(rate * PRIME_SECONDS))
    frames = len(samples) // width
    if frames == 0:
        return [int(c) for c in classes[:width]]
    power = np.square(samples[:frames * width].reshape(frames, width), dtype=np.float64)
    loud = np.flatnonzero(np.sqrt(power.mean(1)) >= rms)
    k = int(loud[0]) if len(loud) else int(power.mean(1).argmax())
    return [int(c) for c in classes[k * width:(k + 1) * width]]


def codec_to_wav(classes, path: str | Path, codec: dict) -> Path:
    """Write classes as a WAV with a saved ``AudioSource.codec``, without the training file."""
    quantizer = Quantizer.from_dict(codec["quantizer"])
    return write_wav(path, quantizer.decode(_as_array(classes)), int(codec["sample_rate"]))
