"""Where a project's search is kept and what it can optimise: plain names, no Optuna, so the
window can ask them without loading it (`study` opens the storages; `analysis` reads them)."""
from __future__ import annotations

from pathlib import Path

# the objectives `rnn-designer search --objective` knows, and which way is better
OBJECTIVES = {"val_loss": "minimize", "val_accuracy": "maximize", "test_accuracy": "maximize",
              "ms_per_step": "minimize", "params": "minimize"}
DB_SUFFIX = ".search.db"


def default_storage(project_path: str | Path) -> str:
    """``sqlite:///<project dir>/runs/<project stem>.search.db``: where a project's search is
    kept unless ``--storage`` names another (nothing is made here)."""
    p = Path(project_path).resolve()
    return f"sqlite:///{p.parent / 'runs' / (p.stem + DB_SUFFIX)}"


def default_study(project_path: str | Path) -> str:
    """The study's name unless ``--study`` gives one: the project file's stem."""
    return Path(project_path).stem


SQLITE_HEADER = b"SQLite format 3\0"   # the first bytes of every SQLite database
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def storage_url(storage: str) -> str:
    """``storage`` as the study opens it: a URL as it is; the path of an SQLite database (a
    file that starts with SQLite's header, or a name ending in .db, .sqlite or .sqlite3) as
    ``sqlite:///<absolute path>``; any other path a journal file's, made absolute (the same
    file, whatever the folder)."""
    if is_url(storage):
        return storage
    path = Path(storage).expanduser().resolve()
    if path.suffix.lower() in SQLITE_SUFFIXES or _starts_with(path, SQLITE_HEADER):
        return f"sqlite:///{path}"
    return str(path)


def _starts_with(path: Path, header: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(header)) == header
    except OSError:  # not there yet, or not a file
        return False


def is_url(storage: str) -> bool:
    """An RDB URL (``sqlite:///...``, ``postgresql://...``) rather than a journal file."""
    return "://" in storage


def storage_file(storage: str) -> Path | None:
    """The file of a ``sqlite:///`` storage (``None`` for other storages)."""
    return Path(storage[len("sqlite:///"):]) if storage.startswith("sqlite:///") else None
