"""Data sources for the headless trainer: character text, WAV audio and MNIST rows.

>>> source = open_source(project.graph.layer("data"), project_dir, seed=1)
>>> batch = source.next_batch()          # {"data": (T, N), "cont": (T, N), "label": (T, N)}

Bad input raises :class:`DataError`, whose text is one sentence naming the file and the
problem. Nothing here writes anything but a downloaded corpus (into the user cache) and a
generated WAV (``AudioSource.to_wav``), both atomically.
"""
from __future__ import annotations

import os

from .base import Source
from .errors import DataError
from .locate import locate

__all__ = ["DataError", "Source", "open_source", "AudioSource", "MnistSource",
           "SequenceSource", "TextSource"]

DATA_LAYERS = ("CharText", "WavAudio", "MnistRows")


def open_source(layer, project_dir: str | os.PathLike | None = None,
                corpus: str | os.PathLike | None = None, progress=None,
                seed: int = 0) -> Source:
    """Open the data a data layer describes.

    Parameters
    ----------
    layer : designer.graph.model.Layer
        A ``CharText``, ``WavAudio`` or ``MnistRows`` layer; its effective parameters are
        used.
    project_dir : path, optional
        The project's folder (relative paths are looked up there first).
    corpus : path, optional
        Read this file (or, for MNIST, folder) instead of the layer's (``--corpus``).
    progress : callable, optional
        ``progress(done_bytes, total_bytes)`` while a named corpus downloads.
    seed : int
        Seeds the source's own generators, so the same seed draws the same batches.

    Returns
    -------
    Source
        A `TextSource`, `AudioSource` or `MnistSource`.

    Raises
    ------
    DataError
        The data is missing or unusable (one sentence naming the file and the problem).
    """
    params = layer.effective_params()
    if layer.type == "CharText":
        from .text import TextSource
        path = locate(params["corpus"], project_dir, corpus, "corpus", progress)
        return TextSource(path, params, seed)
    if layer.type == "WavAudio":
        from .audio import AudioSource
        path = locate(params["file"], project_dir, corpus, "audio file", progress)
        return AudioSource(path, params, seed)
    if layer.type == "MnistRows":
        from .mnist import MnistSource
        path = locate(params["folder"], project_dir, corpus, "MNIST folder", progress,
                      folder=True)
        return MnistSource(path, params, seed)
    raise ValueError(f"layer {layer.name!r} is a {layer.type}, not a data layer "
                     f"({', '.join(DATA_LAYERS)})")


def __getattr__(name: str):
    if name in ("TextSource", "AudioSource", "MnistSource", "SequenceSource"):
        from . import audio, mnist, sequence, text
        for module in (text, audio, mnist, sequence):
            if hasattr(module, name):
                return getattr(module, name)
    raise AttributeError(name)
