"""Where data files live, and the little the graph needs to know about them (pure stdlib).

Named data resolve in this order: an explicit path (absolute, or relative to the project's
folder or the working directory), the folder in ``RNN_DESIGNER_DATA``, then the user cache.
Downloading a missing corpus is the trainer's job (``designer.training``), not the graph's.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

DATA_ENV = "RNN_DESIGNER_DATA"


@dataclass(frozen=True)
class NamedData:
    name: str
    filename: str
    url: str = ""
    sha256: str = ""
    what: str = ""


CATALOGUE = {
    "tinyshakespeare": NamedData(
        "tinyshakespeare",
        "tinyshakespeare.txt",
        "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        "the works of Shakespeare, 1,115,394 characters (Karpathy's char-rnn corpus)",
    ),
}


def cache_dir() -> Path:
    """The per-user cache folder where downloaded corpora are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rnn-designer"


def candidates(name: str, project_dir: str | os.PathLike | None = None) -> list[Path]:
    """Every place ``name`` is looked for, in order."""
    entry = CATALOGUE.get(name)
    names = [name] + ([entry.filename] if entry and entry.filename != name else [])
    out: list[Path] = []
    raw = Path(os.path.expanduser(name))
    if raw.is_absolute():
        return [raw]
    if project_dir is not None:
        out.append(Path(project_dir) / raw)
    out.append(Path.cwd() / raw)
    env = os.environ.get(DATA_ENV)
    if env:
        out.extend(Path(env) / n for n in names)
    out.extend(cache_dir() / n for n in names)
    seen, unique = set(), []
    for p in out:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def find_data(name: str, project_dir: str | os.PathLike | None = None) -> Path | None:
    """The first existing place for ``name``, or ``None``."""
    for p in candidates(name, project_dir):
        if p.exists():
            return p
    return None


def not_found_message(name: str, project_dir=None) -> str:
    where = [str(p) for p in candidates(name, project_dir)]
    hint = f"set {DATA_ENV} to the folder that holds it"
    return f"'{name}' was not found (looked in {', '.join(where)}); {hint}"


_vocab_cache: dict[tuple, list[str]] = {}


class DataProblem(Exception):
    """A data file that exists but cannot be used; ``str()`` names the file and the problem."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def not_regular(path: Path, mode: int | None = None) -> str | None:
    """Why ``path`` is no data file: ``".../x.csv is a named pipe, not a regular file"`` (a
    folder, a device, a socket likewise), or ``None`` for a regular file or none at all.
    Nothing is opened: a named pipe is never waited on."""
    if mode is None:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return None
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"{path} is {kind}, not a {'file' if stat.S_ISDIR(mode) else 'regular file'}"


def open_data(path: Path) -> BinaryIO:
    """``path`` opened to read its bytes; ``DataProblem`` when it cannot be, or is no regular
    file (checked on what was opened, which a named pipe never makes wait)."""
    problem = not_regular(path)
    if problem:
        raise DataProblem(problem)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise DataProblem(f"{path} cannot be read ({e.strerror or e})") from None
    problem = not_regular(path, os.fstat(fd).st_mode)
    if problem:
        os.close(fd)
        raise DataProblem(problem)
    return os.fdopen(fd, "rb")


def read_text(path: Path) -> tuple[str, bool]:
    """Decode a text corpus. Returns the text and whether bytes had to be replaced.

    Raises ``DataProblem`` for an empty or binary file.
    """
    try:
        with open_data(path) as f:
            raw = f.read()
    except OSError as e:
        raise DataProblem(f"{path}: cannot be read ({e.strerror or e})") from None
    if not raw:
        raise DataProblem(f"{path} is empty")
    head = raw[:65536]
    if b"\x00" in head:
        raise DataProblem(f"{path} is a binary file, not text (it holds NUL bytes)")
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        bad = text.count("\ufffd")
        if bad > max(16, len(text) // 100):
            raise DataProblem(
                f"{path} is not UTF-8 text ({bad:,} undecodable bytes); save it as UTF-8"
            ) from None
        return text, True


def text_vocabulary(path: Path) -> list[str]:
    """The sorted distinct characters of a text corpus (cached by path, size and time)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _vocab_cache:
        text, _ = read_text(path)
        _vocab_cache[key] = sorted(set(text))
    return _vocab_cache[key]
