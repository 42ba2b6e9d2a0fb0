"""Training runs as the charts see them: metric series, engines, device, and a label.

A `Run` is filled record by record while it trains (the records the training loop yields)
or all at once from a run folder's ``metrics.jsonl`` ("Add run folder..."). Reading a folder
touches only JSON files, never torch. No Qt here.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from designer.graph.atomic import remove_leftovers
from designer.graph import registry
from designer.training.run.record_format import device_text, engines_text  # noqa: F401

DATA_KINDS = {"CharText": "text", "WavAudio": "audio", "MnistRows": "mnist",
              "TimeSeries": "series", "SequenceClasses": "classes"}

# (record kind, record key) -> series name
METRICS = {("train", "loss"): "loss", ("train", "lr"): "lr",
           ("train", "tokens_per_s"): "tokens_per_s", ("train", "accuracy"): "accuracy",
           ("train", "rmse"): "rmse", ("val", "val_loss"): "val_loss",
           ("val", "val_accuracy"): "val_accuracy", ("val", "val_rmse"): "val_rmse"}


class RunError(Exception):
    """A folder that holds no run; ``str()`` is one sentence naming it."""


def data_kind(project: dict | None) -> str | None:
    """``text``, ``audio``, ``mnist``, ``series`` or ``classes`` from a project dict's data
    layer."""
    try:
        for layer in project["graph"]["layers"]:
            if layer["type"] in DATA_KINDS:
                return DATA_KINDS[layer["type"]]
    except (KeyError, TypeError):
        pass
    return None


class Run:
    """One training run's curves and facts.

    Parameters
    ----------
    number
        Its place in the session (``#1``, ``#2``...), which also picks its colour.
    name
        The project's name.
    """

    def __init__(self, number: int, name: str, project: dict | None = None) -> None:
        self.number = number
        self.name = name
        self.project = project
        self.kind = data_kind(project)
        self.run_dir: Path | None = None
        self.engines: dict = {}
        self.device: str | None = None
        self.device_name: str | None = None
        self.steps: int | None = None
        self.step = 0
        self.state = "starting"   # starting, running, paused, stopping, finished, stopped, failed...
        self.best_val_loss: float | None = None
        self.visible = True
        # what to mark on the loss chart: (kind, step, seconds, message); kind is "diverging"
        # (the loss far above its best) or "stopped" (a non-finite loss ended the run)
        self.events: list[tuple[str, float, float, str]] = []
        self._time_offset = 0.0  # a continued run's clock goes on from where it stopped
        self.vocab: list | None = None      # text runs: the characters, from the start record
        self.num_classes: int | None = None
        self.targets: list | None = None    # forecasting runs: the columns forecast
        self.probe: dict | None = None      # the held-out snippet inspected (a Probe dict)
        # labelled sequences: which training sequences the run's model saw (final.trained_on)
        self.trained_on: dict = {}
        self.saturation: list = []          # [(step, {level: {gate: fraction}})], by step
        from designer.ui.runs.series import Series  # numpy: not on the way to the first paint
        self.series: dict[str, Series] = {m: Series() for m in METRICS.values()}

    # --------------------------------------------------------------------------- facts --
    @property
    def label(self) -> str:
        """What the legend says: number, project, engine(s), device."""
        return (f"#{self.number} {self.name} \u00b7 {engines_text(self.engines)} \u00b7 "
                f"{device_text(self.device, self.device_name)}")

    @property
    def short_label(self) -> str:
        """Engine and device first (what tells runs of one project apart), then the name."""
        if not self.engines and not self.device:
            return f"#{self.number} {self.name}"
        return (f"#{self.number} {engines_text(self.engines)} \u00b7 "
                f"{device_text(self.device, self.device_name)} \u2014 {self.name}")

    def tokens_per_s(self) -> float | None:
        """The median tokens/s of the run (its first record, the warm-up, left out)."""
        from designer.ui.runs.series import median_rate
        s = self.series["tokens_per_s"]
        return median_rate(s.column("value")) if len(s) else None

    def has(self, series: str) -> bool:
        return len(self.series[series]) > 0

    @property
    def version(self) -> int:
        return sum(s.version for s in self.series.values()) + len(self.events)

    # ------------------------------------------------------------------------- records --
    def add(self, record: dict) -> None:
        """Take one record the training loop yielded."""
        kind = record.get("kind")
        if kind == "start":
            self.run_dir = Path(record["run_dir"])
            self.engines = dict(record.get("engines") or {})
            self.device, self.device_name = record.get("device"), record.get("device_name")
            self.steps, self.step = record.get("steps"), record.get("step", 0)
            self.vocab, self.probe = record.get("vocab"), record.get("probe")
            self.num_classes = record.get("num_classes")
            self.targets = record.get("targets")
            split = record.get("split") or {}
            if split.get("train") is not None:
                self.trained_on = {"sequences": split["train"], "held": split.get("val") or 0,
                                   "final": False, "steps": None}
            self.state = "running"
            if record.get("resumed"):  # continued: what came after its checkpoint is redone
                self.truncate(self.step)
                s = self.series["loss"]
                self._time_offset = float(s.column("time")[-1]) if len(s) else 0.0
            return
        if kind in ("train", "val"):
            step = float(record["step"])
            time = float(record.get("time") or 0.0) + self._time_offset
            for (k, key), name in METRICS.items():
                if k == kind and record.get(key) is not None:
                    self.series[name].append(step, time, _number(record[key]))
            self.step = max(self.step, int(record["step"]))
            if kind == "val" and record.get("best_val_loss") is not None:
                self.best_val_loss = float(record["best_val_loss"])
            if kind == "val" and isinstance(record.get("gate_saturation"), dict):
                self.add_saturation(int(record["step"]), record["gate_saturation"])
        elif kind in ("warning", "error"):
            step, time = float(record.get("step", self.step)), record.get("time")
            if time is not None:
                time = float(time) + self._time_offset
            else:  # at the time of the last train record
                s = self.series["loss"]
                time = float(s.column("time")[-1]) if len(s) else 0.0
            self.events.append(("diverging" if kind == "warning" else "stopped", step,
                                float(time), record.get("message", "")))
        elif kind in ("paused", "resumed"):  # at the step it paused at: the step the run is at
            self.state = "paused" if kind == "paused" else "running"
            self.step = max(self.step, int(record.get("step", self.step)))
        elif kind == "final":
            self.state = "final" if record["stage"] != "done" else self.state
            if record["stage"] == "done":
                self.trained_on = {"sequences": record["sequences"], "held": 0,
                                   "final": True, "steps": record["steps"]}
        elif kind == "done":
            self.state = record.get("reason", "finished")
            self.step = record.get("step", self.step)
            if record.get("best_val_loss") is not None:
                self.best_val_loss = float(record["best_val_loss"])

    def truncate(self, step: int) -> None:
        """Forget the points and events after ``step`` (a run continued from there)."""
        for series in self.series.values():
            if not len(series) or series.column("step")[-1] <= step:
                continue
            cols = [series.column(c).copy() for c in ("step", "time", "value")]
            series.clear()
            for x, t, v in zip(*cols):
                if x <= step:
                    series.append(x, t, v)
        self.events = [e for e in self.events if e[1] <= step]

    def add_saturation(self, step: int, levels: dict) -> None:
        """Gate saturation measured at ``step`` (a validation, or a live inspection)."""
        self.saturation = [(s, d) for s, d in self.saturation if s != step]
        self.saturation.append((step, levels))
        self.saturation.sort(key=lambda p: p[0])

    # ------------------------------------------------------------------------- folders --
    @classmethod
    def from_folder(cls, folder: str | Path, number: int) -> "Run":
        """A finished (or running) run read from its folder: ``metrics.jsonl`` for the curves,
        ``project.json`` for the name, the last checkpoint's ``meta.json`` for the engines and
        the device."""
        folder = Path(folder)
        metrics = folder / "metrics.jsonl"
        if not metrics.is_file():
            raise RunError(f"{folder} holds no training run (there is no metrics.jsonl)")
        remove_leftovers(folder)  # what a run killed mid-write left
        project = _read_json(folder / "project.json")
        run = cls(number, (project or {}).get("name") or folder.name, project)
        run.run_dir = folder
        meta = _checkpoint_meta(folder)
        if meta:
            run.engines = dict(meta.get("engines") or {})
            run.device, run.device_name = meta.get("device"), meta.get("device_name")
            run.steps = meta.get("step")
            run.targets = (meta.get("data") or {}).get("targets")
        elif project:
            kinds = registry.engine_kinds()
            run.engines = {la["name"]: la.get("params", {}).get(
                "engine", registry.get(la["type"]).param("engine").default)
                for la in project["graph"]["layers"] if la["type"] in kinds}
        from designer.training.run.final import folder_trained_on  # no torch
        run.trained_on = folder_trained_on(folder, meta)
        try:
            lines = metrics.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise RunError(f"{metrics} cannot be read ({getattr(e, 'strerror', None) or e})") \
                from None
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            if isinstance(record, dict) and record.get("kind") in ("train", "val", "warning") \
                    and "step" in record:
                run.add(record)
        run.state = "loaded"
        return run


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _checkpoint_meta(folder: Path) -> dict | None:
    for which in ("last", "best"):
        pointer = _read_json(folder / f"{which}.json")
        if pointer and isinstance(pointer.get("checkpoint"), str):
            meta = _read_json(folder / pointer["checkpoint"] / "meta.json")
            if meta:
                return meta
    return None


def last_checkpoint(folder: str | Path) -> dict | None:
    """The meta data of a run folder's last checkpoint (JSON only, no torch), or ``None``."""
    folder = Path(folder)
    pointer = _read_json(folder / "last.json")
    if pointer and isinstance(pointer.get("checkpoint"), str):
        return _read_json(folder / pointer["checkpoint"] / "meta.json")
    return None


def has_checkpoint(folder: str | Path | None) -> bool:
    """Whether a run folder points at a checkpoint (its ``last.json`` or ``best.json``)."""
    if folder is None:
        return False
    return any(isinstance((_read_json(Path(folder) / f"{which}.json") or {}).get("checkpoint"),
                          str) for which in ("last", "best"))
