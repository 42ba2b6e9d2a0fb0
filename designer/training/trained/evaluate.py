"""Scoring a trained forecaster or sequence classifier on its test split (``rnn-designer
evaluate``), or on every window or sequence of another file.

>>> report = evaluate_run("runs/co2")          # {"task": "forecast", "rmse": 0.45, ...}

Forecasts are scored in the target's own units against the truth read from the file (cells
that were empty and filled in do not count), next to the simple baselines: the seasonal naive
forecast (the value one season before: the same week last year for weekly data) when the data
has a season, and persistence (the last value seen); the report's ``baseline`` is the stronger
of them (the lower RMSE). Beside them, and beside a classifier's accuracy, stands a strong
non-deep peer (`peers`: MiniRocket, AutoETS) scored on the same split, with the model's ratio
to it, when the extra ``peers`` is installed. Only plain numbers leave here.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from designer.graph import project as P

from designer.training.data import open_source
from designer.training.trained.generate import GenerateError, TrainedModel, load_trained
from designer.training.trained.peers import (classify_peer, forecast_peer, peer_beside,
                                             peer_words, CLASSIFIER_PEERS, attempt)
from designer.training.run import final

TASKS = {"series": "forecast", "classes": "classify"}


def open_for(model: TrainedModel, data: str | Path | None = None, **kw):
    """The run's data source, read as in training (its statistics and classes); ``data``:
    another file, every window or sequence of which is the ``test`` split."""
    if model.kind not in TASKS:
        raise GenerateError(f"{model.path} was trained on {model.kind} data; evaluate and "
                            "predict are for TimeSeries and SequenceClasses runs")
    project = P.from_dict(model.meta["project"])
    layer = project.graph.layer(project.graph.sources()[0])
    meta = model.meta["data"]
    return open_source(layer, None, data if data is not None else meta["path"], None, 0,
                       run_meta=meta, whole=data is not None, **kw)


def outputs(model: TrainedModel, source, batch: dict) -> torch.Tensor:
    """What the net feeds its loss (logits or predictions) for one batch, on the CPU."""
    net = model.net
    data_layer = net.sources[0]
    at = net.logits_source()
    feeds = {f"{data_layer}.{k}": v.to(model.device) for k, v in batch.items()
             if k != "label"}
    with torch.no_grad():
        return net(feeds, None, want=(at[0],)).blobs[at].float().cpu()


def evaluate_run(run_dir: str | Path, data: str | Path | None = None, which: str = "best",
                 device: str = "cpu", peer: bool = True) -> dict:
    """The ``evaluate`` report of a run (see the module doc); ``peer``: put the non-deep peer
    beside it (``report["peer"]``, see `with_peer`).

    Raises
    ------
    GenerateError
        Not a forecasting or classification run, or no test split to score.
    designer.training.data.DataError, designer.training.run.checkpoint.CheckpointError
        The data or the checkpoint cannot be used.
    """
    model = load_trained(run_dir, which, device)
    source = test_source(model, data)
    arrays = forecast_arrays(model, source) if model.kind == "series" else None
    report = forecast_report(source, arrays) if arrays else \
        classify_report(source, classify_arrays(model, source))
    return finish(report, model, source, data, arrays, peer)


def test_source(model: TrainedModel, data: str | Path | None = None):
    """`open_for` the run, refusing a source without a test split to score."""
    source = open_for(model, data)
    if "test" not in source.splits:
        raise GenerateError(f"{source.path} has no test split to score (set the data layer's "
                            "test_fraction above 0, or give --data FILE)")
    return source


def finish(report: dict, model: TrainedModel, source, data, arrays: dict | None,
           peer: bool) -> dict:
    """``report`` with the peer beside it (when ``peer``), the file, the split and the
    checkpoint's step."""
    if peer:  # scoring another file, the peer learns from the run's own data as the net did
        with_peer(report, source, arrays, (lambda: open_for(model)) if data is not None
                  else None)
    report.update(file=str(getattr(source, "test_path", source.path)),
                  split="test" if data is None else "all",
                  checkpoint_step=int(model.meta["step"]))
    seen = final.trained_on(model.meta)
    if seen:  # which training sequences the scored model saw
        report["trained_on"] = seen
    return report


