"""The small dialog before a search: how many trials in all, where they train (every GPU, some
of them, or CPU workers) and how many at once, how long each trains, and what it optimises.

`SearchOptions` is what it gives (plain data); :meth:`SearchOptions.arguments` turns it into
the keyword arguments of `process.search_command` (``rnn-designer search``'s options).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
)

from designer.search.analysis import DIRECTIONS


@dataclass
class SearchOptions:
    """What the next search runs with (``gpus`` 0: every GPU; ``steps`` 0: the project's
    ``max_steps``)."""

    trials: int = 20
    device: str = "auto"            # auto, cpu or cuda
    gpus: int = 0
    per_gpu: int = 0                # 0: auto, as many as the design leaves room for
    workers: int = 1                # on the CPU
    steps: int = 0
    objectives: list = field(default_factory=lambda: ["val_loss"])
    refit_seeds: int = 1            # the pick trained again with this many seeds
    refit_top: int = 1              # and the next best designs beside it (an ensemble)

    def arguments(self) -> dict:
        out = {"trials": self.trials, "objectives": list(self.objectives),
               "steps": self.steps or None}
        if self.device != "auto":
            out["device"] = self.device
        if self.device == "cuda" and self.gpus:
            out["gpus"] = self.gpus
        if self.device != "cpu" and self.per_gpu > 0:
            out["per_gpu"] = self.per_gpu
        if self.device == "cpu" and self.workers > 1:
            out["workers"] = self.workers
        if self.refit_seeds > 1:
            out["refit_seeds"] = self.refit_seeds
        if self.refit_top > 1 and len(self.objectives) == 1:
            out["refit_top"] = self.refit_top
        return out


def space_problem(project) -> str:
    """What keeps the project's search section from being searched (the sentence
    ``rnn-designer search`` would say), or ``""``."""
    from designer.search.space import SpaceError, parse_space
    if not project.search:
        return ("nothing to search over: mark parameters “Search over” in Properties (a "
                "layer's or the solver's) first")
    try:
        parse_space(project.search, project)
    except SpaceError as e:
        return e.problems[0]
    return ""


def gpu_count(choices) -> int:
    """The GPUs among the device picker's choices (``DeviceChoice``s)."""
    return sum(1 for c in choices if c.device.startswith("cuda:"))


