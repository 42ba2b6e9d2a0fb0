"""Data layers for the user's own sequences: a table of measurements over time to forecast
(TimeSeries) and labelled sequences to classify (SequenceClasses).

They bind ``T`` and ``N`` as the other data layers do, ``F`` (input features per step), and
``P`` (values a forecast predicts per sample: horizon x targets) or ``K`` (classes). Only the
first lines of the file are read here (``designer.graph.headers``).
"""
from __future__ import annotations

import io
from pathlib import Path

from designer.graph import datasets, headers, arff, wide_tables
from designer.graph.errors import ParamError
from designer.graph.spec import FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.data import _batch

LABEL_SCAN_LIMIT = 4 << 20  # a long-format CSV up to this size is read for its classes
STEP_NAMES = ("step", "timestep", "time_step", "position", "index", "frame", "tick", "seq")

MISSING = ParamSpec(
    "missing", "choice", "interpolate",
    "empty cells: interpolate (linearly between their neighbours in time), drop (remove "
    "their rows) or error (stop and name the first one)",
    choices=("interpolate", "drop", "error"))
NORMALIZE = ParamSpec(
    "normalize", "bool", True,
    "z-score every column with the mean and deviation of the training split only (kept in "
    "the run, so evaluation and prediction use the same ones)")


# fewer sequences of a class than this to validate on, and two designs (or two heads, or two
# folds' scores) cannot be told apart by them: a sequence or two decides (UCR sets cut to 2 a
# class, docs/benchmarks/your-data.md). init's head choice and a search's pick both heed it.
FEWEST_TO_COMPARE = 4


def _fraction(name: str, default: float, what: str) -> ParamSpec:
    return ParamSpec(name, "float", default, what, minimum=0.0, maximum=0.5)


# Augmentation of training batches (off by default; see designer/training/data/augment.py).
# Validation, test, evaluate, predict and inspect always read the data as it is.
JITTER = ParamSpec(
    "jitter", "float", 0.0,
    "training batches only: the deviation of random noise added to every normalised input "
    "value (0: off; 0.03 to 0.1 is usual); it helps a small data set, where the net would "
    "otherwise learn the training sequences by heart", minimum=0.0, maximum=1.0)
SCALING = ParamSpec(
    "scaling", "float", 0.0,
    "training batches only: each sequence's channels are multiplied by random factors around "
    "1 with this deviation (0: off; 0.1 is usual), so the net does not rely on exact "
    "amplitudes; it helps a small data set", minimum=0.0, maximum=1.0)


def _window_slice(how: str) -> ParamSpec:
    return ParamSpec(
        "window_slice", "float", 1.0,
        f"training batches only: the share of each sequence kept (1: off; 0.9 is usual): "
        f"{how}, stretched back to its length by linear interpolation (window slicing, Le "
        f"Guennec et al. 2016); it helps a small data set", minimum=0.0, maximum=1.0)


def _check_augmentation(params: dict) -> None:
    if params["window_slice"] <= 0:
        raise ParamError("window_slice", params["window_slice"],
                         "above 0 and at most 1 (1 keeps the whole sequence)")


def _classes_check(params: dict) -> None:
    _check_augmentation(params)
    if params["folds"] >= 2 and params["fold"] > params["folds"]:
        raise ParamError("fold", params["fold"], f"between 1 and folds ({params['folds']})")


# --------------------------------------------------------------------------- TimeSeries --
def _ts_counts(params: dict, dims: dict) -> tuple:
    """(input features, targets) as far as the parameters and the bound dims tell."""
    names = headers.split_names(params["inputs"])
    features = len(names) if names else dims.get("F", "F")
    targets = len(headers.split_names(params["target"])) or 1
    return features, targets


def _series_infer(ctx):
    p = ctx.params
    t, n, h = p["seq_len"], p["batch_size"], p["horizon"]
    features, targets = _ts_counts(p, ctx.dims)
    return [TensorInfo((t, n, features), FLOAT, None, 1),
            TensorInfo((n, h, targets), FLOAT, None, 0)]


