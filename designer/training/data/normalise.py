"""Normalisation statistics, and the check that a file's values can be normalised at all.

>>> mean, std = moments(x[train])                    # per column, in float64
>>> xn = normalised(x, mean, std)                    # float32, what the net reads
>>> check_normalisable(path, columns, peaks(x), mean, std, finite_columns(xn), normalize=True)

Values near float64's limit (1e308) make a column's sum and spread overflow; values whose
normalised form passes float32's limit (3.4e38) overflow the net's numbers. Either way the net
would train on NaNs and stop on a loss that is not a number, blaming the learning rate; this
refuses the file instead, in one sentence naming it and the column(s), and keeps numpy's
overflow warnings off the user's screen. Large values with a finite spread (1e30 give or take
1e29) normalise to ordinary numbers and pass.
"""
from __future__ import annotations

import numpy as np

from designer.training.data.errors import DataError

F32_MAX = float(np.finfo(np.float32).max)
TINY_STD = 1e-12  # a column steadier than this is only centred (its deviation taken as 1)
BLOCK_VALUES = 1 << 22  # values normalised at a time


def moments(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and deviation over the rows of ``values`` (rows, columns), computed
    in float64 a column at a time (a table of millions of rows is not copied whole); a
    deviation below ``TINY_STD`` is 1. An overflowing statistic comes back ``inf`` or
    ``nan`` (for `check_normalisable`), without numpy's warning."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = values.mean(0, dtype=np.float64)
        if values.ndim == 2:
            std = np.array([values[:, j].std(dtype=np.float64)
                            for j in range(values.shape[1])], np.float64)
        else:
            std = values.std(0, dtype=np.float64)
    return mean, np.where(np.isnan(std) | (std > TINY_STD), std, 1.0)


def normalised(values: np.ndarray, mean, std) -> np.ndarray:
    """``(values - mean) / std`` as float32; ``inf`` or ``nan`` where that overflows (no
    warning). Worked out a block of rows at a time, so that no float64 copy of a large
    table is made."""
    out = np.empty(values.shape, np.float32)
    mean, std = np.asarray(mean), np.asarray(std)
    step = max(1, BLOCK_VALUES // max(1, int(np.prod(values.shape[1:], dtype=np.int64))))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for i in range(0, len(values), step):
            out[i:i + step] = (values[i:i + step] - mean) / std
    return out


def finite_normalised(values: np.ndarray, mean, std) -> np.ndarray:
    """`finite_columns` of ``normalised(values, mean, std)``, without holding it whole."""
    finite = np.ones(values.shape[-1], bool)
    step = max(1, BLOCK_VALUES // max(1, int(np.prod(values.shape[1:], dtype=np.int64))))
    for i in range(0, len(values), step):
        finite &= finite_columns(normalised(values[i:i + step], mean, std))
    return finite


def finite_columns(normal: np.ndarray) -> np.ndarray:
    """Whether each column (the last axis) of ``normal`` holds finite numbers only."""
    return np.isfinite(normal.reshape(-1, normal.shape[-1])).all(0)


def peaks(values: np.ndarray) -> np.ndarray:
    """Each column's value of the largest magnitude, sign kept (rows, columns) -> (columns,)
    (NaN for a column of NaNs only)."""
    flat = values.reshape(-1, values.shape[-1])
    if not len(flat):
        return np.zeros(flat.shape[1])
    with np.errstate(invalid="ignore"):
        high, low = np.fmax.reduce(flat, 0), np.fmin.reduce(flat, 0)
    return np.where(np.abs(low) > np.abs(high), low, high).astype(np.float64)


def check_normalisable(path, names: list[str], peak, mean, std, finite, normalize: bool,
                       fit: str = "the training rows", trained: bool = False,
                       noun: str = "column") -> None:
    """Refuse the columns whose statistics or normalised values are not finite numbers.

    Parameters
    ----------
    path
        The file, for the message.
    names : list of str
        The columns' names, in the order of the other arguments.
    peak, mean, std
        Each column's value of the largest magnitude (`peaks`) and its statistics (`moments`,
        or those a run kept).
    finite
        Whether each column's normalised values are all finite (`finite_columns`).
    normalize : bool
        The data layer's ``normalize`` (off, the values are read as they are).
    fit : str
        What the statistics were computed on, for the message.
    trained : bool
        The statistics are a run's, not the file's own.

    Raises
    ------
    DataError
        "co2.csv: column 'value' holds values up to 1.7e+308, too large to normalise (their
        spread overflows); rescale the column".
    """
    mean, std = np.asarray(mean, np.float64), np.asarray(std, np.float64)
    wild = ~(np.isfinite(mean) & np.isfinite(std))
    bad = [j for j in range(len(names)) if wild[j] or not finite[j]]
    if not bad:
        return
    worst = max(bad, key=lambda j: abs(peak[j]))
    value = float(peak[worst])
    many = len(bad) > 1
    quoted = [f"'{names[j]}'" for j in bad]
    listed = quoted[0] if not many else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    which = f"{noun}{'s' if many else ''} {listed} {'hold' if many else 'holds'}"
    reach = f"values {'up' if value >= 0 else 'down'} to {value:.3g}"
    them = f"the {noun}{'s' if many else ''}"
    if not normalize:
        why = (f"more than the {F32_MAX:.2g} that the net's 32-bit numbers hold; turn the data "
               f"layer's normalize on or rescale {them}")
    elif wild[bad].any():
        why = f"too large to normalise (their spread overflows); rescale {them}"
    else:
        whose = "the spread the run trained on" if trained else f"the spread of {fit}"
        why = (f"too large to normalise by {whose} ({float(std[worst]):.3g}) in the net's "
               f"32-bit numbers; rescale {them}")
    raise DataError(f"{path}: {which} {reach}, {why}")
