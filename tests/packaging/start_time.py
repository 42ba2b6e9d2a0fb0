"""How long the built app takes to start: to print its version (the interpreter and the
command line), and to open its window on the Char-RNN example and render it offscreen.

    python tests/packaging/start_time.py packaging/dist/rnn-designer/rnn-designer
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def timed(args: list, repeat: int = 3) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "RNN_DESIGNER_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        version = timed([exe, "--version"])
        window = timed([exe, "gui", str(ROOT / "projects" / "char-rnn-shakespeare.json"),
                        "--screenshot", str(Path(tmp) / "shot.png")])
    print(f"start to --version: {version:.2f} s; start, open the Char-RNN window and render "
          f"it: {window:.2f} s (medians of 3)")


if __name__ == "__main__":
    main()
