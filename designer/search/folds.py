"""Cross-validation of a trial: what a search scores designs on when the validation split is
small.

A classifier's validation split is often a handful of sequences (10% of a UCR training file
of 30 to 200), and a search that picks the design with the lowest validation loss on them
picks the design that fits those few sequences, not the best one. With ``folds`` K of 2 or
more, each trial trains K runs: the training sequences are dealt into K folds per class (the
``SequenceClasses`` layer's ``folds`` and ``fold``), each run validates on one fold, and the
trial's value is the mean over the folds, so every training sequence validates once. The
design the study picks is then trained again on the project's own split (`refit`).

``--folds auto`` (the default) cross-validates labelled sequences whose validation split
holds fewer than ``AUTO_BELOW`` sequences, with ``AUTO_FOLDS`` folds; anything else keeps the
project's split.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from designer.graph.project import Project

from designer.search.study import SearchError

AUTO_FOLDS = 3
AUTO_BELOW = 200
MAX_FOLDS = 20
FOLDED = "SequenceClasses"  # the one data layer that deals its sequences into folds


@dataclass(frozen=True)
class Folds:
    """How a search's trials validate: ``count`` runs each (1: the project's own split)."""

    count: int = 1
    layer: str | None = None         # the data layer whose folds are set
    eval_batches: int | None = None  # validation batches that cover the largest fold
    fewest: int | None = None        # the fewest sequences of a class a trial validates on
    #                                  (over all its folds); None: not labelled sequences
    steps: int | None = None         # the labelled sequences' padded length, when read

    def project(self, project: Project, fold: int) -> Project:
        """``project`` (a trial's copy, changed in place) validating on fold ``fold``
        (1 to ``count``)."""
        if self.count < 2:
            return project
        project.graph.set_param(self.layer, "folds", self.count)
        project.graph.set_param(self.layer, "fold", fold)
        training = dict(project.training or {})
        training["eval_batches"] = self.eval_batches
        project.training = training
        return project


def plan_folds(project: Project, asked: str | int | None) -> Folds:
    """The folds of ``--folds`` (``auto``, or a count) for ``project``; raises `SearchError`
    in one sentence when they cannot be had."""
    from designer.training.data import DataError, open_source
    if asked in (None, "auto"):
        count = None
    else:
        try:
            count = int(asked)
        except (TypeError, ValueError):
            raise SearchError(f"--folds takes auto or a number of folds, not '{asked}'") \
                from None
        if not 1 <= count <= MAX_FOLDS:
            raise SearchError(f"--folds must be between 1 (the project's own validation "
                              f"split) and {MAX_FOLDS}")
    graph = project.graph
    data = [name for name in graph.sources() if graph.layer(name).type == FOLDED]
    if not data:
        if count is not None and count > 1:
            raise SearchError(f"--folds {count}: cross-validation deals labelled sequences "
                              f"(a {FOLDED} data layer) into folds, and "
                              f"{project.path} reads other data")
        return Folds()
    if count == 1:
        return Folds()
    layer = graph.layer(data[0])
    try:
        source = open_source(layer, data_folder(project), seed=0)
    except DataError as e:
        raise SearchError(str(e)) from None
    members = source.split_size("train") + source.split_size("val")
    if count is None:
        if source.split_size("val") >= AUTO_BELOW or members < 2 * AUTO_FOLDS:
            return Folds(fewest=_fewest(source, ("val",)), steps=int(source.seq_len))
        count = AUTO_FOLDS
    if count > members:
        raise SearchError(f"--folds {count}: {source.path} has {members} training "
                          f"sequences, fewer than the folds")
    batch = int(layer.effective_params()["batch_size"])
    return Folds(count, layer.name, math.ceil(math.ceil(members / count) / batch),
                 _fewest(source, ("train", "val")), int(source.seq_len))


def _fewest(source, splits: tuple) -> int | None:
    """The fewest sequences of one class among ``splits`` of ``source`` (every training
    sequence validates once over the folds; without folds, the validation split alone)."""
    import numpy as np
    labels = getattr(source, "label_ids", None)
    parts = getattr(source, "parts", None)
    if labels is None or parts is None:
        return None
    held = np.concatenate([np.asarray(parts[s], dtype=np.int64) for s in splits])
    return int(np.bincount(np.asarray(labels)[held], minlength=source.num_classes).min())


def data_folder(project: Project):
    """The folder a project's relative data paths start from."""
    return project.graph.project_dir or (project.path.parent if project.path else None)
