"""Every trial of a search scored on the same validation data.

A project validates on ``eval_batches`` batches of its data layer's shape. Where a search
varies that shape (a data layer's batch size, window or batching), a
fixed count of batches covers a different share of the split in each trial: on
tinyshakespeare's validation split, 60 stream batches of 25 x 75 characters cover 99% of it
and 60 of 16 x 100 only 86% (each stream's first 6,000 of its 6,971 characters), and a fold's
sequences are cut short when a trial's batch is smaller than the project's. Designs would be
compared on different data, and the smaller sample is the noisier.

So where the space changes how a data layer cuts its data into batches (``SHAPING``), each run of a trial validates on the whole of its
validation split, in its own shape: ``eval_batches`` becomes what the opened data says the
split holds (``Source.eval_size(None, "val")``: every whole window of every stream, or every
sequence), never fewer than the project asked for.
"""
from __future__ import annotations

from designer.graph.project import Project

from designer.search.space import Space

# the data layers' parameters that change how many batches a split makes
SHAPING = ("batch_size", "seq_len", "batching")


def data_layers_searched(project: Project, space: Space) -> tuple[str, ...]:
    """The data layers of ``project`` whose batching (``SHAPING``) or type ``space`` varies."""
    sources = set(project.graph.sources())
    return tuple(sorted({d.target for d in space.dims if d.target in sources and
                         (d.role == "type" or d.param in SHAPING)}))


def whole_validation(project: Project, layers: tuple[str, ...]) -> Project:
    """``project`` (a trial's copy, changed in place) validating on the whole validation
    split of its data layers ``layers`` in the shape the trial gave them; as it was when
    ``layers`` is empty or the data cannot be opened here (the run then says why)."""
    if not layers:
        return project
    from designer.training.data import DataError, open_source

    from designer.search.folds import data_folder
    folder = data_folder(project)
    asked = int(project.training_settings()["eval_batches"])
    needed = 0
    for name in layers:
        try:
            source = open_source(project.graph.layer(name), folder, seed=0)
            needed = max(needed, int(source.eval_size(None, "val")))
        except (DataError, OSError, ValueError, KeyError):
            return project
    if needed > asked:
        project.training = {**(project.training or {}), "eval_batches": needed}
    return project
