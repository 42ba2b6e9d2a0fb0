"""What the window draws for a forecaster: its forecasts over the test split beside the truth
and the simple baselines, and an autoregressive roll-out beyond the horizon.

>>> view = forecast_view("runs/co2", rounds=13)
>>> view["report"]["rmse"], view["rollout"]["values"].shape      # 0.45, (52, 1)

A roll-out starts at one origin, forecasts ``horizon`` steps, writes them into the series as
if they had been read, and forecasts again from the last of them, ``rounds`` times: it shows
how far the net can go on its own output. Input columns that are not forecast (exogenous
inputs) keep the file's values, so a roll-out of such a net stops at the file's end; a net that
reads only its targets rolls on past it, into the future. Scores are the ``evaluate`` numbers
(`designer.training.trained.evaluate`). Only numpy arrays and plain numbers leave here.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from designer.graph import headers

from designer.training.trained.evaluate import (baseline_names, error_scores, forecast_arrays,
                                                 forecast_report, open_for, outputs, with_peer)
from designer.training.trained.generate import GenerateError, load_trained

MAX_ROUNDS = 200


def forecast_view(run_dir: str | Path, which: str = "best", device: str = "cpu",
                  rounds: int | None = None, origin: int | None = None,
                  scores: bool = True) -> dict:
    """The test split's forecasts, scores and a roll-out of a forecasting run.

    Parameters
    ----------
    rounds
        Horizons to roll out (``None``: `default_rounds`; 0: none).
    origin
        The row the roll-out starts from (its last known value; ``None``: just before the test
        split). Clamped to the rows a window can start from.
    scores
        Also forecast the whole test split and score it (off: only the roll-out, for moving
        its origin).

    Returns
    -------
    dict
        ``targets``, ``horizon``, ``seq_len``, ``period``; per row ``x`` (seconds since 1970
        when ``x_is_date``, else the time column's numbers or the row number), ``y`` (rows,
        targets) and ``filled`` (the cell was empty and filled in); ``splits`` (row bounds);
        with ``scores``: ``origins``, ``pred`` and ``baselines`` (N, horizon, targets),
        ``lead_rmse`` (horizon, targets) and ``lead_baseline_rmse``, and ``report`` (as
        ``evaluate``); ``rollout`` (see `roll_out`) and ``checkpoint_step``.

    Raises
    ------
    GenerateError
        Not a forecasting run, or its data has no test split.
    designer.training.data.DataError, designer.training.run.checkpoint.CheckpointError
    """
    model = load_trained(run_dir, which, device)
    if model.kind != "series":
        raise GenerateError(f"{model.path} was trained on {model.kind} data, not a series to "
                            "forecast")
    source = open_for(model)
    if "test" not in source.splits:
        raise GenerateError(f"{source.path} has no test split to score (set the data layer's "
                            "test_fraction above 0)")
    x, is_date = time_axis(source)
    view = {"kind": "series", "targets": list(source.targets), "horizon": source.horizon,
            "seq_len": source.seq_len, "period": source.period, "x": x, "x_is_date": is_date,
            "y": source.y.copy(), "filled": source.y_missing.copy(),
            "splits": {s: tuple(int(v) for v in source.bounds[s]) for s in source.bounds},
            "checkpoint_step": int(model.meta["step"]), "run_dir": str(run_dir)}
    if scores:
        arrays = forecast_arrays(model, source)
        view["report"] = with_peer({**forecast_report(source, arrays), "file": str(source.path),
                                    "split": "test", "checkpoint_step": view["checkpoint_step"]},
                                   source, arrays)
        origins, truth, mask = arrays["origins"], arrays["truth"], arrays["mask"]
        view.update(origins=origins, pred=arrays["pred"])
        view["baselines"] = {name: source.baseline(origins, name)
                             for name in baseline_names(source)}
        view["lead_rmse"] = _lead_rmse(arrays["pred"], truth, mask)
        view["lead_baseline_rmse"] = {name: _lead_rmse(b, truth, mask)
                                      for name, b in view["baselines"].items()}
    first = int(source.origins("test")[0])
    rounds = default_rounds(source) if rounds is None else rounds
    view["rollout"] = roll_out(model, source, first if origin is None else origin, rounds, x)
    view["default_rounds"] = default_rounds(source)
    return view


def default_rounds(source) -> int:
    """Enough horizons to cover a season (at least four), so the roll-out shows whether the
    net keeps the cycle going on its own."""
    h = source.horizon
    return int(min(MAX_ROUNDS, max(4, math.ceil(source.period / h) if source.period else 4)))


def origin_range(source) -> tuple[int, int]:
    """The first and last rows a roll-out can start from (a whole window of history
    before it)."""
    return source.seq_len - 1 + source.lead, len(source.x) - 1


def roll_out(model, source, origin: int, rounds: int, axis: np.ndarray | None = None) -> dict:
    """Forecast ``rounds`` horizons from ``origin``, each from the forecasts before it
    (``axis``: the rows' `time_axis`, when it is at hand).

    Returns
    -------
    dict
        ``origin`` (the row it starts from), ``rows`` (R * horizon,) the rows forecast (past
        the file's last row when it rolls on into the future), ``x`` their positions on the
        time axis, ``values`` (R * horizon, targets) in units, ``truth`` (NaN where the file
        has no value), ``rmse`` per target against the truth where there is one (``None``
        where there is none), and ``note``: why it stopped short, or ``None``.
    """
    lo, last = origin_range(source)
    origin = int(min(max(origin, lo), last))
    h, rows = source.horizon, len(source.x)
    rounds = max(0, min(int(rounds), MAX_ROUNDS))
    fed = [source.inputs.index(t) for t in source.targets if t in source.inputs]
    exogenous = [c for c in source.inputs if c not in source.targets]
    note = None
    if exogenous and origin + rounds * h > last:
        fits = (last - origin) // h
        note = (f"the roll-out stops at the file's end after {fits} horizon"
                f"{'s' if fits != 1 else ''}: the net also reads "
                f"{', '.join(exogenous[:3])}, which it does not forecast")
        rounds = fits
    extra = max(0, origin + rounds * h - last)
    x = np.concatenate([source.x, np.repeat(source.x[-1:], extra, 0)])
    y = np.concatenate([source.y, np.repeat(source.y[-1:], extra, 0)])
    values = []
    o = origin
    for _ in range(rounds):
        reading = source.with_values(x, y)
        batch = reading.window_batch(np.array([o]))
        out = outputs(model, reading, {"data": batch["data"]}).numpy()
        future = reading.to_units(out, np.array([o]))[0]               # (h, targets)
        y[o + 1:o + h + 1] = future
        for j in fed:
            x[o + 1:o + h + 1, j] = future[:, source.targets.index(source.inputs[j])]
        values.append(future)
        o += h
    targets = len(source.targets)
    values = np.concatenate(values) if values else np.zeros((0, targets))
    forecast_rows = origin + 1 + np.arange(len(values))
    truth = np.full(values.shape, np.nan)
    known = forecast_rows < rows
    read = forecast_rows[known]
    truth[known] = np.where(source.y_missing[read], np.nan, source.y[read])
    rmse = []
    for j in range(targets):
        ok = ~np.isnan(truth[:, j])
        rmse.append(float(np.sqrt(np.mean((values[ok, j] - truth[ok, j]) ** 2)))
                    if ok.any() else None)
    if axis is None:
        axis, _ = time_axis(source)
    return {"origin": origin, "rows": forecast_rows, "x": positions(axis, forecast_rows),
            "values": values, "truth": truth, "rmse": rmse, "note": note,
            "range": (lo, last)}


def time_axis(source) -> tuple[np.ndarray, bool]:
    """Each row's place on the x axis and whether it is a date: seconds since 1970 when every
    time stamp is a date, the time column's numbers when they all are numbers, else the row
    number (from 1)."""
    times = source.times
    if times:
        days = [headers.parse_time(t) for t in times]
        if all(d is not None for d in days) and _increasing(days):
            return np.asarray(days, dtype=np.float64) * 86400.0, True
        numbers = [headers.parse_number(t) for t in times]
        if all(n is not None for n in numbers) and _increasing(numbers):
            return np.asarray(numbers, dtype=np.float64), False
    return np.arange(1, len(source.x) + 1, dtype=np.float64), False


def positions(axis: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Where ``rows`` lie on ``axis``, continued past its end at its usual step."""
    rows = np.asarray(rows, dtype=np.int64)
    step = float(np.median(np.diff(axis[-50:]))) if len(axis) > 1 else 1.0
    inside = np.minimum(rows, len(axis) - 1)
    return np.where(rows < len(axis), axis[inside],
                    axis[-1] + (rows - (len(axis) - 1)) * step)


def _lead_rmse(pred: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """RMSE per step ahead and target, (horizon, targets); NaN where nothing counts."""
    h, t = pred.shape[1], pred.shape[2]
    out = np.full((h, t), np.nan)
    for k in range(h):
        for j in range(t):
            r = error_scores(pred[:, k, j], truth[:, k, j], mask[:, k, j])["rmse"]
            out[k, j] = np.nan if r is None else r
    return out


def _increasing(values: list) -> bool:
    return all(b > a for a, b in zip(values, values[1:]))
