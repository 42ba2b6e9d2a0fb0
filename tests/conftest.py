"""Shared test set-up: the data folder as an absolute path, and helpers to find it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from designer.cells import load

load()  # the recurrent cells, as the command line and the window load them

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "projects"

_data = os.environ.get("RNN_DESIGNER_DATA") or str(ROOT.parent / "shared" / "data")
DATA = Path(_data).resolve()
os.environ["RNN_DESIGNER_DATA"] = str(DATA)  # absolute, so tests may change folder
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":  # a desktop's screen, where the window opens
    # at its preferred 1440x900 (tests/ui/test_screen_fit.py checks laptops' under Xvfb)
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={ROOT / 'tests' / 'offscreen_screen.json'}"
if "PYTEST_XDIST_WORKER" in os.environ:  # one math thread per test worker: no oversubscription
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def widened_char_rnn(folder: Path, units: int) -> Path:
    """The Shakespeare Char-RNN project with every LSTM ``units`` wide, saved in ``folder``."""
    d = json.loads((PROJECTS / "char-rnn-shakespeare.json").read_text())
    for layer in d["graph"]["layers"]:
        if layer["type"] == "LSTM":
            layer["params"]["num_output"] = units
    big = folder / "big.json"
    big.write_text(json.dumps(d))
    return big


def need_data(*names: str):
    """Skip unless every named file is in the data folder."""
    missing = [n for n in names if not (DATA / n).exists()]
    return pytest.mark.skipif(bool(missing), reason=f"data not found in {DATA}: {missing}")


@pytest.fixture
def data_dir() -> Path:
    return DATA
