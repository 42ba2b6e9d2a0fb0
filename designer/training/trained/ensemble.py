"""Seed ensembles: several runs of one task scored or used together (``rnn-designer evaluate
RUN RUN2 ...``, ``rnn-designer predict RUN RUN2 ... --input FILE``).

``evaluate_ensemble(["runs/s/best-trial-7", "runs/s/best-trial-7-seed-2"])`` gives the report
``evaluate`` prints, for the mean of the two runs' outputs, with ``members``: each run's own
``accuracy`` (or ``rmse`` and ``mae``).

On small data a run's test score moves by several points from one training seed to the next;
the mean of a few runs' outputs moves less and is usually better than each. Each run computes
its output on the same sequences or windows, read the way it was trained (its own statistics);
a classifier's ensemble averages the class probabilities (softmax), a forecaster's the
predicted values, and the average is then scored or written as one run's would be. Every run
must be of the same task and data (the same classes in the same order, or the same targets and
horizon); otherwise one sentence names the run folder that differs.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from designer.training.trained.evaluate import (classify_arrays, classify_report, error_scores,
                                                 evaluate_run, finish, forecast_arrays,
                                                 forecast_report, format_report, open_for,
                                                 test_source)
from designer.training.trained.generate import GenerateError, TrainedModel, load_trained


def load_members(run_dirs: Sequence[str | Path], which: str = "best",
                 device: str = "cpu") -> list[TrainedModel]:
    """The runs' nets, checked to be of one task and one data shape (`check_alike`)."""
    seen: dict[Path, str] = {}
    for run_dir in run_dirs:
        key = Path(run_dir).resolve()
        if key in seen:
            raise GenerateError(f"{run_dir} is given twice; an ensemble's runs must differ")
        seen[key] = str(run_dir)
    models = [load_trained(run_dir, which, device) for run_dir in run_dirs]
    check_alike(models, [str(r) for r in run_dirs])
    return models


def check_alike(models: list[TrainedModel], names: list[str]) -> None:
    """Raise `GenerateError` naming the first run whose task or data shape differs from the
    first run's: another kind of data, other classes (or another order of them), other
    features, or other targets or horizon."""
    first, ref = models[0], names[0]
    a = first.meta["data"]
    for model, name in zip(models[1:], names[1:]):
        b = model.meta["data"]
        if b["kind"] != a["kind"]:
            raise GenerateError(f"{name} was trained on {b['kind']} data and {ref} on "
                                f"{a['kind']} data; an ensemble's runs must share one task")
        for key, what in (("classes", "classes"), ("targets", "targets"),
                          ("horizon", "horizon"), ("features", "features"),
                          ("inputs", "inputs")):
            if a.get(key) != b.get(key):
                raise GenerateError(f"{name} was trained with {what} {_words(b.get(key))}, "
                                    f"not {_words(a.get(key))} as {ref}; an ensemble's runs "
                                    "must share one task and data shape")


