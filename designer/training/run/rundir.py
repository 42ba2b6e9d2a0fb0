"""A run folder: the project snapshot, ``metrics.jsonl`` and the checkpoints."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

from designer.graph.atomic import atomic_write_text
from designer.graph.project import Project

from designer.training.run import checkpoint as C
from designer.training.run.errors import TrainingError


def json_value(value):
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def default_path(project: Project) -> Path:
    """``runs/<project>-<time>``: where a run goes when no ``--out`` is given."""
    stem = project.path.stem if project.path else "run"
    return Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_folder(path: Path, resume: bool = False) -> None:
    """Raise ``TrainingError`` (code 2) when ``path`` cannot take a new run (a file, or a
    folder that holds a run already) or, with ``resume``, holds nothing to resume."""
    path = Path(path)
    if resume:
        if not path.is_dir():
            raise TrainingError(f"{path} does not exist, so there is nothing to resume", 2)
        return
    if path.exists() and not path.is_dir():
        raise TrainingError(f"{path} is a file; give --out a folder", 2)
    if C.has_checkpoint(path) or (path / "metrics.jsonl").exists():
        raise TrainingError(f"{path} already holds a run; continue it with --resume {path} "
                            "or give another --out", 2)


class RunDir:
    """Where one training run keeps what it writes.

    ``writer`` is false for the ranks of a data-parallel run other than rank 0: they know
    the folder but never write to it (``log`` and ``truncate_metrics`` do nothing).
    """

    def __init__(self, path: Path, writer: bool = True):
        self.path = Path(path)
        self.metrics = self.path / "metrics.jsonl"
        self.writer = writer

    @classmethod
    def create(cls, out, project: Project, resume: bool = False,
               writer: bool = True) -> "RunDir":
        """The folder for a new run (refusing one that holds a run) or for a resumed one;
        with ``writer`` false, only its name."""
        path = Path(out) if out is not None else default_path(project)
        if not writer:
            return cls(path, writer=False)
        check_folder(path, resume)
        if resume:
            return cls(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TrainingError(f"{path} cannot be created ({e.strerror or e})", 2) from None
        run = cls(path)
        atomic_write_text(path / "project.json", project.to_json())
        return run

    def log(self, record: dict) -> None:
        """Append one record to ``metrics.jsonl``."""
        if not self.writer:
            return
        with open(self.metrics, "a", encoding="utf-8") as f:
            f.write(json.dumps({k: json_value(v) for k, v in record.items()}) + "\n")

    def read_metrics(self) -> list[dict]:
        if not self.metrics.exists():
            return []
        out = []
        for line in self.metrics.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a crash
        return out

    def truncate_metrics(self, step: int) -> None:
        """Forget records after ``step`` (written after the checkpoint a run resumes from)."""
        if not self.writer:
            return
        keep = [r for r in self.read_metrics() if r.get("step", 0) <= step]
        atomic_write_text(self.metrics, "".join(json.dumps(r) + "\n" for r in keep))
