"""Writing what an import made: the run folder first, under a temporary name until it is
complete, then the project; on any failure what was made here is taken away again, so that a
refusal leaves nothing behind, and a kill no half run folder."""
from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import onnx

from designer.exchange.errors import ExchangeError, run_taken, taken


def carries_design(path) -> bool:
    """Whether ``path`` is an rnn-designer export (it knows its data); ``False`` for any other
    model, and for a file that cannot be read (the import says why)."""
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - the import itself says what is wrong with the file
        return False
    return any(p.key == "design" for p in model.metadata_props)


def free_run_folder(project_file: Path) -> Path:
    """``NAME-run`` beside the project, or ``NAME-run-2`` ... when that one holds files."""
    base = project_file.with_name(project_file.stem + "-run")
    folder, k = base, 1
    while folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        k += 1
        folder = base.with_name(f"{base.name}-{k}")
    return folder


def save_import(result, out: Path, run: Path | None, origin: str,
                replace: bool = False) -> None:
    """Write ``result`` (an ``OnnxImport``) as the project ``out`` and, given ``run``, its
    weights as a run folder at step 0, the project once the run is complete; raises
    ``ExchangeError`` (one sentence) and leaves neither behind on failure. ``replace``: write
    over a project file at ``out`` (the user said so); otherwise one there is a refusal."""
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        result.project.path = out
        if run is None:
            result.project.save(out, replace)
            return
        run = Path(run)
        was_there = run.is_dir()  # an empty folder given for the run
        write_whole_run(result, run, origin)
        try:
            result.project.save(out, replace)
        except BaseException:
            shutil.rmtree(run, ignore_errors=True)
            if was_there:
                run.mkdir(exist_ok=True)
            raise
    except FileExistsError:
        raise taken(out) from None
    except OSError as e:
        raise ExchangeError(f"{out} cannot be written ({e.strerror or e})") from None


def write_whole_run(result, run: Path, origin: str) -> None:
    """The run folder written under a temporary name beside ``run`` (``.NAME.*.partial``) and
    renamed to ``run`` once complete: whatever stops the import, even a kill that no cleanup
    outlives, leaves no half run folder under its name."""
    from designer.exchange.onnx_import.run import write_run
    run.parent.mkdir(parents=True, exist_ok=True)
    part = run.with_name(f".{run.name}.{secrets.token_hex(4)}.partial")
    part.mkdir()
    try:
        write_run(result.project, result.weights, part, origin, result.data_meta, run)
        try:
            os.rename(part, run)  # over an empty folder, never over one that holds files
        except OSError:
            if run.exists():
                raise run_taken(run) from None
            raise
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
