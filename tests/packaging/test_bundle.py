"""The PyInstaller app (``packaging/build.sh`` builds it and runs these tests against it).

Skipped where PyInstaller is not installed (the README's test command; CI runs the build script
after it), and where no app has been built; given ``RNN_DESIGNER_BUNDLE`` (as the build script
does), a missing app fails instead.
"""
import configparser
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import PROJECTS, need_data
from tests.packaging.conftest import assert_clean, png_size, run_app

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


def test_the_app_ships_the_documentation_built_and_opens_a_layers_page(app, tmp_path):
    site = app / "_internal" / "docs" / "_build" / "html"
    assert (site / "index.html").is_file() and (site / "reference" / "layers").is_dir()
    done = run_app([str(app / "rnn-designer"), "docs", "--layer", "LSTM", "--no-open"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (site / "layer" / "LSTM.html").as_uri()
    assert done.stderr == ""  # nothing to build, nothing to say: the site is the app's own


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



@pytest.mark.parametrize("kind, engine", [("MinGRU", "SCAN"), ("sLSTM", "FUSED"),
                                          ("mLSTM", "CHUNK")])
def test_the_app_exports_a_cell_torch_lacks_as_code_that_computes_the_net(app, tmp_path, kind,
                                                                          engine):
    # model.py holds the functions of the cell's engine: the app reads them from its package
    # data, having no .py sources to copy them from
    torch = pytest.importorskip("torch")
    from designer.exchange.source import ModelSource
    from tests.exchange.conftest import classes_project
    from tests.exchange.test_pytorch import load_module
    heads = {"num_output": 6, "num_heads": 2} if kind != "MinGRU" else None
    project, out = classes_project(tmp_path, kind, engine, extra=heads), tmp_path / "export"
    done = run_app([app / "rnn-designer", "export", tmp_path / "classes.json", "--format",
                    "pytorch", "--out", out], tmp_path)
    assert_clean(done)
    model = load_module(out, f"bundle_{kind}").load(out)
    data = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(5))
    lengths = torch.tensor([7, 3, 1, 5])
    net = ModelSource(project, tmp_path / "classes.json").build_net()  # the same seed's weights
    with torch.no_grad():
        theirs, _ = model(data, lengths)
        ours = net({"data.data": data, "data.lengths": lengths}, want=("ip1",))
    assert (theirs - ours.blobs[("ip1", 0)]).abs().max() < 1e-6