def classify_arrays(model: TrainedModel, source, split: str = "test") -> dict:
    """The net's logits and class probabilities (softmax) for every sequence of ``split``,
    with the truth: ``{"index": (N,), "logits": (N, classes), "probs": ..., "truth": (N,)}``
    (``truth`` -1: no label)."""
    index, logits, truth = [], [], []
    for chunk in source.eval_chunks(None, split):
        batch = source.batch(chunk)
        logits.append(outputs(model, source, batch).reshape(len(chunk), -1))
        truth.append(batch["label"].numpy())
        index.append(chunk)
    logits = torch.cat(logits) if logits else torch.zeros(0, source.num_classes)
    return {"index": np.concatenate(index) if index else np.zeros(0, np.int64),
            "logits": logits.numpy(), "probs": torch.softmax(logits, 1).numpy(),
            "truth": np.concatenate(truth) if truth else np.zeros(0, np.int64)}


def classify_report(source, arrays: dict) -> dict:
    """The ``evaluate`` report of a classifier from its ``classify_arrays`` (the most likely
    class by its logits), or from an ensemble's (its mean ``probs``, no ``logits``): accuracy,
    the confusion matrix and each class's accuracy."""
    k = source.num_classes
    confusion = np.zeros((k, k), np.int64)
    scores = arrays["logits"] if "logits" in arrays else arrays["probs"]
    predicted, truth = scores.argmax(1), arrays["truth"]
    np.add.at(confusion, (truth[truth >= 0], predicted[truth >= 0]), 1)
    n = int(confusion.sum())
    if n == 0:
        raise GenerateError(f"{source.path} holds no labelled sequence to score")
    per_class = [float(confusion[i, i] / confusion[i].sum()) if confusion[i].sum() else None
                 for i in range(k)]
    return {"task": "classify", "accuracy": float(np.trace(confusion) / n), "n": n,
            "classes": list(source.classes), "confusion": confusion.tolist(),
            "per_class_accuracy": per_class}


def forecast_arrays(model: TrainedModel, source, split: str = "test") -> dict:
    """The net's forecasts of every window of ``split`` in the target's units, with the truth:
    ``{"origins": (N,), "pred": (N, horizon, targets), "truth": ..., "mask": ...}`` (``mask``:
    the true value was read from the file, not filled in)."""
    preds, truths, masks, origins = [], [], [], []
    for chunk in source.eval_chunks(None, split):
        out = outputs(model, source, source.window_batch(chunk)).numpy()
        preds.append(source.to_units(out, chunk))
        truth, mask = source.truth(chunk)
        truths.append(truth)
        masks.append(mask)
        origins.append(chunk)
    return {"origins": np.concatenate(origins), "pred": np.concatenate(preds),
            "truth": np.concatenate(truths), "mask": np.concatenate(masks)}


def baseline_names(source) -> list[str]:
    """The simple forecasts a forecaster is compared with, the main one first."""
    return ["seasonal_naive", "persistence"] if source.period else ["persistence"]


def with_peer(report: dict, source, arrays: dict | None = None, fit_source=None) -> dict:
    """``report`` with ``report["peer"]``: the better of MiniRocket's and
    MultiRocket-Hydra's accuracies on the same test sequences (``report["peers"]``: both),
    or AutoETS's ``rmse``/``mae`` on the same windows (``arrays``: ``forecast_arrays``), each
    with ``ratio`` (the model's score over the peer's) and ``seconds``; or one sentence why
    there is none (``missing``, ``error``). ``fit_source()``: the source the peer learns from,
    when ``source`` is another file."""
    def fit():
        learn = fit_source() if fit_source is not None else None
        if arrays is None:  # each of aeon's classifiers: the report names the better
            return [attempt(name, lambda n=name: classify_peer(source, learn, peer=n))
                    for name in CLASSIFIER_PEERS]
        info, pred = forecast_peer(source, arrays["origins"], learn)
        peer = {**info, **error_scores(pred, arrays["truth"], arrays["mask"])}
        if len(source.targets) > 1:
            peer["per_target"] = {t: error_scores(pred[..., j], arrays["truth"][..., j],
                                                  arrays["mask"][..., j])
                                  for j, t in enumerate(source.targets)}
        return peer
    return peer_beside(report, fit)


