"""The built app and how the tests start it: as a user would, in a fresh home folder, with
nothing from this checkout on its path."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

GIVEN = os.environ.get("RNN_DESIGNER_BUNDLE")
APP = Path(GIVEN).resolve() if GIVEN else ROOT / "packaging" / "dist" / "rnn-designer"


@pytest.fixture(scope="session")
def app() -> Path:
    """The app's folder (``packaging/dist/rnn-designer``, or ``RNN_DESIGNER_BUNDLE``)."""
    exe = APP / "rnn-designer"
    if not exe.is_file():
        if GIVEN:
            pytest.fail(f"no built app at {exe}")
        pytest.skip("no app built: run packaging/build.sh")
    return APP


def run_app(args: list, tmp_path: Path, timeout: float = 300,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the app (``args[0]``) in ``tmp_path``, which is also its home folder; the data
    folder comes through ``RNN_DESIGNER_DATA`` (set by tests/conftest.py)."""
    full = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "share"), "RNN_DESIGNER_OFFLINE": "1",
            **(env or {})}
    full.pop("PYTHONPATH", None)  # the app brings its own packages
    return subprocess.run([str(a) for a in args], check=False, cwd=tmp_path, env=full,
                          capture_output=True, text=True, timeout=timeout)


def assert_clean(done: subprocess.CompletedProcess) -> None:
    """Exit 0, and no traceback or missing module anywhere in what the app printed (a
    module left out of the bundle may be caught and reported in one line)."""
    said = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, f"exit {done.returncode}:\n{said[-4000:]}"
    assert "Traceback" not in said and "No module named" not in said, said[-4000:]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (no imaging library needed)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