class SearchDialog(QDialog):
    """See the module's docstring; ``options()`` after ``exec()`` returns Accepted.

    ``done`` is how many trials the study has already: a search goes on to its total.
    """

    def __init__(self, options: SearchOptions, gpus: int, project: str, done: int = 0,
                 parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Search")
        self.gpus_there = gpus
        self.trials = QSpinBox(minimum=1, maximum=100_000,
                               value=max(options.trials, done + 10 if done else 0))
        self.trials.setToolTip("The study's trials in all: a search started again goes on "
                               "until it has this many")
        self.device = QComboBox()
        self.device.addItem("Auto (the GPUs if any, else the CPU)", "auto")
        self.device.addItem("CPU", "cpu")
        if gpus:
            self.device.addItem(f"GPUs ({gpus} here)", "cuda")
        self.device.setCurrentIndex(max(0, self.device.findData(options.device)))
        self.gpus = QSpinBox(minimum=1, maximum=max(1, gpus), value=options.gpus or gpus or 1)
        self.gpus.setToolTip("How many of the GPUs to use (the first ones)")
        self.per_gpu = QSpinBox(minimum=0, maximum=64, value=options.per_gpu)
        self.per_gpu.setSpecialValueText("auto")
        self.per_gpu.setToolTip("Trials trained at once on each GPU (a small net leaves a GPU "
                                "mostly idle: two to four keep it busy). auto: up to 4, as "
                                "the design's memory, the GPU's free memory and the cores "
                                "allow")
        self.workers = QSpinBox(minimum=1, maximum=256, value=options.workers)
        self.workers.setToolTip("Trials trained at once on the CPU")
        self.steps = QSpinBox(minimum=0, maximum=2_000_000_000, value=options.steps,
                              singleStep=100)
        self.steps.setSpecialValueText("the project's max_steps")
        self.steps.setToolTip("Training steps per trial (a pruned trial stops earlier); "
                              "solver.max_steps is then not searched: every trial trains "
                              "this many, and Use Best keeps it")
        self.seeds = QSpinBox(minimum=1, maximum=50, value=options.refit_seeds)
        self.seeds.setSpecialValueText("1 (one run)")
        self.seeds.setToolTip("Train the design the search keeps again with this many seeds: "
                              "`rnn-designer evaluate` scores their runs together as one "
                              "ensemble (the mean of their class probabilities or forecasts), "
                              "steadier than one run on small data")
        self.top = QSpinBox(minimum=1, maximum=20, value=options.refit_top)
        self.top.setSpecialValueText("1 (the pick alone)")
        self.top.setToolTip("Train this many of the best designs again, the pick first (each "
                            "with the seeds above): `rnn-designer evaluate` scores their runs "
                            "as one ensemble of designs. One objective only")
        self.first, self.second = QComboBox(), QComboBox()
        self.second.addItem("(nothing else)", None)
        for name, direction in DIRECTIONS.items():
            text = f"{name} ({'lower' if direction == 'minimize' else 'higher'} is better)"
            self.first.addItem(text, name)
            self.second.addItem(text, name)
        objectives = list(options.objectives) or ["val_loss"]
        self.first.setCurrentIndex(max(0, self.first.findData(objectives[0])))
        if len(objectives) > 1:
            self.second.setCurrentIndex(max(0, self.second.findData(objectives[1])))
        self.second.setToolTip("A second objective makes a multi-objective search: the "
                               "Experiments view then draws its Pareto front")
        form = QFormLayout()
        form.addRow("Trials in all", self.trials)
        form.addRow("Train on", self.device)
        form.addRow("GPUs", self.gpus)
        form.addRow("Trials at once per GPU", self.per_gpu)
        form.addRow("Trials at once on the CPU", self.workers)
        form.addRow("Steps per trial", self.steps)
        form.addRow("Seeds for the pick", self.seeds)
        form.addRow("Designs in the ensemble", self.top)
        form.addRow("Optimise", self.first)
        form.addRow("and", self.second)
        note = QLabel(f"Searches what “{project}” marks “Search over” in Properties. The "
                      "project is saved first; each trial is a run folder in its runs "
                      "folder, and Stop keeps the study to go on with later.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Search")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(note)
        lay.addLayout(form)
        lay.addWidget(buttons)
        self.device.currentIndexChanged.connect(self._update_enabled)
        self.second.currentIndexChanged.connect(self._update_enabled)
        self._update_enabled()

    def _update_enabled(self, *_) -> None:
        device = self.device.currentData()
        self.gpus.setEnabled(device == "cuda" and self.gpus_there > 1)
        self.per_gpu.setEnabled(device != "cpu" and self.gpus_there > 0)
        self.workers.setEnabled(device == "cpu" or (device == "auto" and not self.gpus_there))
        self.top.setEnabled(self.second.currentData() is None)  # a Pareto front: no ranking

    def options(self) -> SearchOptions:
        objectives = [self.first.currentData()]
        if self.second.currentData() not in (None, objectives[0]):
            objectives.append(self.second.currentData())
        device = self.device.currentData()
        if device == "auto" and not self.gpus_there and self.workers.value() > 1:
            device = "cpu"  # --workers is for the CPU; here auto means the CPU anyway
        gpus = self.gpus.value() if self.gpus.value() < self.gpus_there else 0
        return SearchOptions(self.trials.value(), device, gpus, self.per_gpu.value(),
                             self.workers.value(), self.steps.value(), objectives,
                             self.seeds.value(), self.top.value())
