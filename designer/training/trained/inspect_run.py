"""Inspecting a trained run: ``rnn-designer inspect RUN_DIR`` and the JSON it prints.

    rnn-designer inspect RUN --text "ROMEO: What light through yonder window breaks?" --json

The JSON holds, for the input, the surprise of every character (``null`` for the first,
which nothing predicts), the top guesses, the gradient norm per step, and per recurrent
level the gates (one row of H values per step), c, h and the saturation statistics.

A sequence classifier is inspected on a test sequence (``--text`` picks one: its number in
the test split, or ``class NAME``): the JSON adds ``classes`` and ``leaning``, the class
probabilities after every step. A forecaster is inspected on a test window (``--text``: its
number, or the time its forecast starts): the JSON adds ``window``, the history read with
the forecast and the truth after it, in the target's units.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from designer.graph import project as P

from designer.training.data import open_source
from designer.training.readout.inspect import Inspection, inspect
from designer.training.readout.probe import (DEFAULT_STEPS, Probe, ProbeError, held_out_probe,
                                             text_probe)
from designer.training.trained.generate import TrainedModel, load_trained


SEQUENCE_KINDS = ("classes", "series")


def run_probe(model: TrainedModel, steps: int = DEFAULT_STEPS, pick: str | None = None) -> Probe:
    """The fixed held-out snippet of a run's data (what the Inspect view shows by default);
    for a sequence classifier or forecaster a test sequence or window (``pick``: which, see
    :func:`designer.training.readout.probe.sequence_probe`), read with the run's own
    classes and statistics.

    Raises ``DataError`` when the run's data cannot be read any more.
    """
    project = P.from_dict(model.meta["project"])
    layer = project.graph.layer(project.graph.sources()[0])
    meta = model.meta["data"]
    kept = {"run_meta": meta} if model.kind in SEQUENCE_KINDS else {}
    source = open_source(layer, None, meta["path"], None, 0, **kept)
    return held_out_probe(source, steps, pick=pick)


def probe_for(model: TrainedModel, text: str | None = None,
              steps: int = DEFAULT_STEPS) -> Probe:
    """``text`` over the run's vocabulary, or (``None``) its held-out snippet; for a sequence
    run ``text`` picks the test sequence or window."""
    if model.kind in SEQUENCE_KINDS:
        return run_probe(model, steps, text)
    if text is None:
        return run_probe(model, steps)
    if model.kind != "text":
        raise ProbeError(f"{model.path} was trained on {model.kind} data; --text is for text "
                         "runs (leave it out to inspect a piece of the held-out data)")
    return text_probe(text, model.vocab)


def symbol(vocab: list | None, i: int) -> str | int:
    """A class id as the run names it: its character for text runs, else the number."""
    return vocab[i] if vocab is not None and 0 <= i < len(vocab) else int(i)


def _rows(a: np.ndarray, digits: int) -> list:
    return np.round(a.astype(np.float64), digits).tolist()


def _numbers(a, digits: int) -> list | None:
    if a is None:
        return None
    return [None if not math.isfinite(v) else round(float(v), digits) for v in a]


def to_json(seen: Inspection, vocab: list | None = None, layer: str | None = None,
            digits: int = 6, meta: dict | None = None) -> dict:
    """The inspection as JSON-ready data (the ``inspect --json`` layout).

    ``layer`` keeps only the levels of that recurrent layer (``lstm1``) or that one level
    (``lstm1/L1``); ``KeyError`` names the choices when it matches none.
    """
    levels = [lv for lv in seen.layers if layer is None or layer in (lv.name, lv.layer)]
    if not levels:
        names = sorted({lv.layer for lv in seen.layers} | {lv.name for lv in seen.layers})
        raise KeyError(f"there is no recurrent layer or level named '{layer}' (the net has "
                       f"{', '.join(names)})")
    probe = seen.probe
    out = dict(meta or {})
    out["input"] = {"kind": probe.kind, "steps": probe.steps, "origin": probe.origin,
                    "labels": list(probe.labels)}
    if probe.text is not None:
        out["input"]["text"] = probe.text
    if probe.target is not None:
        out["input"]["target"] = probe.target
    out["loss"] = round(seen.loss, digits) if math.isfinite(seen.loss) else None
    out["surprise"] = _numbers(seen.surprise, digits)
    if seen.top_ids is not None:
        out["top"] = [[] if t == 0 else [[symbol(vocab, int(i)), round(float(p), digits)]
                                         for i, p in zip(seen.top_ids[t], seen.top_p[t])]
                      for t in range(seen.steps)]
    classes = probe.info.get("classes") if probe.kind == "classes" else None
    if classes is not None:
        out["classes"] = list(classes)
        if probe.target is not None:
            out["input"]["target"] = classes[probe.target]
    if seen.prediction is not None:
        out["prediction"] = [[symbol(classes, c), round(p, digits)] for c, p in seen.prediction]
    if seen.leaning is not None:
        out["leaning"] = _rows(seen.leaning, digits)
    if seen.forecast is not None:
        info = probe.info
        out["window"] = {"targets": info["targets"], "times": list(probe.labels),
                         "history": info["history"], "ahead": info["ahead"],
                         "forecast": _rows(seen.forecast, digits), "truth": info["truth"],
                         "known": info["known"]}
    out["grad_norm_per_step"] = _numbers(seen.grad_norm, 9)
    out["grad_norm_from_last"] = _numbers(seen.grad_norm_last, 9)
    out["layers"] = []
    for lv in levels:
        entry = {"name": lv.name, "layer": lv.layer, "level": lv.level, "type": lv.kind,
                 "engine": lv.engine, "units": lv.hidden,
                 "gates": {g: _rows(a, digits) for g, a in lv.gates.items()}}
        if lv.c is not None:
            entry["c"] = _rows(lv.c, digits)
        entry["h"] = _rows(lv.h, digits)
        entry["grad_norm_per_step"] = _numbers(lv.grad_norm, 9)
        entry["grad_norm_from_last"] = _numbers(lv.grad_norm_last, 9)
        entry["saturation"] = {g: ({k: round(v, digits) for k, v in s.items()}
                                   if isinstance(s, dict) else round(s, digits))
                               for g, s in lv.saturation.items()}
        out["layers"].append(entry)
    if seen.parity:
        out["parity"] = {k: v for k, v in seen.parity.items()
                         if layer is None or k == layer or layer.startswith(k + "/")}
    return out


def inspect_command(args) -> int:
    """``rnn-designer inspect``: raises the package's one-sentence errors for the CLI."""
    if args.steps is not None and not 2 <= args.steps <= 2000:
        raise ProbeError("--steps must be between 2 and 2000")
    model = load_trained(args.run_dir, args.checkpoint, args.device)
    probe = probe_for(model, args.text, args.steps or DEFAULT_STEPS)
    seen = inspect(model.net, probe, parity=args.parity)
    meta = {"run": str(Path(args.run_dir)), "checkpoint": model.path.name,
            "step": int(model.meta.get("step", 0))}
    data = to_json(seen, model.vocab if model.kind == "text" else None, args.layer,
                   meta=meta)
    if args.json:
        json.dump(data, sys.stdout, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report(data))
    return 0


