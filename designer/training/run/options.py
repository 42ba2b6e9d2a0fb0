"""What a run is asked to do beyond the project's own settings, and the device it runs on."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from designer.training.readout.probe import DEFAULT_STEPS
from designer.training.run.control import WeightsTap
from designer.training.run.distributed import World
from designer.training.run.errors import TrainingError


@dataclass
class RunOptions:
    """What a run is asked to do beyond the project's own settings."""

    out: str | Path | None = None        # the run folder (default: runs/<project>-<time>)
    resume: bool = False                 # continue from the run folder's last checkpoint
    steps: int | None = None             # stop at this step (default: the solver's max_steps)
    device: str | None = None            # auto, cpu or cuda (default: the project's)
    engine: str | None = None            # run every recurrent layer on auto, cudnn, caffe, persist
    seed: int | None = None
    corpus: str | Path | None = None     # train on this file instead of the data layer's
    time_limit: float | None = None      # seconds
    download_progress: Callable | None = None
    world: World | None = None           # this process's place in a data-parallel run
    extra_meta: dict = field(default_factory=dict)
    tap: WeightsTap | None = None        # hands out copies of the weights when asked
    probe_steps: int = DEFAULT_STEPS     # the held-out snippet inspected at evals (0: none)
    data_meta: dict | None = None        # read the data as the weights were trained on it (the
    #                                      statistics and classes an imported export carries)
    refit: str | None = None             # train the final model on every training sequence:
    #                                      auto, on or off (default: the project's setting)


def resolve_device(name: str) -> torch.device:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` -> a device, or a ``TrainingError``."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise TrainingError("the CUDA device was asked for, but no CUDA GPU is available "
                                "(use --device cpu)", 2)
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise TrainingError(f"there is no GPU {dev.index}: this machine has "
                                f"{torch.cuda.device_count()}", 2)
        return dev
    return torch.device(name)
