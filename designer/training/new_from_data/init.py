"""``rnn-designer init``: a ready-to-train project sized from a data file.

A ``.ts`` or ``.arff`` file, a table of a sequence a row with the label first (the UCR
archive's), or a long-format CSV (a series id first whose rows come in runs, a label constant
within each series), is labelled sequences to classify; any other CSV or a ``.npy`` is a
series to forecast (`designer.graph.task_guess`; a table that could be either is a question).
A forecaster reads its windows with a recurrent layer; a classifier is MiniRocket's random
convolution features under the head cross-validation prefers on the training sequences (an
InnerProduct solved in closed form, or BatchNorm -> InnerProduct learned by Adam:
`head_choice`), or another of the nets `designs` draws (``net``); its module doc says what each
is. Each is sized from what the file holds, with enough steps to learn and few enough to train
on a CPU in a couple of minutes (MiniRocket's classifier all its 2,000 steps where its
features, remembered on a CPU, allow it, and on a machine with a GPU), and carries a
``search`` section: what ``rnn-designer search`` varies around it.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import torch

from designer.graph import datasets, task_guess, wide_tables
from designer.graph.datasets import DataProblem
from designer.graph.model import Graph
from designer.graph.project import Project

from designer.training.data.classes import ClassesSource
from designer.training.data.errors import DataError
from designer.training.data.series import SeriesSource
from designer.training.new_from_data import designs
from designer.training.new_from_data.head_choice import Choice, choose_head

BUDGET_MS = 100_000   # the training steps' share of "a couple of minutes" on a CPU
FRAME_STEPS = 128     # sequences longer than this are read in frames that make them as long
CLASSIFIER_STEPS = 1500  # the classifier's training steps, where the CPU budget allows
ROCKET_FRAME_STEPS = 4096  # MiniRocket reads every step of sequences up to this long
NETS = tuple(designs.NET_WORDS)  # the classifiers init draws
HEADS = ("auto", "ridge", "adam")  # MiniRocket's head: cross-validated, or as asked


class InitError(Exception):
    """No project can be made; ``str()`` is one sentence naming the file."""


def guess_task(path: Path, target: str | None = None) -> str:
    """``classify`` or ``forecast``, from the file's kind and first rows
    (`designer.graph.task_guess`)."""
    try:
        return task_guess.guess_task(path, target)
    except task_guess.TaskQuestion as e:
        raise InitError(f"{e}; say which with --task forecast, or --task classify (the label "
                        "in the first column)") from None
    except DataProblem as e:
        raise DataError(str(e)) from None


def init_project(data: str | os.PathLike, task: str | None = None, target: str | None = None,
                 out: str | os.PathLike | None = None, horizon: int | None = None,
                 replace: bool = False, net: str = "rocket",
                 head: str = "auto") -> tuple[Path, list[str]]:
    """Write the project for ``data``; returns its path and lines that say what was chosen.

    ``net``: the classifier drawn, one of :data:`NETS` (``designs.NET_WORDS`` says what each
    is); ``rocket``, MiniRocket's features, by default. ``head``: MiniRocket's head, ``auto``
    (the one cross-validation on the training sequences prefers, `head_choice`), ``ridge``
    (solved in closed form) or ``adam`` (BatchNorm -> InnerProduct learned by Adam).

    ``replace``: write over an existing ``out`` (the window asks the user first); the file is
    written atomically either way, so a failure leaves what was there.

    Raises
    ------
    InitError
        The file is missing, ``out`` already exists (and ``replace`` is off), or the options
        do not fit.
    DataError
        The data itself cannot be used (one sentence naming the file and the problem).
    """
    path = Path(os.path.expanduser(os.fspath(data)))
    if not path.exists():
        raise InitError(f"{path} does not exist")
    if problem := datasets.not_regular(path):
        raise InitError(f"{problem}; give the data file")
    target_path = Path(out) if out else Path.cwd() / (path.stem + ".json")
    if not target_path.parent.is_dir():
        raise InitError(f"{target_path.parent} is not a folder, so {target_path.name} cannot "
                        "be written there (nothing was written)")
    if target_path.exists() and not (replace and target_path.is_file()):
        raise InitError(f"{target_path} already exists; give another --out (nothing was "
                        "written)")
    if net not in NETS:
        raise InitError(f"--net {net} is none of {', '.join(NETS)}")
    if head not in HEADS:
        raise InitError(f"--head {head} is none of {', '.join(HEADS)}")
    if horizon is not None and horizon < 1:
        raise InitError("--horizon must be at least 1")
    guessed = task is None
    task = task or guess_task(path, target)
    if task == "classify" and path.suffix.lower() == ".npy":
        raise InitError(f"{path} is a .npy array; labelled sequences come as .ts or a "
                        "long-format CSV")
    folder, resolved = target_path.resolve().parent, path.resolve()
    # beside or below the project: a relative path travels with it; else where it is
    where = str(resolved.relative_to(folder)) if resolved.is_relative_to(folder) else \
        str(resolved)
    if task == "forecast":
        project, lines = _forecaster(path, where, target or "", horizon or 1)
    else:
        if horizon is not None:
            raise InitError("--horizon is for forecasting; a classifier has none")
        project, lines = _classifier(path, where, target or "", net, head)
    how = "guessed from the file" if guessed else "as asked"
    lines.insert(0, f"task: {task} ({how})")
    project.name = f"{path.stem} ({task})"
    project.save(target_path)
    return target_path, lines


def _forecaster(path: Path, where: str, target: str, horizon: int) -> tuple[Project, list]:
    params = {"file": str(path), "target": target, "inputs": "", "time_column": "",
              "seq_len": 1, "horizon": horizon, "stride": 1, "batch_size": 32,
              "val_fraction": 0.15, "test_fraction": 0.15, "normalize": True,
              "predict": "change", "missing": "interpolate", "season": 0}
    probe = SeriesSource(path, params, 0)
    rows, m = len(probe.x), probe.period
    # the table stays read for the sources below (they share it); the probe's windows go
    table, probe = probe.table, None
    seq_len = m if m >= 48 else 2 * m if m >= 12 else 4 * m if m else 32
    room = int(rows * 0.7) // 3 - horizon
    seq_len = max(2, min(seq_len, room))
    params["seq_len"] = seq_len
    source = SeriesSource(path, params, 0)
    del table
    if _better_start(source) == "season":
        try:  # a season of history before every window: is there room for it?
            seasonal = SeriesSource(path, {**params, "predict": "season"}, 0)
        except DataError:
            seasonal = None
        if seasonal is not None and seasonal.split_size("train") >= 16:
            source, params["predict"] = seasonal, "season"
    windows = source.split_size("train")
    batch = 32 if windows >= 256 else 16 if windows >= 64 else max(4, windows // 4)
    params["batch_size"] = batch
    hidden = 64
    per_epoch = max(1, windows // batch)
    ms = designs.lstm_ms(seq_len, batch, hidden, len(source.inputs))
    steps = _steps(max(40 * per_epoch, 1000), ms, most=3000)
    evals = max(1, math.ceil(source.split_size("val") / batch))
    g = Graph()
    layer_params = {k: v for k, v in params.items() if v != _default("TimeSeries", k)}
    layer_params["file"] = where
    g.add_layer("TimeSeries", "data", layer_params, (0, 0))
    designs.forecaster(g, hidden, "P")
    project = Project(g, description=(
        f"Forecasts {', '.join(source.targets)} {horizon} step(s) ahead from the last "
        f"{seq_len} rows of {path.name}; made by rnn-designer init."))
    _solver(project, steps, evals, 0.002)
    project.search = designs.forecaster_search(seq_len, max(2, room))
    season = f", a season of {m} steps" if m else ", no season found"
    start = {"change": "the last value seen", "season": "the value one season before"}
    season += f"; the net forecasts the change from {start[params['predict']]}"
    lines = [f"data: {source.describe()}{season}",
             f"net: {designs.forecaster_words(g, source.horizon * len(source.targets))}; "
             f"{steps:,} steps of {batch}"]
    lines += [f"note: {n}" for n in source.notes]
    return project, lines


def _better_start(source: SeriesSource) -> str:
    """``season`` when the value one season before forecasts the training rows better than
    the last value seen, else ``change``: the net then learns the correction to the better
    of the two simple forecasts."""
    if not source.period:
        return "change"
    origins = source.origins("train")
    origins = origins[origins >= source.period]
    if not len(origins):
        return "change"
    truth = source.truth(origins)[0]
    error = {name: float(np.mean((source.baseline(origins, name) - truth) ** 2))
             for name in ("seasonal_naive", "persistence")}
    return "season" if error["seasonal_naive"] < error["persistence"] else "change"


def _classifier(path: Path, where: str, label: str, net: str,
                head: str = "auto") -> tuple[Project, list]:
    params = {"file": str(path), "label_column": label, "batch_size": 32, "frame": 1,
              "val_fraction": 0.1, "test_fraction": 0.2, "normalize": True,
              "layout": _table_layout(path)}
    source = ClassesSource(path, params, 0)
    longest = int(source.lengths.max())
    # a long recording reads as well in frames, and far faster
    frame_steps = ROCKET_FRAME_STEPS if net == "rocket" else FRAME_STEPS
    if longest > frame_steps:
        params["frame"] = math.ceil(longest / frame_steps)
        source = ClassesSource(path, params, 0)
    n_train = source.split_size("train")
    t = int(source.lengths.max())
    if net == "rocket":
        batch = min(designs.ROCKET_BATCH, n_train)
        # on a GPU its steps take a millisecond or two, and on a CPU, once each sequence's
        # features are computed and remembered, a few: all of them; else what the CPU budget
        # allows, at a larger rate (as far as 1e-3) where that is fewer
        seen = n_train + source.split_size("val")
        steps = designs.ROCKET_STEPS if torch.cuda.is_available() or \
            designs.rocket_remembered_ms(t, seen) <= BUDGET_MS else \
            _steps(designs.ROCKET_STEPS, designs.rocket_ms(t, batch), most=designs.ROCKET_STEPS)
        lr = round(min(1e-3, designs.ROCKET_LR * designs.ROCKET_STEPS / steps), 6)
    else:
        batch = 32 if n_train >= 160 else max(4, n_train // 5)
        ms = designs.classifier_ms(t, batch, len(source.features) * params["frame"])
        steps = _steps(CLASSIFIER_STEPS, ms, most=CLASSIFIER_STEPS)
    params["batch_size"] = batch
    evals = max(1, math.ceil(source.split_size("val") / batch))
    g = Graph()
    layer_params = {k: v for k, v in params.items() if v != _default("SequenceClasses", k)}
    layer_params["file"] = where
    g.add_layer("SequenceClasses", "data", layer_params, (0, 0))
    if net == "rocket":  # a head over the features: cross-validated on the training set
        choice = choose_head(source) if head == "auto" else Choice(head, asked=True)
        designs.rocket_classifier(g, source.num_classes, choice.head)
        words = designs.rocket_words(source.num_classes, choice.head)
    else:
        designs.classifier(g, source.num_classes)
        words = designs.classifier_words(source.num_classes)
    project = Project(g, description=(
        f"Classifies the sequences of {path.name} into {source.num_classes} classes with "
        f"{designs.NET_NAMES[net]}; made by rnn-designer init."))
    if net == "rocket":
        _solver(project, steps, evals, lr, policy="fixed")
        project.search = designs.rocket_search(steps, choice.head)
    else:
        _solver(project, steps, evals, 0.005, weight_decay=0.05)
        project.search = designs.classifier_search(steps, params["frame"])
    told = "no steps: the head is solved in closed form" if net == "rocket" and \
        choice.head == "ridge" else f"{steps:,} steps of {batch}"
    lines = [f"data: {source.describe()}", f"net: {words}; {told}"]
    if net == "rocket":
        lines.append(f"head: {choice.words()}")
    if params["layout"] == "wide":
        lines.insert(1, "data: read as one sequence a row, the label in the first column (as "
                     "the UCR archive writes its tables)")
    lines += [f"note: {n}" for n in source.notes]
    return project, lines


def _table_layout(path: Path) -> str:
    """How a table holds the sequences asked for: ``wide`` where its first lines show one a
    row with the label first, or may (a classifier was asked for), else ``auto``."""
    if path.suffix.lower() in (".ts", ".arff", ".npy"):
        return "auto"
    try:
        seen = wide_tables.look(path)
    except DataProblem as e:
        raise DataError(str(e)) from None
    return "wide" if seen.verdict in (wide_tables.WIDE, wide_tables.UNSURE) else "auto"


def _default(type_id: str, key: str):
    from designer.graph import registry
    return registry.get(type_id).param(key).default


def _steps(wanted: int, ms: float, most: int) -> int:
    """``wanted`` steps within the CPU budget (a step costing ``ms``) and ``most``, in whole
    tens."""
    steps = min(wanted, int(BUDGET_MS / max(ms, 1e-3)), most)
    return max(100, steps // 10 * 10)


def _solver(project: Project, steps: int, evals: int, lr: float,
            weight_decay: float = 0.0, policy: str = "cosine") -> None:
    """Adam (AdamW with decoupled weight decay: it keeps a classifier of a few hundred
    sequences from fitting them by heart) on a cosine schedule (or ``policy``), with
    gradient clipping."""
    project.solver = {"type": "AdamW" if weight_decay else "Adam", "base_lr": lr,
                      "weight_decay": weight_decay, "lr_policy": policy,
                      "clip_gradients": 5.0, "max_steps": steps}
    if not weight_decay:
        del project.solver["weight_decay"]
    project.training = {"eval_interval": max(10, steps // 12 // 10 * 10),
                        "eval_batches": evals, "log_interval": 10,
                        "checkpoint_interval": max(100, steps // 2), "sample_interval": 0}
