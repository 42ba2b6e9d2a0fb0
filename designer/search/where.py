"""Where a project's search is kept, whether that file is whole, and what it can optimise:
plain names, no Optuna, so the window can ask them without loading it (`study` opens the
storages; `analysis` reads them)."""
from __future__ import annotations

import json
import sqlite3
from contextlib import closing
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


def damage(storage: str) -> str | None:
    """Why ``storage``'s file cannot be read, in one sentence naming it and saying what to do,
    when it is damaged: an SQLite database SQLite finds malformed, or a journal with a line
    that is not JSON (``None`` when it reads whole, or is not a file)."""
    storage = storage_url(storage)
    path = storage_file(storage) if is_url(storage) else Path(storage)
    if path is None or not path.is_file():
        return None
    what = "database" if is_url(storage) else "journal"
    problem = _sqlite_damage(path) if is_url(storage) else _journal_damage(path)
    if problem is None:
        return None
    return (f"{path}: the search {what} is damaged ({problem}); give another --storage, or "
            "move the file aside to start the study afresh")


def _sqlite_damage(path: Path) -> str | None:
    """SQLite's own words for what is wrong with the database at ``path``, read only."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            found = [row[0] for row in db.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as e:
        corrupt = getattr(e, "sqlite_errorname", "").startswith(("SQLITE_CORRUPT",
                                                                 "SQLITE_NOTADB"))
        return str(e) if corrupt or "malformed" in str(e) or "not a database" in str(e) \
            else None  # locked, or not to be opened here: no damage known
    return None if found == ["ok"] else "database disk image is malformed"  # SQLite's words


def _journal_damage(path: Path) -> str | None:
    """The first line of the journal at ``path`` that is not a JSON record."""
    try:
        with open(path, "rb") as f:
            for number, line in enumerate(f, start=1):
                try:
                    json.loads(line)
                except ValueError:  # not UTF-8, or not JSON
                    return f"line {number} is not a journal record"
    except OSError:  # unreadable: no damage known
        return None
    return None