def _words(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "none"
    return "none" if value is None else str(value)


def check_same_items(first: np.ndarray, other: np.ndarray, name: str, ref: str,
                     what: str) -> None:
    """Refuse a member that reads other sequences or windows than the first member."""
    if first.shape != other.shape or not np.array_equal(first, other):
        raise GenerateError(f"{name} reads other {what} than {ref} (another split or window "
                            "length); an ensemble's runs must be scored on the same data")


def check_same_file(first, source, name: str, ref: str) -> None:
    """Refuse a member whose test data comes from another file than the first member's."""
    a, b = (Path(getattr(s, "test_path", s.path)).resolve() for s in (first, source))
    if a != b:
        raise GenerateError(f"{name} is tested on {b} and {ref} on {a}; an ensemble's runs "
                            "must be scored on the same data")


def evaluate_ensemble(run_dirs: Sequence[str | Path], data: str | Path | None = None,
                      which: str = "best", device: str = "cpu", peer: bool = True) -> dict:
    """The ``evaluate`` report of the runs' ensemble: the single run's keys, scored on the
    averaged outputs, and ``members``: each run's folder and its own score (``accuracy``, or
    ``rmse`` and ``mae``) on the same data. The peer is fitted once.

    Raises
    ------
    GenerateError
        A run of another task or data shape, a run given twice, or no test split.
    designer.training.data.DataError, designer.training.run.checkpoint.CheckpointError
        The data or a checkpoint cannot be used.
    """
    names = [str(r) for r in run_dirs]
    models = load_members(run_dirs, which, device)
    sources = [test_source(model, data) for model in models]
    first = sources[0]
    for source, name in zip(sources[1:], names[1:]):
        check_same_file(first, source, name, names[0])
    members = []
    if models[0].kind == "series":
        each = [forecast_arrays(model, source) for model, source in zip(models, sources)]
        for arrays, name in zip(each, names):
            check_same_items(each[0]["origins"], arrays["origins"], name, names[0],
                             "windows")
            members.append({"run_dir": name, **error_scores(arrays["pred"], arrays["truth"],
                                                            arrays["mask"])})
        arrays = {**each[0], "pred": mean(a["pred"] for a in each)}
        report = forecast_report(first, arrays)
    else:
        each = [classify_arrays(model, source) for model, source in zip(models, sources)]
        for arrays, name, source in zip(each, names, sources):
            check_same_items(np.stack([each[0]["index"], each[0]["truth"]]),
                             np.stack([arrays["index"], arrays["truth"]]), name, names[0],
                             "sequences")
            own = classify_report(source, arrays)
            members.append({"run_dir": name, "accuracy": own["accuracy"]})
        report = classify_report(first, {"truth": each[0]["truth"],
                                         "probs": mean(a["probs"] for a in each)})
        arrays = None
    for member, model in zip(members, models):
        member["checkpoint_step"] = int(model.meta["step"])
    report = finish(report, models[0], first, data, arrays, peer)
    report["members"] = members
    return report


def evaluate_runs(run_dirs: Sequence[str | Path], data: str | Path | None = None,
                  which: str = "best", device: str = "cpu", peer: bool = True) -> dict:
    """One run's report (`evaluate.evaluate_run`), or several runs' (`evaluate_ensemble`)."""
    if len(run_dirs) == 1:
        return evaluate_run(run_dirs[0], data, which, device, peer)
    return evaluate_ensemble(run_dirs, data, which, device, peer)


def format_runs(report: dict) -> str:
    """The plain text ``rnn-designer evaluate`` prints for one run or an ensemble."""
    if "members" not in report:
        return format_report(report)
    label = f"ensemble of {len(report['members'])}"
    return "\n".join(member_lines(report) + [format_report(report, label)])


def member_lines(report: dict) -> list[str]:
    """What ``evaluate`` prints above an ensemble's report: the runs, each with its own
    score."""
    members = report["members"]
    classify = report["task"] == "classify"
    how = "class probabilities" if classify else "forecasts"
    lines = [f"ensemble of {len(members)} runs, their {how} averaged; each run alone:"]
    width = max(len(m["run_dir"]) for m in members)
    for m in members:
        score = f"accuracy {m['accuracy']:.2%}" if classify else \
            f"RMSE {_num(m['rmse'])}  MAE {_num(m['mae'])}"
        lines.append(f"  {m['run_dir']:<{width}s}  {score}")
    return lines


def _num(v) -> str:
    return "-" if v is None else f"{v:.4g}"


# ----------------------------------------------------------------------------- predict --
def mean_probs(models: list[TrainedModel], names: list[str], input_file) -> tuple:
    """``(source, mean probabilities (N, classes), each run's probabilities)`` of every
    sequence of ``input_file``, read by each run as it was trained."""
    sources = [open_for(model, input_file, labelled=False) for model in models]
    each = [classify_arrays(model, source) for model, source in zip(models, sources)]
    for arrays, name in zip(each, names):
        check_same_items(each[0]["index"], arrays["index"], name, names[0], "sequences")
    probs = [a["probs"] for a in each]
    return sources[0], mean(probs), probs


def mean(arrays) -> np.ndarray:
    """The element-wise mean of the members' outputs, in double precision."""
    return np.mean(np.stack([np.asarray(a, np.float64) for a in arrays]), axis=0)