def _series_dims(params: dict, project_dir) -> tuple[dict, str | None]:
    dims = {"T": params["seq_len"], "N": params["batch_size"]}
    features, targets = _ts_counts(params, {})
    dims["P"] = params["horizon"] * targets
    if isinstance(features, int):
        dims["F"] = features
    path = datasets.find_data(params["file"], project_dir)
    if path is None:
        return dims, "series " + datasets.not_found_message(params["file"], project_dir)
    try:
        header = headers.read_table_header(path)
        _, inputs, _ = headers.choose_columns(header, params["inputs"], params["target"],
                                              params["time_column"])
    except (datasets.DataProblem, OSError) as e:
        return dims, str(e)
    dims["F"] = len(inputs)
    return dims, None


def _series_check(params: dict) -> None:
    _check_augmentation(params)
    if params["val_fraction"] + params["test_fraction"] >= 0.9:
        raise ParamError("test_fraction", params["test_fraction"],
                         f"small enough to leave most of the series for training (with "
                         f"val_fraction {params['val_fraction']:g})")


TIME_SERIES = LayerSpec(
    id="TimeSeries",
    category="Data",
    caffe_type="INPUT",
    summary="Windows of a table of measurements over time, with the values to forecast",
    help=(
        "Reads a CSV (or .npy) table whose rows are time steps and serves windows of seq_len "
        "rows of the input columns as 'data' (T, N, F), with the target columns' next "
        "'horizon' values as 'label' (N, horizon, targets). The label is batch-first so that "
        "the usual head, a recurrent layer -> SequenceLast -> InnerProduct (num_output P = "
        "horizon x targets) -> EuclideanLoss, lines up without a transpose: the loss compares the "
        "P values of each sample. The series is split in time: the first part trains, the "
        "next val_fraction validates, the last test_fraction tests; a window belongs to the "
        "split its forecast falls in. 'change' forecasts each future value as a change from "
        "the last one seen, which keeps a trending series in the range the net has learned. "
        "jitter, scaling and window_slice vary the training windows (off by default)."
    ),
    inputs=(),
    outputs=(
        PortSpec("data", "windows of the input columns, (T, N, F)"),
        PortSpec("label", "the target columns' next horizon values, (N, horizon, targets)"),
    ),
    params=(
        ParamSpec("file", "str", "series.csv", "the CSV or .npy file (a path, or a name found "
                  "in the data folder)"),
        ParamSpec("target", "str", "", "the column(s) to forecast, separated by commas (empty: "
                  "the last numeric column)"),
        ParamSpec("inputs", "str", "", "the columns the net reads, separated by commas (empty: "
                  "every numeric column but the time)"),
        ParamSpec("time_column", "str", "", "the column that holds the time (empty: found by "
                  "its name or its dates); it is not an input"),
        ParamSpec("seq_len", "int", 52, "rows per input window (T)", minimum=1,
                  maximum=100000),
        ParamSpec("horizon", "int", 1, "how many steps ahead to forecast", minimum=1,
                  maximum=10000, shaping=True),
        ParamSpec("stride", "int", 1, "rows between the starts of two training windows",
                  minimum=1, maximum=100000),
        _batch(32),
        _fraction("val_fraction", 0.15, "the share of the series, after training, that "
                  "validates"),
        _fraction("test_fraction", 0.15, "the share at the end of the series that tests"),
        NORMALIZE,
        ParamSpec("predict", "choice", "change",
                  "level: the net outputs the future values; change: it reads the targets' "
                  "history and outputs their future relative to their last value in the "
                  "window (better for a series with a trend); season: both relative to the "
                  "value one season before (better for a strong season)",
                  choices=("level", "change", "season")),
        MISSING,
        ParamSpec("season", "int", 0, "the seasonal period in steps for the seasonal-naive "
                  "baseline (0: from the time column: 52 for weekly data, 12 monthly, 7 daily, "
                  "24 hourly)", minimum=0, maximum=100000),
        JITTER,
        SCALING,
        _window_slice("the last part of each window, ending where the forecast starts, "
                      "with a random share between window_slice and 1"),
    ),
    infer=_series_infer,
    source_dims=_series_dims,
    check_params=_series_check,
)


# ---------------------------------------------------------------------- SequenceClasses --
def _classes_infer(ctx):
    n = ctx.params["batch_size"]
    return [TensorInfo(("T", n, "F"), FLOAT, None, 1), TensorInfo((n,), INDEX, None, 0),
            TensorInfo((n,), INDEX, "K", 0)]


