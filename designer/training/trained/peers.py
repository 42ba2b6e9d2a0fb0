"""Strong non-deep peers beside every evaluation: MiniRocket and MultiRocket-Hydra for a
classifier (the better of the two named), AutoETS for a forecaster, fitted on the data the run
learnt from and scored on exactly what the model is.

>>> peer = classify_peer(source)   # {"name": "MiniRocket", "accuracy": 0.99, "seconds": 1.4, ...}
>>> peers = [classify_peer(source, peer=name) for name in CLASSIFIER_PEERS]

Both come with the optional extra ``peers`` (aeon and statsforecast); without it
:func:`peer_beside` answers one line saying how to get them, and a peer that fails on a data
set is told in one sentence: the rest of the report stands either way. No torch, no Qt: plain
numbers in, plain data out.

Fairness. The peer learns from the sequences or rows the run trained *and* validated on (the
run picked its best checkpoint on the validation split; the peer's ridge picks its penalty by
cross-validation on the same data) and never sees the test split. Classifier inputs are
z-scored with the run's own statistics; sequences of different lengths are padded after their
end with the training mean, as the net's batches are. A forecaster's peer forecasts every test
window from the same origin, over the same horizon, scored on the same values the model is.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

INSTALL = "pip install 'rnn-designer[peers]'"
MISSING = f"no non-deep peer: its packages (aeon, statsforecast) are not installed; {INSTALL}"
MIN_LENGTH = 9      # MiniRocket's kernels span 9 steps
ETS_MAX_SEASON = 24  # ETS keeps a season of at most 24 steps (as R's forecast::ets)
SEED = 0
MAX_FIT_SEQUENCES = 10_000  # more are sampled down (MiniRocket's features: 10,000 a sequence)
PREDICT_CHUNK = 1_000       # test sequences transformed at once
MAX_ETS_STEPS = 50_000_000  # history steps run over, all windows together (about a minute)
# aeon's classifiers beside a classifier: MiniRocket (10,000 kernels and a ridge classifier,
# its penalty cross-validated) and MultiRocket-Hydra (MultiRocket's and Hydra's features side
# by side under the same ridge; stronger on some sets, weaker on others)
CLASSIFIER_PEERS = ("MiniRocket", "MultiRocket-Hydra")


def _classifier(name: str, seed: int):
    from aeon.classification.convolution_based import (MiniRocketClassifier,
                                                       MultiRocketHydraClassifier)
    made = {"MiniRocket": MiniRocketClassifier,
            "MultiRocket-Hydra": MultiRocketHydraClassifier}[name]
    return made(random_state=seed, n_jobs=1)


def peer_beside(report: dict, fit) -> dict:
    """``report`` with ``report["peer"]``: what ``fit()`` returns (a peer's scores), with the
    model's ratio to it (``ratio``: the model's accuracy or RMSE over the peer's); or
    ``{"missing": MISSING}`` when the extra is not installed, or ``{"name", "error"}`` with one
    sentence when the peer failed. Where ``fit()`` returns several peers (a classifier's,
    each from `attempt`), ``report["peers"]`` holds them all and ``report["peer"]`` is the
    better (``better``: True; on a tie, the first, unmarked)."""
    name = CLASSIFIER_PEERS[0] if report["task"] == "classify" else "AutoETS"
    try:
        peer = fit()
    except ImportError:
        peer = {"missing": MISSING}
    except Exception as e:  # noqa: BLE001 - a failing peer is reported, the report stands
        peer = _failed(name, e)
    key = "accuracy" if report["task"] == "classify" else "rmse"
    for one in peer if isinstance(peer, list) else [peer]:
        if "error" not in one and "missing" not in one:
            mine, theirs = report.get(key), one.get(key)
            one["ratio"] = (mine / theirs) if mine is not None and theirs else None
    if isinstance(peer, list):
        report["peers"] = peer
        scored = [p for p in peer if "error" not in p]
        peer = max(scored, key=lambda p: p[key]) if scored else peer[0]
        if sum(p[key] == peer[key] for p in scored) == 1 < len(scored):  # not a tie
            peer["better"] = True
    report["peer"] = peer
    return report


def attempt(name: str, fit) -> dict:
    """One peer of several: ``fit()``'s scores, or ``{"name", "error"}`` in one sentence (the
    others still stand); an `ImportError` (no extra) goes up."""
    try:
        return fit()
    except ImportError:
        raise
    except Exception as e:  # noqa: BLE001 - a failing peer is reported, the report stands
        return _failed(name, e)


def _failed(name: str, error: Exception) -> dict:
    reason = str(error).strip().splitlines()[0] if str(error).strip() else \
        type(error).__name__
    return {"name": name, "error": f"{name} could not be scored here ({reason})"}


# ------------------------------------------------------------------------- classifiers --
def classify_peer(score, fit=None, seed: int = SEED, peer: str = "MiniRocket") -> dict:
    """MiniRocket (aeon's ``MiniRocketClassifier``: 10,000 kernels, then a ridge classifier
    with its penalty cross-validated), or another of `CLASSIFIER_PEERS` (``peer``), fitted on
    ``fit``'s train and val sequences and scored on ``score``'s test split.

    Parameters
    ----------
    score : designer.training.data.classes.ClassesSource
        Its labelled ``test`` sequences are scored, as ``evaluate`` scores the model.
    fit : ClassesSource, optional
        Where the training sequences come from (default ``score``; another when ``evaluate``
        scores a file of its own).
    seed : int
        Seeds the peer's kernels (MiniRocket's biases).
    peer : str
        Which of `CLASSIFIER_PEERS`.

    Returns
    -------
    dict
        ``{"name", "accuracy", "n", "fitted_on", "length", "seconds"}``; ``length``: the steps
        every sequence was padded to (``None`` when they were all of one length already).
    """
    fit = score if fit is None else fit
    train = _labelled(fit, [*fit.parts.get("train", ()), *fit.parts.get("val", ())])
    test = _labelled(score, score.parts["test"])
    if not len(test):
        raise ValueError("no labelled test sequence")
    if len(set(fit.label_ids[train].tolist())) < 2:
        raise ValueError("its training sequences are all of one class")
    start = time.perf_counter()
    note = None
    if len(train) > MAX_FIT_SEQUENCES:
        note = (f"fitted on {MAX_FIT_SEQUENCES:,} of the {len(train):,} training sequences, "
                "drawn at random")
        train = np.sort(np.random.default_rng(seed).choice(train, MAX_FIT_SEQUENCES,
                                                             replace=False))
    lengths = {len(s) for src, idx in ((fit, train), (score, test))
               for s in (src.seqs.series[i] for i in idx)}
    length = max(max(lengths), MIN_LENGTH)
    clf = _classifier(peer, seed)
    clf.fit(_panel(fit, train, length), fit.label_ids[train])
    predicted = np.concatenate([np.asarray(clf.predict(_panel(score, test[i:i + PREDICT_CHUNK],
                                                              length)))
                                for i in range(0, len(test), PREDICT_CHUNK)])
    accuracy = float(np.mean(predicted == score.label_ids[test]))
    out = {"name": peer, "accuracy": accuracy, "n": len(test), "fitted_on": len(train),
           "length": None if len(lengths) == 1 and length == lengths.pop() else int(length),
           "seconds": time.perf_counter() - start}
    if note:
        out["note"] = note
    return out


def _labelled(source, index) -> np.ndarray:
    index = np.asarray(index, np.int64)
    return index[source.label_ids[index] >= 0]


def _panel(source, index: np.ndarray, length: int) -> np.ndarray:
    """(N, channels, length) float64: the sequences z-scored with the run's statistics and
    padded after their end with 0 (the training mean)."""
    mean = np.asarray(source.stats["mean"], np.float64)
    std = np.asarray(source.stats["std"], np.float64)
    std = np.where(std > 0, std, 1.0)
    out = np.zeros((len(index), len(source.features), length), np.float64)
    for row, i in enumerate(index):
        s = (np.asarray(source.seqs.series[i], np.float64) - mean) / std
        out[row, :, :len(s)] = s.T
    return out


# ------------------------------------------------------------------------- forecasters --
def forecast_peer(score, origins: np.ndarray, fit=None) -> tuple[dict, np.ndarray]:
    """AutoETS (statsforecast) chosen and fitted, target by target, on the rows before
    ``fit``'s test split, then run over ``score``'s series up to each origin to forecast its
    horizon (the fitted model's parameters are kept; only its states follow the series).

    A season longer than ETS keeps (24 steps: weekly data's 52) is taken out first: MSTL finds
    the seasonal profile on the same rows, AutoETS forecasts what is left, and the profile's
    next values are added back (statsforecast's way for long seasons). Scoring another file
    than the run's, whose phase in the season is unknown, such a season is left out.

    Parameters
    ----------
    score : designer.training.data.series.SeriesSource
        The series whose windows are scored.
    origins : ndarray
        The test windows' origins, as the model's forecasts were made from.
    fit : SeriesSource, optional
        Whose training and validation rows the peer is chosen and fitted on (default
        ``score``).

    Returns
    -------
    (dict, ndarray)
        ``{"name", "model", "season", "fitted_on", "seconds"}`` (and ``note``) and the
        forecasts (N, horizon, targets) in the target's units.
    """
    from statsforecast.models import MSTL, AutoETS

    same = fit is None or fit is score
    fit = score if fit is None else fit
    start = time.perf_counter()
    rows = int(fit.bounds["test"][0]) or int(fit.bounds["train"][1])
    if rows < 10:
        raise ValueError(f"{rows} rows before the test split are too few to fit")
    period = int(fit.period or 0)
    long_season = period > ETS_MAX_SEASON and same and rows >= 2 * period + 2
    season = period if 1 < period <= ETS_MAX_SEASON and rows >= 2 * period + 2 else 1
    h = score.horizon
    origins = np.asarray(origins, np.int64)
    steps = int(np.sum(origins + 1, dtype=np.float64))
    if steps > MAX_ETS_STEPS:
        raise ValueError(f"running it up to each of {len(origins):,} windows would go over "
                         f"{steps:,} steps, minutes of work; score a shorter file")
    ahead = np.arange(1, h + 1)
    pred = np.zeros((len(origins), h, len(score.targets)), np.float64)
    chosen = []
    for j in range(len(score.targets)):
        y = np.asarray(score.y[:, j], np.float64)
        profile = np.zeros(len(y) + h + 1)
        if long_season:
            mstl = MSTL(season_length=period, trend_forecaster=AutoETS(model="ZZN"))
            parts = mstl.fit(y[:rows]).model_
            seasonal = np.asarray(parts[[c for c in parts.columns if c.startswith("seasonal")]]
                                  .sum(axis=1), np.float64)
            last = seasonal[rows - period:rows]  # the season as it was last seen, repeated
            profile = last[(np.arange(len(profile)) - (rows - period)) % period]
            model = AutoETS(model="ZZN")
        else:
            model = AutoETS(season_length=season)
        rest = y - profile[:len(y)]
        model = model.fit(rest[:rows])
        chosen.append(str(model.model_.get("method", "ETS")))
        for i, o in enumerate(origins):
            pred[i, :, j] = model.forward(y=rest[:o + 1], h=h)["mean"] + profile[o + ahead]
    if not np.isfinite(pred).all():
        raise ValueError("its forecasts are not finite numbers")
    info = {"name": "AutoETS", "model": ", ".join(dict.fromkeys(chosen)),
            "season": period if long_season else (season if season > 1 else None),
            "fitted_on": rows, "seconds": time.perf_counter() - start}
    if not same:
        info["fit_file"] = str(fit.path)
    if long_season:
        info["model"] = f"MSTL({period}) + {info['model']}"
    elif period > 1 and season == 1:
        info["note"] = f"fitted without the season of {period} steps"
    return info, pred


def peer_words(peer: dict, task: str, long: bool = False) -> str:
    """The peer in words: ``MiniRocket 99.33%`` or ``AutoETS RMSE 0.4106`` (``long``: the line
    ``evaluate`` prints, with the ratio and how it was fitted); a missing or failed peer's one
    sentence."""
    if "missing" in peer or "error" in peer:
        text = peer.get("missing") or peer["error"]
        return f"  peer: {text}" if long else text
    classify = task == "classify"
    score = f"{peer['accuracy']:.2%}" if classify else f"RMSE {_num(peer['rmse'])}"
    if not long:
        return f"{peer['name']} {score}"
    ratio = peer.get("ratio")
    told = [] if ratio is None or not math.isfinite(ratio) else \
        [f"model / peer {'accuracy' if classify else 'RMSE'} {ratio:.3f}"]
    if classify:
        padded = f", padded to {peer['length']} steps" if peer.get("length") else ""
        told.append(f"fitted on {peer['fitted_on']:,} sequences{padded} "
                    f"in {peer['seconds']:.1f} s")
        if peer.get("note"):
            told.append(peer["note"])
        which = "non-deep peer, the better" if peer.get("better") else "non-deep peer"
        return (f"{peer['name']} ({which}): accuracy {score} on the same sequences "
                f"({'; '.join(told)})")
    rows = f"the {peer['fitted_on']:,} rows" + (
        f" of {Path(peer['fit_file']).name} before its test split" if peer.get("fit_file")
        else " before the test split")
    how = (f"    {peer['name']}: {peer['model']}, fitted on {rows} in {peer['seconds']:.1f} s"
           + (f"; {peer['note']}" if peer.get("note") else ""))
    label = f"{peer['name']} (peer)"
    return (f"  {label:<20s} {score}  MAE {_num(peer['mae'])}"
            + (f"  ({told[0]})" if told else "") + "\n" + how)


def _num(value) -> str:
    return "-" if value is None else f"{value:.4g}"
