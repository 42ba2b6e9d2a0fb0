"""What an export starts from: a project file, or a run folder with its trained weights."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from designer.graph import project as P
from designer.graph import registry
from designer.graph.project import Project

from designer.exchange.errors import ExchangeError


@dataclass
class ModelSource:
    """A project and, for a run, its checkpoint's weights and metadata.

    ``meta`` is the checkpoint's metadata (``data`` holds the vocabulary, the audio codec...);
    ``weights`` the ``Net`` state dict; both are ``None`` for a project file.
    """

    project: Project
    path: Path
    weights: dict | None = None
    meta: dict | None = None
    notes: list = field(default_factory=list)

    @property
    def trained(self) -> bool:
        return self.weights is not None

    @property
    def data_meta(self) -> dict:
        return dict((self.meta or {}).get("data", {}))

    def build_net(self):
        """The net in eval mode on the CPU, with the run's weights (or freshly initialised)."""
        import torch

        from designer.engines.net.build import BuildError, Net
        graph = self.project.graph
        errors = graph.errors()
        if errors:
            raise ExchangeError(f"{self.path}: the net is not valid: {errors[0]}")
        torch.manual_seed(self.project.training_settings()["seed"])
        try:
            net = Net(graph)
            if self.weights is not None:
                net.load_state_dict(self.weights)
        except (BuildError, RuntimeError) as e:
            raise ExchangeError(f"{self.path}: the net cannot be built with its weights "
                                f"({str(e).splitlines()[0]})") from None
        return net.eval()

    def check_fitted(self, net, names=None) -> None:
        """Refuse, in one sentence, to export a layer that is fitted from data rather than
        trained (MiniRocket's dilations, channels and biases, Hydra's dilations, kernels and
        channel sums: a run fits them to its first training batch) when it has not been: its
        weights would be all zeros. ``names``: the layers exported (default: all)."""
        layers = dict(net.layers.items())  # a ModuleDict
        for name in names if names is not None else layers:
            if getattr(layers.get(name), "is_fitted", True) is False:
                raise ExchangeError(
                    f"{self.path}: {name} ({self.project.graph.layer(name).type}) has not been "
                    "fitted (a run fits it to its first training batch, and a project holds no "
                    "fit), so it cannot be exported; train the project for a step and export "
                    "the run folder")


def load_source(path: str | os.PathLike, which: str = "best") -> ModelSource:
    """A run folder (its ``which`` checkpoint) or a project file."""
    path = Path(path)
    if path.is_dir():
        return _from_run(path, which)
    try:
        project = P.load(path)
    except P.ProjectError as e:
        raise ExchangeError(str(e)) from None
    return ModelSource(project, path, notes=[
        f"{path} is a project, not a run: the weights are freshly initialised (seed "
        f"{project.training_settings()['seed']}), not trained"])


def _from_run(path: Path, which: str) -> ModelSource:
    from designer.training.run import checkpoint as C
    try:
        ck = C.load(path, which, with_state=False)
    except C.CheckpointError as e:
        raise ExchangeError(str(e)) from None
    meta_file = ck.path / "meta.json"
    try:
        project = P.from_dict(ck.meta["project"], file=meta_file, project_dir=path)
    except (P.ProjectError, KeyError) as e:
        raise ExchangeError(f"{meta_file} holds no usable project ({e})") from None
    graph = project.graph
    from designer.training.trained.generate import trained_dims
    graph.pin_dims(trained_dims(ck.meta.get("data", {})))
    for name, engine in ck.meta.get("engines", {}).items():
        if name in graph and graph.layer(name).type in registry.engine_kinds():
            graph.set_param(name, "engine", engine)
    project.path = path / "project.json"
    return ModelSource(project, path, ck.weights, ck.meta)
