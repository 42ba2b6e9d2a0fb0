"""Checkpoints: weights in safetensors, metadata in JSON, optimizer and RNG state in a file read
with ``torch.load(weights_only=True)``; nothing is ever unpickled as code.

A run folder holds::

    checkpoints/step-0000500/weights.safetensors  the net's tensors
    checkpoints/step-0000500/state.pt             optimizer, RNG, data position, carried state
    checkpoints/step-0000500/meta.json            project, vocabulary, engines, step, losses
    last.json, best.json                          which checkpoint is the last and the best
    final.json, final/                            a small labelled set's final model, trained
                                                  again on every training sequence (`final`)

Every file is written atomically, and a checkpoint becomes "last" or "best" only when the
pointer file is replaced after all three files are on disk, so a crash leaves the previous
checkpoint in charge. Folders no pointer names are removed. Opening a run folder's checkpoint
(`load`: resume, generate, evaluate, export, inspect) clears the hidden temporary files of writes
cut short that it may hold (`atomic.remove_leftovers`; never a write still under way).
"""
from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from designer import __version__
from designer.graph.atomic import atomic_write_bytes, atomic_write_text, remove_leftovers

FORMAT = "rnn-designer checkpoint"
VERSION = 1
POINTERS = ("last", "best")


class CheckpointError(Exception):
    """A checkpoint that cannot be used; ``str()`` is one sentence naming the file."""


@dataclass
class Checkpoint:
    """A loaded checkpoint."""

    path: Path
    meta: dict
    weights: dict
    state: dict | None

    @property
    def step(self) -> int:
        return int(self.meta["step"])


def save(run_dir: Path, step: int, weights: dict, state: dict, meta: dict,
         pointers: tuple[str, ...] = ("last",)) -> Path:
    """Write a checkpoint of ``step`` and make it the ``pointers`` ("last" and/or "best")."""
    run_dir = Path(run_dir)
    folder = checkpoint_folder(run_dir, step)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in weights.items()}
    atomic_write_bytes(folder / "weights.safetensors",
                       st_save(tensors, metadata={"format": FORMAT, "step": str(step)}))
    buf = io.BytesIO()
    torch.save({**state, "step": step}, buf)
    atomic_write_bytes(folder / "state.pt", buf.getvalue())
    meta = {"format": FORMAT, "version": VERSION, "step": step,
            "rnn_designer": __version__, "torch": torch.__version__, **meta}
    atomic_write_text(folder / "meta.json", json.dumps(meta, indent=1, ensure_ascii=False))
    rel = folder.relative_to(run_dir).as_posix()
    for name in pointers:
        pointer = {"checkpoint": rel, "step": step, "val_loss": meta.get("val_loss"),
                   "best_val_loss": meta.get("best_val_loss")}
        atomic_write_text(run_dir / f"{name}.json", json.dumps(pointer, indent=1) + "\n")
    _collect(run_dir)
    return folder


def checkpoint_folder(run_dir: Path, step: int) -> Path:
    """Where the checkpoint of ``step`` goes in a run folder."""
    return Path(run_dir) / "checkpoints" / f"step-{step:07d}"


def _collect(run_dir: Path) -> None:
    """Remove checkpoint folders that no pointer names."""
    keep = set()
    for name in POINTERS:
        try:
            keep.add(json.loads((run_dir / f"{name}.json").read_text())["checkpoint"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for folder in (run_dir / "checkpoints").glob("step-*"):
        if folder.relative_to(run_dir).as_posix() not in keep:
            shutil.rmtree(folder, ignore_errors=True)


def has_checkpoint(run_dir: Path, which: str = "last") -> bool:
    return (Path(run_dir) / f"{which}.json").is_file()


def load(run_dir: str | Path, which: str = "last", with_state: bool = True) -> Checkpoint:
    """Read the ``which`` checkpoint of a run folder: ``last``; ``best``, the model the run
    offers (its final model trained on every training sequence where it trained one, else
    the checkpoint of the lowest validation loss); ``validated``, that checkpoint always; or
    ``final``.

    Raises ``CheckpointError`` with one sentence for a missing, damaged or foreign checkpoint.
    """
    run_dir = Path(run_dir)
    if which == "best" and (run_dir / "final.json").is_file():
        which = "final"
    elif which == "validated":
        which = "best"
    if not run_dir.exists():
        raise CheckpointError(f"{run_dir} does not exist")
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir} is a file, not a run folder")
    remove_leftovers(run_dir)  # what a run killed mid-write left
    pointer_file = run_dir / f"{which}.json"
    if not pointer_file.is_file():
        other = [p for p in POINTERS if (run_dir / f"{p}.json").is_file()]
        if which == "best" and other:
            return load(run_dir, other[0], with_state)
        raise CheckpointError(f"{run_dir} holds no checkpoint (no {pointer_file.name}); is it "
                              "a folder written by 'rnn-designer train --out'?")
    try:
        rel = json.loads(pointer_file.read_text())["checkpoint"]
    except (OSError, ValueError, KeyError, TypeError):
        raise CheckpointError(f"{pointer_file} is damaged (not the pointer rnn-designer "
                              "writes)") from None
    folder = run_dir / rel
    meta_file = folder / "meta.json"
    try:
        meta = json.loads(meta_file.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"{meta_file} is missing: the checkpoint is incomplete") from None
    except (OSError, ValueError):
        raise CheckpointError(f"{meta_file} is damaged (not valid JSON)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_file} was not written by rnn-designer")
    if meta.get("version", 0) > VERSION:
        raise CheckpointError(f"{meta_file} was written by a newer rnn-designer (checkpoint "
                              f"version {meta.get('version')}; this one reads {VERSION})")
    weights = read_weights(folder / "weights.safetensors")
    state = read_state(folder / "state.pt") if with_state else None
    if state is not None and state.get("step") != meta.get("step"):
        raise CheckpointError(f"{folder} mixes files of different steps; the checkpoint is "
                              "damaged")
    return Checkpoint(folder, meta, weights, state)


def read_weights(path: Path) -> dict:
    """Tensors of a safetensors file (no code is executed)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing: the checkpoint is incomplete") from None
    except OSError as e:
        raise CheckpointError(f"{path} cannot be read ({e.strerror or e})") from None
    try:
        return st_load(raw)
    except (SafetensorError, ValueError, RuntimeError, OSError):
        raise CheckpointError(f"{path} is not a safetensors weights file (damaged, or from "
                              "somewhere else)") from None


def read_state(path: Path) -> dict:
    """The optimizer/RNG/data state, read with ``weights_only=True`` (no code is executed)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing: the checkpoint is incomplete") from None
    except Exception:  # noqa: BLE001 - pickle, zip and torch errors all mean "not ours"
        raise CheckpointError(f"{path} is not a training-state file rnn-designer can read "
                              "(damaged, or it holds objects other than tensors and plain "
                              "data)") from None
    if not isinstance(state, dict) or "optimizer" not in state:
        raise CheckpointError(f"{path} is not a training-state file written by rnn-designer")
    return state


def rng_state() -> dict:
    out = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        out["cuda"] = torch.cuda.get_rng_state_all()
    return out


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"].to(dtype=torch.uint8, device="cpu"))
    if "cuda" in state and torch.cuda.is_available():
        try:
            torch.cuda.set_rng_state_all([s.to(dtype=torch.uint8, device="cpu")
                                          for s in state["cuda"]])
        except (RuntimeError, IndexError):
            pass  # another number of GPUs: keep the fresh CUDA generators
