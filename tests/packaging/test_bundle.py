"""The PyInstaller app (``packaging/build.sh`` builds it and runs these tests against it).

Skipped where PyInstaller is not installed (CI), and where no app has been built; given
``RNN_DESIGNER_BUNDLE`` (as the build script does), a missing app fails instead.
"""
import configparser
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import PROJECTS, need_data
from tests.packaging.conftest import png_size, run_app

pytest.importorskip("PyInstaller", reason="PyInstaller is not installed")
pytestmark = pytest.mark.slow


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
