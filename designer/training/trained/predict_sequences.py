"""``rnn-designer predict``: a trained run's classes for the sequences of a file, or its
forecast of the values that follow a series.

Classification writes one row per sequence: its id, the predicted class, that class's
probability, the true class when the file gives one, and every class's probability.
Forecasting reads the last ``seq_len`` rows of the file (the same columns the run trained on)
and writes them as ``history`` rows followed by ``horizon`` ``forecast`` rows, stamped with
the time continued at the file's pace when it has a time column.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from designer.graph import headers
from designer.graph.atomic import atomic_write_text

from designer.training.trained.ensemble import load_members, mean_probs
from designer.training.trained.evaluate import open_for, outputs
from designer.training.trained.generate import GenerateError


def predict_file(run_dir: str | Path | Sequence[str | Path], input_file: str | Path,
                 out: str | Path | None = None, which: str = "best",
                 device: str = "cpu") -> tuple[str, str]:
    """The CSV text of the predictions (also written atomically to ``out``) and a summary.

    ``run_dir``: one run folder, or several of one task and data shape: their ensemble
    (`ensemble`) averages the class probabilities, or the forecasts, of every run.
    """
    names = [str(run_dir)] if isinstance(run_dir, (str, Path)) else [str(r) for r in run_dir]
    models = load_members(names, which, device)
    model = models[0]
    if not Path(input_file).exists():
        raise GenerateError(f"{input_file} does not exist")
    by = f" by the ensemble of {len(models)} runs ({', '.join(names)})" if len(models) > 1 \
        else ""
    if model.kind == "classes":
        rows, summary = _classify(models, names, input_file, by)
    elif model.kind == "series":
        rows, summary = _forecast(models, input_file, by)
    else:
        raise GenerateError(f"{model.path} was trained on {model.kind} data; predict is for "
                            "TimeSeries and SequenceClasses runs")
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    text = buf.getvalue()
    if out is not None:
        atomic_write_text(Path(out), text)
        summary += f"; written to {out}"
    return text, summary


def _classify(models, names, input_file, by: str = "") -> tuple[list, str]:
    source, probs, each = mean_probs(models, names, input_file)
    classes = source.classes
    seqs = source.seqs
    labelled = any(lab is not None for lab in seqs.labels)
    head = ["series", "predicted", "probability"] + (["label"] if labelled else []) + \
        [f"p_{c}" for c in classes]
    rows = [head]
    index = np.concatenate(source.eval_chunks(None, "test"))
    for i, p in zip(index, probs):
        k = int(p.argmax())
        row = [seqs.ids[i], classes[k], f"{p[k]:.4f}"]
        if labelled:
            row.append(seqs.labels[i] if seqs.labels[i] is not None else "")
        rows.append(row + [f"{v:.4f}" for v in p])
    n = len(rows) - 1
    summary = f"{n:,} sequences of {source.path} classified{by}"
    if labelled:
        summary += f" ({_agree(seqs, index, probs, classes):.2%} agree with the labels the " \
            "file gives"
        if len(models) > 1:
            summary += "; each run alone: " + ", ".join(
                f"{name} {_agree(seqs, index, p, classes):.2%}" for name, p in zip(names, each))
        summary += ")"
    return rows, summary


def _agree(seqs, index, probs, classes) -> float:
    """The share of the sequences whose label the file gives as the class most probable."""
    predicted = probs.argmax(1)
    right = sum(seqs.labels[i] == classes[k] for i, k in zip(index, predicted))
    return right / len(index)


def _forecast(models, input_file, by: str = "") -> tuple[list, str]:
    sources = [open_for(model, input_file, forecast=True) for model in models]
    futures = [forecast_next(model, source) for model, source in zip(models, sources)]
    source, future = sources[0], np.mean(futures, axis=0)   # (horizon, targets)
    origin = len(source.x) - 1
    first = origin - source.seq_len + 1
    stamps = source.times
    head = [source.time_column or "step", "kind"] + list(source.targets)
    rows = [head]
    for r in range(first, origin + 1):
        when = stamps[r] if stamps else str(r + 1)
        rows.append([when, "history"] + [_num(v) for v in source.y[r]])
    after = _continue_times(stamps, source.horizon) if stamps else \
        [str(origin + 2 + k) for k in range(source.horizon)]
    for k in range(source.horizon):
        rows.append([after[k], "forecast"] + [_num(v) for v in future[k]])
    summary = (f"forecast of {', '.join(source.targets)} for the {source.horizon} step(s) "
               f"after the last row of {source.path}{by}")
    return rows, summary


def forecast_next(model, source) -> np.ndarray:
    """The run's forecast of the ``horizon`` steps after the last row of ``source``, in the
    target's units: ``(horizon, targets)``."""
    origin = len(source.x) - 1
    batch = source.window_batch(np.array([origin]))
    out = outputs(model, source, {"data": batch["data"]}).numpy()
    return source.to_units(out, np.array([origin]))[0]


def _num(v: float) -> str:
    return f"{v:.6g}"


def _continue_times(stamps: list, count: int) -> list[str]:
    """The ``count`` time stamps that follow ``stamps`` at their usual pace, written the way
    the file writes them (a date, a date and time, a number); ``+k`` when they cannot be."""
    last = stamps[-1].strip()
    numbers = [headers.parse_number(s) for s in stamps[-50:]]
    days = [headers.parse_time(s) for s in stamps[-50:]]
    if all(d is not None for d in days) and len(days) > 1:
        step = float(np.median(np.diff(days)))
        base = _dt.datetime(1970, 1, 1) + _dt.timedelta(days=days[-1])
        out = []
        for k in range(1, count + 1):
            when = _step_date(base, step, k)
            if last.isdigit() and len(last) == 8:
                out.append(when.strftime("%Y%m%d"))
            elif len(last) <= 7:
                out.append(when.strftime("%Y-%m"))
            elif len(last) <= 10:
                out.append(when.strftime("%Y-%m-%d").replace("-", "/" if "/" in last else "-"))
            else:
                out.append(when.isoformat(sep=" "))
        return out
    if all(n is not None for n in numbers) and len(numbers) > 1:
        step = float(np.median(np.diff(numbers)))
        is_int = all(float(n).is_integer() for n in numbers) and float(step).is_integer()
        return [str(int(numbers[-1] + k * step)) if is_int else _num(numbers[-1] + k * step)
                for k in range(1, count + 1)]
    return [f"+{k}" for k in range(1, count + 1)]


def _step_date(base: _dt.datetime, step_days: float, k: int) -> _dt.datetime:
    """``base`` moved ``k`` steps on: whole months for monthly, quarterly or yearly data."""
    months = 1 if 27 <= step_days <= 32 else 3 if 88 <= step_days <= 93 else \
        12 if 360 <= step_days <= 370 else 0
    if months:
        total = base.month - 1 + months * k
        return base.replace(year=base.year + total // 12, month=total % 12 + 1,
                            day=min(base.day, 28))
    return base + _dt.timedelta(days=step_days * k)
