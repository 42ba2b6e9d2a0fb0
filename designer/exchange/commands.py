"""``rnn-designer export`` and ``rnn-designer import``."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from designer.graph.atomic import atomic_write_text

from designer.exchange.errors import ExchangeError, run_taken, taken

FORMATS = ("onnx", "pytorch", "prototxt")


def _err(message: str, code: int = 2) -> int:
    print(f"rnn-designer: {message}", file=sys.stderr)
    return code


def _notes(notes) -> None:
    for note in notes:
        print(f"note: {note}")


def export(args) -> int:
    try:
        written, notes = run_export(args.source, args.format, args.out, args.unrolled,
                                    args.steps, args.checkpoint)
    except ExchangeError as e:
        return _err(str(e), e.code)
    _notes(notes)
    for path in written:
        print(f"wrote {path}")
    return 0


def run_export(source_path, fmt: str, out, unrolled: bool = False, steps: int | None = None,
               which: str = "best") -> tuple[list[Path], list[str]]:
    """Export a project or run; returns the files written and notes."""
    from designer.exchange.source import load_source
    if fmt not in FORMATS:
        raise ExchangeError(f"unknown format '{fmt}' (use {', '.join(FORMATS)})")
    if unrolled and fmt != "onnx":
        raise ExchangeError("--unrolled is for --format onnx")
    if steps is not None and steps < 1:
        raise ExchangeError("--steps must be at least 1")
    return export_source(load_source(source_path, which), fmt, out, unrolled, steps)


def export_source(source, fmt: str, out, unrolled: bool = False, steps: int | None = None,
                  ) -> tuple[list[Path], list[str]]:
    """Export a loaded :class:`~designer.exchange.source.ModelSource`."""
    try:
        return _export(source, fmt, Path(out), unrolled, steps)
    except OSError as e:
        where = e.filename or out
        raise ExchangeError(f"{where} cannot be written ({e.strerror or e})") from None


def _export(source, fmt: str, out: Path, unrolled: bool, steps: int | None):
    if fmt == "prototxt":
        return write_prototxt(source.project, out)  # the design only: no weights
    if fmt == "onnx":
        try:
            from designer.exchange.onnx_export.export import export_onnx
        except ImportError:
            raise ExchangeError("the ONNX export needs the onnx package: pip install "
                                "'rnn-designer[onnx]'") from None
        if out.is_dir():
            out = out / "model.onnx"
        out.parent.mkdir(parents=True, exist_ok=True)
        notes = export_onnx(source, out, unrolled, steps)
        return [out], notes
    from designer.exchange.pytorch_export.code import export_pytorch
    notes = export_pytorch(source, out)
    return [out / "model.py", out / "weights.safetensors"], notes


def write_prototxt(project, out: Path) -> tuple[list[Path], list[str]]:
    """``train_val.prototxt`` and ``solver.prototxt`` into the folder ``out`` (or, when ``out``
    ends in .prototxt, the net there and the solver beside it)."""
    from designer.exchange.caffe.exporter import export_messages
    from designer.exchange.caffe.textformat import dumps
    if out.suffix == ".prototxt":
        net_file, solver_file = out, out.with_name("solver.prototxt")
        if net_file == solver_file:
            solver_file = out.with_name("solver_solver.prototxt")
    else:
        if out.exists() and not out.is_dir():
            raise ExchangeError(f"{out} is a file; give a folder or a .prototxt file")
        net_file, solver_file = out / "train_val.prototxt", out / "solver.prototxt"
    net, solver, notes = export_messages(project, net_file.name)
    try:
        net_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(net_file, dumps(net))
        atomic_write_text(solver_file, dumps(solver))
    except OSError as e:
        raise ExchangeError(f"{net_file} cannot be written ({e.strerror or e})") from None
    return [net_file, solver_file], notes


def import_(args) -> int:
    from designer.graph import commands as graph_commands
    from designer.exchange.caffe.importer import import_prototxt
    out = Path(args.out)
    if os.path.lexists(out) and not out.is_dir():
        return _err(str(taken(out)))
    if Path(args.file).suffix.lower() == ".onnx":
        return import_onnx_command(args)
    if getattr(args, "normalize", False):
        return _err("--normalize is for importing ONNX models")
    if out.suffix != ".json":
        return _err(f"{out}: give the project file to write, ending in .json")
    if out.is_dir():
        return _err(f"{out} is a folder; give the project file to write")
    data = args.data
    if data is not None and Path(data).is_file():  # as the project file will find it
        data = os.path.relpath(Path(data).resolve(), out.resolve().parent)
    try:
        result = import_prototxt(args.file, args.solver, data, out.parent)
    except ExchangeError as e:
        return _err(str(e), e.code)
    _notes(result.notes)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        result.project.save(out, replace=False)
    except FileExistsError:
        return _err(str(taken(out)))
    except OSError as e:
        return _err(f"{out} cannot be written ({e.strerror or e})")
    print(f"wrote {out}")
    return graph_commands.validate(str(out), as_json=False)


def import_onnx_command(args) -> int:
    """``rnn-designer import MODEL.onnx --out PROJECT.json [--data FILE] [--run RUN_DIR]
    [--normalize]``: everything is made first, then the project (and the run) written;
    nothing on a refusal. The project's folder is made when it is not there yet."""
    out = Path(args.out)
    if out.suffix != ".json" or out.is_dir():
        return _err(f"{out}: give the project file to write, ending in .json")
    run = Path(args.run) if getattr(args, "run", None) else None
    if run is not None and run.exists() and (not run.is_dir() or any(run.iterdir())):
        return _err(str(run_taken(run)))
    made = _missing_folders(out.parent) + (_missing_folders(run.parent) if run else [])
    try:  # the project's folder first: the data is found from there
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _err(f"{out.parent} cannot be made ({e.strerror or e})")
    try:
        return _import_onnx(args, out, run)
    finally:
        if not out.exists():  # refused: the folders made for it go again, if empty
            for folder in sorted(set(made), key=lambda f: len(f.parts), reverse=True):
                try:
                    folder.rmdir()
                except OSError:
                    pass


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and the folders above it that do not exist yet, innermost first."""
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _import_onnx(args, out: Path, run: Path | None) -> int:
    from designer.graph import commands as graph_commands
    from designer.graph.dimbind import missing_file
    data = args.data
    if data is not None and Path(data).is_file():  # as the project file will find it
        data = os.path.relpath(Path(data).resolve(), out.resolve().parent)
    try:
        from designer.exchange.onnx_import import import_onnx
        result = import_onnx(args.file, data, out.resolve().parent,
                             getattr(args, "normalize", False))
    except ImportError:
        return _err("importing ONNX needs the onnx package: pip install 'rnn-designer[onnx]'")
    except ExchangeError as e:
        return _err(str(e), e.code)
    _notes(result.notes)
    g = result.project.graph
    if any(missing_file(g.layer(name)) for name in g.sources()):
        _notes(["no run folder is written: a run needs --data FILE, the data this model was "
                "trained on"])
        run = None
    from designer.exchange.onnx_import.save import save_import
    from designer.exchange.onnx_import.scaling import describe_scaling
    try:
        save_import(result, out, run, str(args.file))
    except ExchangeError as e:
        return _err(str(e), e.code)
    print(f"wrote {out}")
    if run is not None:
        print(f"wrote {run}")
    scaling = describe_scaling(result, run is not None)
    if scaling:
        print(f"scaling: {scaling}")
    return graph_commands.validate(str(out), as_json=False)
