"""Small helpers shared by the data-source tests."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from designer.graph.model import Layer
from designer.training.data import DataError, open_source


def layer(type_id: str, **params) -> Layer:
    """A data layer with these parameters set (the rest are the spec's defaults)."""
    return Layer("data", type_id, params)


def one_sentence(error: DataError, path) -> str:
    """Check a DataError's text is one plain sentence naming ``path``; return the text."""
    text = str(error)
    assert str(path) in text, f"{text!r} does not name {path}"
    assert "\n" not in text and "Traceback" not in text
    assert not text.endswith(".") or text.endswith("..."), text  # the CLI adds nothing
    return text


def refused(source_layer: Layer, path, *phrases: str, folder=None, **kw) -> str:
    """Opening the layer fails with one sentence naming ``path`` and holding every phrase;
    nothing is written to the file's folder."""
    where = Path(folder if folder is not None else Path(path).parent)
    before = sorted(os.listdir(where)) if where.is_dir() else None
    with pytest.raises(DataError) as e:
        open_source(source_layer, **kw)
    text = one_sentence(e.value, path)
    for phrase in phrases:
        assert phrase in text, f"{phrase!r} not in {text!r}"
    if before is not None:
        assert sorted(os.listdir(where)) == before
    return text


def same_batches(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x) for x, y in zip(a, b))


def held_out_as_plain(aug, plain) -> bool:
    """After three augmented training batches, ``aug`` gives the held-out splits exactly as
    ``plain`` (the same source without augmentation) does, whole and batch by batch."""
    for _ in range(3):
        aug.next_batch()
    return all(same_batches(list(aug.eval_batches(split=split)),
                            list(plain.eval_batches(split=split)))
               and same_batches([aug.next_batch(split) for _ in range(3)],
                                [plain.next_batch(split) for _ in range(3)])
               for split in ("val", "test"))


def save_and_load(state: dict, tmp_path: Path) -> dict:
    """Round-trip a state through a file the way a checkpoint does."""
    f = tmp_path / "state.pt"
    torch.save(state, f)
    return torch.load(f, weights_only=True)


def tiny_init_run(folder, data, **init) -> str:
    """``init``'s project for ``data``, made tiny (8 units and filters, 168 features, 12 steps),
    trained on the CPU; returns the run folder."""
    return tiny_init_runs(folder, data, (None,), **init)[0]


def tiny_init_runs(folder, data, seeds, **init) -> list[str]:
    """`tiny_init_run`'s project trained once per seed (``None``: the project's), into
    ``run`` (the first) and ``run-seed-S``; returns the run folders."""
    from designer.graph.project import load
    from designer.training.new_from_data.init import init_project
    from designer.training.run.loop import RunOptions, train
    init.setdefault("head", "adam")  # a classifier's head as drawn, not cross-validated
    path, _ = init_project(data, out=Path(folder) / "p.json", **init)
    project = load(path)
    if project.graph.layer("data").type == "TimeSeries":
        project.graph.set_param("data", "seq_len", 8)
    for name in project.graph.names():
        if project.graph.layer(name).type in ("LSTM", "Conv1D"):
            project.graph.set_param(name, "num_output", 8)
        elif project.graph.layer(name).type == "MiniRocket":
            project.graph.set_param(name, "num_features", 168)
    project.solver["max_steps"] = 12
    project.training.update(eval_interval=6, checkpoint_interval=6, log_interval=3)
    runs = []
    for k, seed in enumerate(seeds):
        run = Path(folder) / ("run" if k == 0 else f"run-seed-{seed}")
        for _ in train(project, RunOptions(out=run, device="cpu", probe_steps=0, seed=seed)):
            pass
        runs.append(str(run))
    return runs
