"""What an exported model says about itself: ONNX ``metadata_props``.

Every model: ``rnn_designer`` (the version), ``project``, ``engines`` and ``states`` (JSON: the
recurrent layers and how many state tensors each has), and for a run ``step`` and ``data`` (JSON:
everything the run keeps about its data, less the path of the file). :mod:`onnx_export` adds
``design`` (JSON: the project as drawn, what ``rnn-designer import`` rebuilds it from) and
``export`` (JSON: ``unrolled`` and ``steps``, how the recurrent layers were written).

A text or audio net adds ``vocab`` (a JSON list of the characters in id order).

A forecaster (``TimeSeries``) adds what reading new data and de-normalising the output take:
``inputs`` and ``targets`` (JSON lists of columns, in the order of ``data``'s last axis and of the
output), ``input_mean``/``input_std`` and ``target_mean``/``target_std`` (JSON lists, one value
per column), ``horizon``, ``seq_len``, ``predict`` (level, change or season), ``period`` and
``denormalise`` (the recipe, in words). Without a run (a project file) only what the layer's
parameters tell is there: the statistics are the training split's, which only a run knows.

A classifier (``SequenceClasses``) adds ``classes`` (a JSON list of the class names in id order),
``features``, ``feature_mean``/``feature_std`` and ``frame``.
"""
from __future__ import annotations

import json

from designer import __version__

RECIPES = {
    "level": "each value = output * target_std + target_mean",
    "change": "each value = output * target_std + the target's last value in the window (in "
              "its units); the inputs that are targets are read relative to their last value "
              "in the window: (x - input_mean) / input_std, minus that of the last step",
    "season": "each value = output * target_std + the target's value one period before that "
              "forecast step (in its units); the inputs that are targets are read as the "
              "change from one period before: (x - input_mean) / input_std, minus that of the "
              "step one period earlier",
}
SERIES_KEYS = (("inputs", "inputs"), ("targets", "targets"), ("time_column", "time_column"),
               ("horizon", "horizon"), ("seq_len", "seq_len"), ("predict", "predict"),
               ("period", "period"))
STATS_KEYS = {"x_mean": "input_mean", "x_std": "input_std", "y_mean": "target_mean",
              "y_std": "target_std", "mean": "feature_mean", "std": "feature_std"}


def metadata(source, net, states) -> dict:
    """``metadata_props`` for the model of ``source`` (a ModelSource) built from ``net``."""
    data = source.data_meta
    props = {"rnn_designer": __version__, "project": source.project.name,
             "engines": json.dumps(net.engines),
             "states": json.dumps({n: len(f) for n, f in states})}
    vocab = data.pop("vocab", None)
    if vocab is not None:
        props["vocab"] = json.dumps(vocab, ensure_ascii=False)
    data.pop("path", None)
    if data:
        props["data"] = json.dumps(data, ensure_ascii=False)
    if source.meta is not None:
        props["step"] = str(source.meta.get("step"))
    graph = source.project.graph
    for name in net.sources:
        layer = graph.layer(name)
        if layer.type == "TimeSeries":
            props.update(_series(layer.effective_params(), data))
        elif layer.type == "SequenceClasses":
            props.update(_classes(layer.effective_params(), data))
    return props


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _series(params: dict, data: dict) -> dict:
    known = {"horizon": params["horizon"], "seq_len": params["seq_len"],
             "predict": params["predict"], **{k: v for k, v in data.items() if v is not None}}
    props = {key: _text(known[k]) for k, key in SERIES_KEYS if k in known}
    props.update(_stats(data))
    props["denormalise"] = RECIPES[known["predict"]] + (
        "" if data.get("stats") else "; the statistics come with a trained run")
    return props


def _classes(params: dict, data: dict) -> dict:
    props = {"frame": str(data.get("frame", params["frame"]))}
    for key in ("classes", "features"):
        if key in data:
            props[key] = json.dumps(data[key], ensure_ascii=False)
    props.update(_stats(data))
    return props


def _stats(data: dict) -> dict:
    return {STATS_KEYS[k]: json.dumps(v) for k, v in (data.get("stats") or {}).items()
            if k in STATS_KEYS}
