"""The window on the two commonest laptop screens, 1366x768 and 1440x900, under a real X server
with a window manager (Xvfb and openbox, started here): after opening each view (Design, Train
with two runs, Inspect, Unrolled, Generate, Experiments after a search, New from Data) the
window's frame is inside the screen's available geometry, every plot and table shown on the
larger screen is shown on the smaller one, at least 120 px tall (the device's small plots keep
their fixed height), and a geometry kept from a larger monitor opens inside the screen.
tests/ui/laptop_probe.py drives the window, one process per screen, both at once."""
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.xserver import PACKAGES, NoScreen, missing, x_screen

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "ui" / "laptop_probe.py"
SIZES = ((1366, 768), (1440, 900))
LEAST = 120  # a plot's or table's least height, in pixels

pytestmark = [pytest.mark.skipif(bool(missing()), reason=f"no X server to test on: "
                                 f"{missing()} not found (apt-get install {PACKAGES})"),
              pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def seen() -> dict:
    """What the probe saw on each screen: view -> frame, available geometry, plots and tables.
    The two screens are probed at once (about ten seconds each)."""
    with contextlib.ExitStack() as stack:
        probes = {}
        for width, height in SIZES:
            try:
                env = stack.enter_context(x_screen(width, height))
            except NoScreen as e:  # installed, but no X server or window manager starts here
                pytest.skip(str(e))
            env["RNN_DESIGNER_OFFLINE"] = "1"
            probes[(width, height)] = subprocess.Popen(
                [sys.executable, str(PROBE)], env=env, cwd=ROOT, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stack.callback(lambda: [p.kill() for p in probes.values() if p.poll() is None])
        said = {size: probe.communicate(timeout=100) for size, probe in probes.items()}
    out = {}
    for size, (stdout, stderr) in said.items():
        if "could not load the qt platform plugin" in stderr.lower():
            pytest.skip(f"Qt's xcb plugin cannot load here (apt-get install {PACKAGES})")
        assert probes[size].returncode == 0, stderr[-3000:]
        out[size] = json.loads(stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_window_stays_inside_the_screen_after_opening_each_view(seen, size):
    views = seen[size]
    assert set(views) >= {"design", "train", "inspect", "unrolled", "generate", "experiments",
                          "new_from_data", "restored"}
    for view, look in views.items():
        assert look["inside"], f"{view}: the frame {look['frame']} leaves the screen's " \
                               f"available {look['available']}"


def test_every_plot_and_table_of_the_larger_screen_is_shown_on_the_smaller_one(seen):
    big, small = seen[(1440, 900)], seen[(1366, 768)]
    for view, look in big.items():
        shown = small[view]["items"]
        for item, height in look["items"].items():
            assert item in shown, f"{view}: {item} is not shown at 1366x768"
            least = height if item.startswith("sparkline ") else LEAST  # a fixed height
            assert shown[item] >= least, \
                f"{view}: {item} is {shown[item]} px tall at 1366x768 ({height} at 1440x900)"
    assert small["inspect"]["items"]["inspect heatmap"] >= LEAST
    assert small["train"]["items"], "the charts of two runs are shown"


def test_designing_on_a_laptop_keeps_the_canvas_at_least_half_the_height(seen):
    for (width, height), views in seen.items():
        assert views["design"]["canvas"] >= height / 2, (width, height)
        assert views["design"]["workspace"] == "design"
        assert views["train"]["workspace"] == "train"
