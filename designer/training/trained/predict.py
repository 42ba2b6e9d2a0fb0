"""Predictions of a trained MNIST run on held-out digits, for the output window.

>>> p = predict_digits("runs/mnist-lstm-...", count=12)
>>> p.accuracy, p.images.shape, p.predicted[:3], p.truth[:3]
(0.973, (12, 28, 28), array([7, 2, 1]), array([7, 2, 1]))

Only plain numpy leaves here, so a Qt worker can hand the result across threads.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from designer.graph import project as P

from designer.training.data import open_source
from designer.training.trained.generate import GenerateError, load_trained


@dataclass
class DigitPredictions:
    """Held-out accuracy and a few examples.

    Attributes
    ----------
    images : ndarray
        ``(count, 28, 28)`` float32 pixels in [0, 1], one row per time step as the net read it.
    predicted, truth : ndarray
        ``(count,)`` int64 class labels.
    accuracy : float
        The share of all ``evaluated`` held-out digits the net gets right.
    evaluated : int
        How many held-out digits were scored.
    """

    images: np.ndarray
    predicted: np.ndarray
    truth: np.ndarray
    accuracy: float
    evaluated: int


@torch.no_grad()
def predict_digits(run_dir: str | Path, count: int = 12, which: str = "best",
                   device: str = "cpu", seed: int | None = None,
                   limit: int | None = None) -> DigitPredictions:
    """Score a run's checkpoint on the held-out digits and pick ``count`` examples.

    Parameters
    ----------
    run_dir, which, device
        The run folder, its ``best`` or ``last`` checkpoint, and where to run the net.
    count
        Examples to return (drawn at random among the held-out digits scored).
    seed
        Makes the choice of examples repeatable (``None``: a new choice each call).
    limit
        Score at most this many batches (``None``: every held-out digit).

    Raises
    ------
    GenerateError
        The run is not an MNIST run, or its data layer cannot be read.
    designer.training.run.checkpoint.CheckpointError
        The checkpoint is missing or damaged.
    """
    model = load_trained(run_dir, which, device)
    if model.kind != "mnist":
        raise GenerateError(f"{model.path} was trained on {model.kind} data, not MNIST digits")
    project = P.from_dict(model.meta["project"])
    data_layer = project.graph.sources()[0]
    layer = project.graph.layer(data_layer)
    source = open_source(layer, None, model.meta["data"]["path"], None, 0)
    net = model.net
    at = net.logits_source()
    axis = _class_axis(project)
    preds, truths, images = [], [], []
    split = "test" if "test" in source.splits else "val"
    for batch in source.eval_batches(limit, split):
        x = batch["data"].to(model.device)
        logits = net({f"{data_layer}.data": x}, None, want=(at[0],)).blobs[at]
        preds.append(logits.argmax(dim=axis).reshape(-1).cpu())
        truths.append(batch["label"].reshape(-1))
        digits = batch["data"] if source.batch_first else batch["data"].transpose(0, 1)
        images.append(digits)
    if not preds:
        raise GenerateError(f"{source.path} holds no held-out digits to score")
    predicted = torch.cat(preds).numpy().astype(np.int64)
    truth = torch.cat(truths).numpy().astype(np.int64)
    pixels = torch.cat(images).numpy().astype(np.float32)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(truth), size=min(count, len(truth)), replace=False))
    return DigitPredictions(pixels[pick], predicted[pick], truth[pick],
                            float((predicted == truth).mean()), int(len(truth)))


def _class_axis(project) -> int:
    """The class axis of the first SoftmaxWithLoss layer's logits (its ``axis``)."""
    g = project.graph
    for name in g.topological_order():
        layer = g.layer(name)
        if layer.type == "SoftmaxWithLoss":
            return int(layer.effective_params().get("axis", -1))
    return -1