def _classes_dims(params: dict, project_dir) -> tuple[dict, str | None]:
    dims, frame = {"N": params["batch_size"]}, params["frame"]
    path = datasets.find_data(params["file"], project_dir)
    if path is None:
        return dims, "sequences " + datasets.not_found_message(params["file"], project_dir)
    try:
        kind = file_layout(path, params["layout"])
        if kind == "ts":
            head = headers.read_ts_header(path)
            dims["F"], dims["K"] = head.dimensions * frame, len(head.class_labels)
            if head.series_length:
                dims["T"] = -(-head.series_length // frame)
            return dims, None
        if kind == "arff":
            head = arff.read_arff_header(path)
            dims["F"], dims["T"] = head.channels * frame, -(-head.steps // frame)
            if head.class_labels:
                dims["K"] = len(head.class_labels)
            return dims, None
        if kind == "wide":
            dims["F"] = frame
            if path.stat().st_size <= LABEL_SCAN_LIMIT:
                dims["K"] = len(wide_classes(path, params["label_column"]))
            return dims, None
        table = headers.read_csv_header(path)
        features = long_format_columns(table, params["label_column"])[2]
        dims["F"] = len(features) * frame
        if path.stat().st_size > LABEL_SCAN_LIMIT:
            return dims, None  # the classes are counted when training reads the file
        dims["K"] = len(_csv_classes(table, params["label_column"]))
    except (datasets.DataProblem, OSError) as e:
        return dims, str(e)
    return dims, None


def file_layout(path: Path, layout: str = "auto") -> str:
    """How a ``SequenceClasses`` file holds its sequences: ``ts``, ``arff``, ``wide`` (a row
    each, the label first: `designer.graph.wide_tables`) or ``long`` (a row per step), by its
    suffix and the layer's ``layout`` (``auto``: wide where the first lines say so)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".ts", ".arff"):
        return suffix[1:]
    if layout == "wide" or (layout == "auto" and wide_tables.look(path).wide):
        return "wide"
    return "long"


def wide_classes(path: Path, label_column: str = "") -> list[str]:
    """The classes of a wide table's label column, read through (a small file's)."""
    seen = wide_tables.look(path)
    names = wide_tables.column_names(seen.width)
    j = names.index(label_column) if label_column in names else 0
    found: dict[str, None] = {}
    with io.TextIOWrapper(datasets.open_data(path), encoding="utf-8-sig", errors="replace",
                          newline="") as f:
        for line in f:
            cells = wide_tables.split(line, seen.delimiter)
            if j < len(cells) and not headers.is_missing(cells[j]):
                found.setdefault(_class_name(cells[j].strip()))
    return sort_classes(found)


def _class_name(text: str) -> str:
    """A label as the readers name it: a whole number written otherwise as the number."""
    value = headers.parse_number(text)
    return str(int(value)) if value is not None and value == int(value) else text


def long_format_columns(table: headers.TableHeader, label_column: str
                        ) -> tuple[str, str | None, list[str], str]:
    """``(series id, time or None, features, label)`` columns of a long-format CSV: the id
    first, then the time (when the second column is named or looks like one), the label
    last (or ``label_column``), the numeric rest as features."""
    cols, path = list(table.columns), table.path
    label = label_column or cols[-1]
    if label not in cols:
        raise datasets.DataProblem(f"{path} has no column '{label}' for the labels (it has "
                                   f"{', '.join(cols[:12])})")
    if len(cols) < 3:
        raise datasets.DataProblem(f"{path} has {len(cols)} columns; a long-format table "
                                   "needs series_id, the features and the label")
    ident = cols[0]
    time = cols[1] if (cols[1].strip().lower() in headers.TIME_NAMES + STEP_NAMES
                       or cols[1] == table.time_column) and cols[1] != label else None
    features = [c for c in cols if c not in (ident, time, label)]
    text = [c for c in features if not table.numeric[cols.index(c)]]
    if text:
        raise datasets.DataProblem(f"{path}: column '{text[0]}' holds text, but every column "
                                   "between the series id (and time) and the label must be "
                                   "a number")
    if not features:
        raise datasets.DataProblem(f"{path} has no numeric feature column (it has "
                                   f"{', '.join(cols)})")
    return ident, time, features, label


def _csv_classes(table: headers.TableHeader, label_column: str) -> list[str]:
    import csv
    label = long_format_columns(table, label_column)[3]
    j = table.columns.index(label)
    seen: dict[str, None] = {}
    with io.TextIOWrapper(datasets.open_data(table.path), encoding="utf-8-sig",
                          errors="replace", newline="") as f:
        rows = csv.reader(f, delimiter=table.delimiter)
        if table.has_header:
            next(rows, None)
        for r in rows:
            if j < len(r) and r[j].strip():
                seen.setdefault(r[j].strip())
    return sort_classes(seen)


def sort_classes(names) -> list[str]:
    """Class names in a natural order: by number when every one is a number, else as text."""
    names = list(names)
    if all(headers.parse_number(n) is not None for n in names):
        return sorted(names, key=lambda n: (float(n), n))
    return sorted(names)


SEQUENCE_CLASSES = LayerSpec(
    id="SequenceClasses",
    category="Data",
    caffe_type="INPUT",
    summary="Labelled sequences of different lengths, padded, with their lengths and classes",
    help=(
        "Reads labelled sequences from a UEA/UCR .ts file (multivariate, '@classLabel true "
        "...'), a long-format CSV (series_id, time, features..., label: one row per step), a "
        "table of one sequence a row with the label first and no header (the UCR archive's "
        ".tsv, and its older space- or comma-separated .txt and .csv) or an .arff file. "
        "Each batch is padded with zeros after each sequence's end to the longest sequence of "
        "the file: 'data' (T, N, F), 'lengths' (N) the valid steps of each, 'label' (N) the "
        "class as an id in [0, K). With frame > 1, that many steps make one (the last one "
        "padded). Class names are kept as the file writes them. When the "
        "file is X_TRAIN.ts and X_TEST.ts sits beside it, that is the test split; otherwise "
        "test_fraction of the sequences test. val_fraction of the training sequences "
        "validate. jitter, scaling and window_slice vary the training sequences (off by "
        "default): more from a small data set."
    ),
    inputs=(),
    outputs=(
        PortSpec("data", "the sequences, zero-padded after their end, (T, N, F)"),
        PortSpec("lengths", "each sequence's number of valid steps, (N,)", INDEX),
        PortSpec("label", "each sequence's class, (N,) ids", INDEX),
    ),
    params=(
        ParamSpec("file", "str", "sequences.ts", "the .ts, .arff or table (.csv, .tsv, .txt) "
                  "file (a path, or a name found in the data folder)"),
        ParamSpec("label_column", "str", "", "a table only: the column that holds the "
                  "class (empty: the last column of a long-format table, the first of a "
                  "table of a sequence a row)"),
        ParamSpec("layout", "choice", "auto", "a table only: long (a row per step: series "
                  "id, time, features, label), wide (a row per sequence, the label first, as "
                  "the UCR archive writes its .tsv and .txt files) or auto (wide where the "
                  "first lines show no header and a label first)",
                  choices=("auto", "long", "wide")),
        ParamSpec("frame", "int", 1, "steps read as one: F x frame values a step, T / frame "
                  "steps (a long univariate recording reads far better in frames)",
                  minimum=1, maximum=10000, shaping=True),
        _batch(32),
        _fraction("val_fraction", 0.1, "the share of the training sequences that validates"),
        _fraction("test_fraction", 0.2, "the share of the sequences that tests, when there "
                  "is no separate _TEST file"),
        ParamSpec("folds", "int", 1, "cross-validation: with 2 or more, the training "
                  "sequences are dealt into this many folds, drawn per class, and fold 'fold' "
                  "validates instead of val_fraction (search scores designs this way)",
                  minimum=1, maximum=50),
        ParamSpec("fold", "int", 1, "with folds of 2 or more: the fold that validates, 1 to "
                  "folds", minimum=1, maximum=50),
        NORMALIZE,
        JITTER,
        SCALING,
        _window_slice("a random stretch of that share of its steps"),
    ),
    infer=_classes_infer,
    source_dims=_classes_dims,
    check_params=_classes_check,
)


def paired_test_file(path: Path) -> Path | None:
    """``X_TEST.ts`` beside ``X_TRAIN.ts`` (any case of TRAIN), when it exists."""
    stem = path.stem
    if not stem.upper().endswith("_TRAIN"):
        return None
    twin = path.with_name(stem[:-5] + ("TEST" if stem[-5:].isupper() else "test") + path.suffix)
    return twin if twin.is_file() else None


SPECS = (TIME_SERIES, SEQUENCE_CLASSES)
