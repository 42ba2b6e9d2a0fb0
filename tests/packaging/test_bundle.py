"""The PyInstaller app (``packaging/build.sh`` builds it and runs these tests against it).

Skipped where PyInstaller is not installed (CI), and where no app has been built; given
``RNN_DESIGNER_BUNDLE`` (as the build script does), a missing app fails instead.
"""
import configparser
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PROJECTS, ROOT, need_data

pytest.importorskip("PyInstaller", reason="PyInstaller is not installed")
pytestmark = pytest.mark.slow

GIVEN = os.environ.get("RNN_DESIGNER_BUNDLE")
APP = Path(GIVEN) if GIVEN else ROOT / "packaging" / "dist" / "rnn-designer"


@pytest.fixture(scope="module")
def app() -> Path:
    exe = APP / "rnn-designer"
    if not exe.is_file():
        if GIVEN:
            pytest.fail(f"no built app at {exe}")
        pytest.skip("no app built: run packaging/build.sh")
    return APP


def run_app(args: list, tmp_path: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "RNN_DESIGNER_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)  # the app brings its own packages
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (no imaging library needed)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


@need_data("tinyshakespeare.txt")
def test_the_app_renders_the_char_rnn_example(app, tmp_path):
    shot = tmp_path / "shot.png"
    done = run_app([str(app / "rnn-designer"), "gui", str(PROJECTS / "char-rnn-shakespeare.json"),
                    "--screenshot", str(shot)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert png_size(shot) == (1440, 900) and shot.stat().st_size > 50_000  # a real picture
    assert "Traceback" not in done.stderr


def test_the_app_bundles_the_examples_and_validates_one(app, tmp_path):
    bundled = app / "_internal" / "projects" / "mnist-lstm.json"
    assert bundled.is_file()
    done = run_app([str(app / "rnn-designer"), "validate", str(bundled)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^lstm1 +LSTM ", done.stdout, re.M) and "memory to train" in done.stdout


@need_data("tinyshakespeare.txt")
def test_the_desktop_entry_starts_the_app(app, tmp_path):
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(app / "rnn-designer.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application" and Path(desktop["Icon"]).is_file()
    command = shlex.split(desktop["Exec"])
    assert command[0] == str(app / "rnn-designer") and command[-1] == "%f"
    shot = tmp_path / "from-the-entry.png"
    # as a file manager would start it on a project, with a screenshot asked for on top
    args = command[:-1] + [str(PROJECTS / "char-rnn-shakespeare.json"), "--screenshot",
                           str(shot)]
    done = run_app(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert png_size(shot) == (1440, 900)
