"""Writing what an import made: the run folder first, then the project; on any failure the run
folder made here is taken away again, so that a refusal leaves nothing behind."""
from __future__ import annotations

import shutil
from pathlib import Path

import onnx

from ..errors import ExchangeError, taken


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
    weights as a run folder at step 0; raises ``ExchangeError`` (one sentence) and leaves
    neither behind on failure. ``replace``: write over a project file at ``out`` (the user
    said so); otherwise one there is a refusal."""
    out = Path(out)
    made = run is not None and not run.exists()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        result.project.path = out
        if run is not None:
            from .run import write_run
            write_run(result.project, result.weights, run, origin, result.data_meta)
        result.project.save(out, replace)
    except (ExchangeError, OSError) as e:
        if made and run.exists():
            shutil.rmtree(run, ignore_errors=True)
        if isinstance(e, ExchangeError):
            raise
        if isinstance(e, FileExistsError):
            raise taken(out) from None
        raise ExchangeError(f"{out} cannot be written ({e.strerror or e})") from None
