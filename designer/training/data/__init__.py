"""Data sources for the headless trainer: character text, WAV audio, MNIST rows, a table of
measurements over time (forecasting) and labelled sequences (classification).

>>> source = open_source(project.graph.layer("data"), project_dir, seed=1)
>>> batch = source.next_batch()          # {"data": (T, N), "cont": (T, N), "label": (T, N)}

Bad input raises :class:`DataError`, whose text is one sentence naming the file and the
problem. Nothing here writes anything but a downloaded corpus (into the user cache) and a
generated WAV (``AudioSource.to_wav``), both atomically.
"""
from __future__ import annotations

import os

from designer.training.data.errors import DataError
from designer.training.data.locate import locate

__all__ = ["DataError", "Source", "open_source", "AudioSource", "ClassesSource", "MnistSource",
           "SequenceSource", "SeriesSource", "TextSource"]

DATA_LAYERS = ("CharText", "WavAudio", "MnistRows", "TimeSeries", "SequenceClasses")
FILE_PARAMS = {"CharText": "corpus", "WavAudio": "file", "MnistRows": "folder",
               "TimeSeries": "file", "SequenceClasses": "file"}


def open_source(layer, project_dir: str | os.PathLike | None = None,
                corpus: str | os.PathLike | None = None, progress=None,
                seed: int = 0, run_meta: dict | None = None, whole: bool = False,
                **options) -> Source:
    """Open the data a data layer describes.

    Parameters
    ----------
    layer : designer.graph.model.Layer
        A data layer (``DATA_LAYERS``); its effective parameters are
        used.
    project_dir : path, optional
        The project's folder (relative paths are looked up there first).
    corpus : path, optional
        Read this file (or, for MNIST, folder) instead of the layer's (``--corpus``).
    progress : callable, optional
        ``progress(done_bytes, total_bytes)`` while a named corpus downloads.
    seed : int
        Seeds the source's own generators, so the same seed draws the same batches.
    run_meta : dict, optional
        For ``TimeSeries`` and ``SequenceClasses``: what a trained run kept of its data
        (statistics, classes), so new data is read the way the net was trained on.
    whole : bool
        For ``TimeSeries`` and ``SequenceClasses``: every window or sequence of the file is
        the ``test`` split (scoring a file the run never saw).

    Returns
    -------
    Source
        A `TextSource`, `AudioSource`, `MnistSource`, `SeriesSource` or `ClassesSource`.

    Raises
    ------
    DataError
        The data is missing or unusable (one sentence naming the file and the problem).
    """
    params = layer.effective_params()
    if layer.type == "CharText":
        from designer.training.data.text import TextSource
        path = locate(params["corpus"], project_dir, corpus, "corpus", progress)
        return TextSource(path, params, seed)
    if layer.type == "WavAudio":
        from designer.training.data.audio import AudioSource
        path = locate(params["file"], project_dir, corpus, "audio file", progress)
        return AudioSource(path, params, seed)
    if layer.type == "MnistRows":
        from designer.training.data.mnist import MnistSource
        path = locate(params["folder"], project_dir, corpus, "MNIST folder", progress,
                      folder=True)
        return MnistSource(path, params, seed)
    if layer.type == "TimeSeries":
        from designer.training.data.series import SeriesSource
        path = locate(params["file"], project_dir, corpus, "series file", progress)
        kept = run_meta or {}
        return SeriesSource(path, params, seed, kept.get("stats"), whole,
                            period=kept.get("period", 0), **options)
    if layer.type == "SequenceClasses":
        from designer.training.data.classes import ClassesSource
        path = locate(params["file"], project_dir, corpus, "sequence file", progress)
        return ClassesSource(path, params, seed, run_meta, whole, **options)
    raise ValueError(f"layer {layer.name!r} is a {layer.type}, not a data layer "
                     f"({', '.join(DATA_LAYERS)})")


def __getattr__(name: str):
    if name == "Source":  # torch: only when a source is wanted (the preview reads without it)
        from designer.training.data.base import Source
        return Source
    if name in ("TextSource", "AudioSource", "MnistSource", "SequenceSource", "SeriesSource",
                "ClassesSource"):
        from designer.training.data import audio, classes, mnist, sequence, series, text
        for module in (text, audio, mnist, sequence, series, classes):
            if hasattr(module, name):
                return getattr(module, name)
    raise AttributeError(name)
