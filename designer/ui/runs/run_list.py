"""The runs of this session, plus any run folders the user added, shared by the charts, the
runs table and the Generate panel."""
from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, Signal

from designer.ui.runs.run import Run

RUNS_ENV = "RNN_DESIGNER_RUNS"

# one colour per run, told apart on light and dark backgrounds (Tableau 10, reordered)
COLORS = ("#2f7de1", "#e8590c", "#2e9d57", "#c2255c", "#7048e8", "#0c8599", "#b08900",
          "#868e96", "#d6336c", "#5c940d")


def runs_root() -> Path:
    """Where new runs go: ``$RNN_DESIGNER_RUNS``, else the app's data folder + ``runs``
    (``~/.local/share/rnn-designer/rnn-designer/runs`` on Linux); never the projects folder."""
    env = os.environ.get(RUNS_ENV)
    if env:
        return Path(env).expanduser()
    base = QStandardPaths.writableLocation(QStandardPaths.AppLocalDataLocation)
    return Path(base or Path.home() / ".rnn-designer") / "runs"


def new_run_dir(stem: str, root: Path | None = None, when: float | None = None) -> Path:
    """A fresh folder name ``<stem>-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``... if taken)."""
    root = root or runs_root()
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem).strip("-.") or "run"
    base = f"{safe}-{time.strftime('%Y%m%d-%H%M%S', time.localtime(when))}"
    path, n = root / base, 2
    while path.exists():
        path, n = root / f"{base}-{n}", n + 1
    return path


class RunList(QObject):
    """Runs in the order they were added.

    Signals
    -------
    added(run), removed(run)
        A run joined or left the list.
    changed(run)
        A run's facts changed (started, paused, finished, shown or hidden); its curves change
        far more often and are read by the charts' timer instead.
    continue_requested(run)
        The user asked to continue a run from its last checkpoint (the runs table's menu).
    """

    added = Signal(object)
    removed = Signal(object)
    changed = Signal(object)
    continue_requested = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runs: list[Run] = []
        self._count = 0

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def next_number(self) -> int:
        self._count += 1
        return self._count

    def color(self, run: Run) -> str:
        return COLORS[(run.number - 1) % len(COLORS)]

    def add(self, run: Run) -> Run:
        self.runs.append(run)
        self.added.emit(run)
        return run

    def add_folder(self, folder: str | Path) -> Run:
        """Load a previous run's curves; raises `RunError` (one sentence) for a folder that
        holds no run. A folder already listed is returned as it is."""
        folder = Path(folder).resolve()
        for run in self.runs:
            if run.run_dir is not None and Path(run.run_dir).resolve() == folder:
                return run
        run = Run.from_folder(folder, self._count + 1)
        self._count += 1
        return self.add(run)

    def remove(self, run: Run) -> None:
        if run in self.runs:
            self.runs.remove(run)
            self.removed.emit(run)

    def set_visible(self, run: Run, visible: bool) -> None:
        if run.visible != visible:
            run.visible = visible
            self.changed.emit(run)

    def latest(self, kind: str | None = None) -> Run | None:
        for run in reversed(self.runs):
            if run.run_dir is not None and (kind is None or run.kind == kind):
                return run
        return None

    def latest_trained_layer(self, name: str, type_id: str, units, levels) -> Run | None:
        """The latest run with a checkpoint whose project has a recurrent layer ``name`` of
        this type, ``num_output`` and ``num_layers`` (weights the drawn layer can take)."""
        want = (type_id, units, levels)
        for run in reversed(self.runs):
            folder = run.run_dir
            if folder is None or not any((Path(folder) / f"{w}.json").is_file()
                                         for w in ("best", "last")):
                continue
            for la in (run.project or {}).get("graph", {}).get("layers", []):
                params = la.get("params", {})
                if la.get("name") == name and (la.get("type"), params.get("num_output"),
                                               params.get("num_layers", 1)) == want:
                    return run
        return None