def forecast_report(source, arrays: dict) -> dict:
    """The ``evaluate`` report of a forecaster from its ``forecast_arrays``."""
    pred, truth = arrays["pred"], arrays["truth"]
    mask, origins = arrays["mask"], arrays["origins"]
    baselines = [{"name": name, **error_scores(source.baseline(origins, name), truth, mask),
                  **({"period": source.period} if name == "seasonal_naive" else {})}
                 for name in baseline_names(source)]
    # the stronger baseline first: it is the one the model is measured against
    baselines.sort(key=lambda b: math.inf if b["rmse"] is None else b["rmse"])
    scores = error_scores(pred, truth, mask)
    report = {"task": "forecast", **scores, "n": int(len(origins)),
              "values": int(mask.sum()), "horizon": source.horizon,
              "targets": list(source.targets), "baseline": baselines[0],
              "baselines": baselines}
    if len(source.targets) > 1:
        report["per_target"] = {t: error_scores(pred[..., j], truth[..., j], mask[..., j])
                                for j, t in enumerate(source.targets)}
    return report


def error_scores(pred: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> dict:
    """``{"rmse", "mae"}`` of ``pred`` against ``truth`` where ``mask`` (``None`` when no
    value counts)."""
    diff = (pred - truth)[mask]
    if not diff.size:
        return {"rmse": None, "mae": None}
    return {"rmse": float(np.sqrt(np.mean(diff ** 2))), "mae": float(np.mean(np.abs(diff)))}


def format_report(report: dict, label: str = "model") -> str:
    """The plain text ``rnn-designer evaluate`` prints (``label``: what the forecasts are
    from, in the table of a forecaster)."""
    where = f"{report['file']} ({'test split' if report['split'] == 'test' else 'every window'})"
    if report["task"] == "classify":
        lines = [f"{where}: accuracy {report['accuracy']:.2%} over {report['n']:,} sequences",
                 "", "per class (rows: true, columns: predicted)"]
        classes = report["classes"]
        width = max(5, *(len(c) for c in classes))
        lines.append(" " * (width + 2) + " ".join(c[:width].rjust(width) for c in classes)
                     + "  accuracy")
        for c, row, acc in zip(classes, report["confusion"], report["per_class_accuracy"]):
            shown = "-" if acc is None else f"{acc:.0%}"
            lines.append(c[:width].rjust(width) + "  " + " ".join(str(v).rjust(width)
                                                                 for v in row) + f"  {shown:>8s}")
        if "peer" in report:
            lines[1:1] = [peer_words(p, "classify", long=True)
                          for p in report.get("peers") or [report["peer"]]]
        if report.get("trained_on"):
            lines.insert(1, f"  {label}: {final.words(report['trained_on'])}")
        return "\n".join(lines)
    unit = ", ".join(report["targets"])
    lines = [f"{where}: {report['n']:,} forecasts of {unit}, {report['horizon']} step(s) ahead",
             f"  {label:<20s} RMSE {report['rmse']:.4g}  MAE {report['mae']:.4g}"]
    for b in report["baselines"]:
        name = b["name"].replace("_", " ") + (f" ({b['period']})" if "period" in b else "")
        ratio = f"model / baseline RMSE {report['rmse'] / b['rmse']:.3f}" if b["rmse"] else \
            "the baseline is exact here"
        lines.append(f"  {name:<20s} RMSE {b['rmse']:.4g}  MAE {b['mae']:.4g}  ({ratio})")
    if "peer" in report:
        lines.append(peer_words(report["peer"], "forecast", long=True))
    return "\n".join(lines)