def report(data: dict) -> str:
    """The inspection as text for people: a summary per level and a row per step."""
    inp = data["input"]
    lines = [f"{data['run']}: {data['checkpoint']} (step {data['step']:,}), "
             f"{inp['steps']} steps of {inp['origin']}"]
    if data["loss"] is not None and "window" in data:
        lines.append(f"squared error of the forecast {data['loss']:.4g} (in deviations of the "
                     "target, as the net trains)")
    elif data["loss"] is not None and "classes" in data:
        lines.append(f"loss at the sequence's end {data['loss']:.3f} nats (-ln p of its class)")
    elif data["loss"] is not None:
        lines.append(f"mean surprise {data['loss']:.3f} nats ({data['loss'] / math.log(2):.3f}"
                     " bits) per prediction")
    if data.get("prediction"):
        guess = ", ".join(f"{c} {p:.0%}" for c, p in data["prediction"][:3])
        what = "the sequence is of class" if "classes" in data else "the digit is"
        lines.append(f"{what} {inp.get('target', '?')}; the net says {guess}")
    lines.append("")
    lines.append("level        type  engine   units  saturated  (per gate: below 0.05 / above "
                 "0.95)")
    for lv in data["layers"]:
        gates = "  ".join(f"{g} {s['low']:.0%}/{s['high']:.0%}"
                          for g, s in lv["saturation"].items() if isinstance(s, dict))
        total = lv["saturation"].get("all")
        engine = {"CUDNN": "cuDNN", "CAFFE": "unrolled", "PERSIST": "persistent",
                  "AUTO": "auto", "SCAN": "scan", "CHUNK": "chunk",
                  "FUSED": "fused"}.get(lv["engine"], lv["engine"])
        lines.append(f"{lv['name']:<12} {lv['type']:<5} {engine:<8} {lv['units']:>5}  "
                     f"{'-' if total is None else f'{total:.1%}':>9}  {gates}")
    lines.append("")
    first = data["layers"][0]
    gate = "f" if "f" in first["gates"] else ("z" if "z" in first["gates"] else None)
    leaning = _leaning(data)
    wide = max([6] + [len(_shown(x)) for x in inp["labels"]])
    scored = bool(data.get("surprise"))
    lines.append(f"step  {'reads':<{wide}} " + (f"{'surprise':>8}  " if scored else "")
                 + f"{'leans to' if leaning else 'top guess':<12} {'|dL/dh_t|':>10}"
                 + (f"  mean {gate} ({first['name']})" if gate else ""))
    for t in range(inp["steps"]):
        reads = _shown(inp["labels"][t])
        s = data["surprise"][t] if data.get("surprise") else None
        top = leaning[t] if leaning else data.get("top", [[]] * inp["steps"])[t]
        guess = f"{_shown(top[0][0])} {top[0][1]:.0%}" if top else ""
        g = data["grad_norm_per_step"][t] if data["grad_norm_per_step"] else None
        row = (f"{t:>4}  {reads:<{wide}} "
               + (f"{'-' if s is None else f'{s:.3f}':>8}  " if scored else "") + f"{guess:<12} "
               f"{'-' if g is None else f'{g:.3e}':>10}")
        if gate:
            row += f"  {np.mean(first['gates'][gate][t]):.3f}"
        lines.append(row)
    if "window" in data:
        lines += ["", _window_table(data["window"])]
    return "\n".join(lines) + "\n"


def _leaning(data: dict) -> list | None:
    """Per step ``[[class, p]]``: the class a classifier leans to after that step."""
    if "leaning" not in data:
        return None
    classes = data["classes"]
    return [[[classes[int(np.argmax(p))], float(max(p))]] for p in data["leaning"]]


def _window_table(window: dict) -> str:
    """The forecast after the window next to the truth, per step ahead and target."""
    rows = [f"{'ahead':<12} " + "  ".join(f"{t + ' forecast':>18} {'truth':>10}"
                                          for t in window["targets"])]
    for k, when in enumerate(window["ahead"]):
        cells = []
        for j in range(len(window["targets"])):
            truth = window["truth"][k][j] if window["known"][k][j] else None
            cells.append(f"{window['forecast'][k][j]:>18.4g} "
                         f"{'-' if truth is None else f'{truth:.4g}':>10}")
        rows.append(f"{when:<12} " + "  ".join(cells))
    return "\n".join(rows)


def _shown(label) -> str:
    """A symbol as a table cell: newlines and spaces made visible."""
    text = str(label)
    return {"\n": "\\n", " ": "\u2423", "\t": "\\t"}.get(text, text)
