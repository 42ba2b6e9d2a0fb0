"""``python -m designer.monitor`` prints samples, stops after --count, and takes Ctrl-C quietly."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from designer.monitor import Sample

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


def monitor_command(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "designer.monitor", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_json_mode_prints_one_sample_per_line_and_exits_0():
    proc = monitor_command("--count", "2", "--interval", "0.1", "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    samples = [Sample.from_dict(json.loads(line)) for line in out.splitlines()]
    assert len(samples) == 2
    assert samples[1].time - samples[0].time >= 0.09
    assert samples[0].source in ("nvml", "cpu")
    assert "Traceback" not in err


def test_text_mode_starts_with_what_it_watches():
    proc = monitor_command("--count", "1", "--interval", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    header, line = out.splitlines()
    assert header.startswith(("Watching ", "No NVIDIA driver"))
    assert "0.0s" in line


def ignoring_sigint() -> None:
    """What a shell does to a script's background job (``cmd &``, no job control)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("started", [None, ignoring_sigint], ids=["foreground", "background"])
def test_ctrl_c_ends_the_run_quietly(started):
    """Also when it was started with SIGINT ignored, as every process of a test suite run in
    the background of a script is: Python then installs no KeyboardInterrupt by itself."""
    proc = monitor_command("--interval", "0.05", preexec_fn=started)
    assert proc.stdout.readline()  # the header: it is running
    proc.stdout.readline()  # and one sample
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_negative_counts_are_refused_in_one_sentence():
    proc = monitor_command("--count", "-1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.strip() == "--count and --interval must not be negative."


def test_list_mode_lists_gpus_or_says_there_are_none():
    proc = monitor_command("--list")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip()
