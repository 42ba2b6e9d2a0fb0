"""How long each kind of data takes to open: the time from a data layer to batches ready.

RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_data_open.py [--repeats 5]

Each source is opened ``--repeats`` times in this process (the first open includes reading the
file from the page cache and, for text, building the vocabulary); the figure is the median and
the slowest. The unit tests check what is read; this benchmark records how fast, as the design
guide asks, so that a loaded CI machine cannot fail a correct reader on time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.setdefault("RNN_DESIGNER_DATA", str(ROOT.parent / "shared" / "data")))

from designer.graph.model import Layer  # noqa: E402
from designer.training.data import open_source  # noqa: E402

SOURCES = {
    "tinyshakespeare (CharText)": ("CharText", {}),
    "speech_8k.wav (WavAudio, mu-law 256)": ("WavAudio", {"quantization": "mu_law_256"}),
    "MNIST t10k (MnistRows)": ("MnistRows", {}),
    "co2_weekly.csv (TimeSeries)": ("TimeSeries", {"file": str(DATA / "co2_weekly.csv")}),
    "Japanese vowels .ts (SequenceClasses)": (
        "SequenceClasses", {"file": str(DATA / "japanese_vowels" / "JapaneseVowels_TRAIN.ts")}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, (type_id, params) in SOURCES.items():
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            open_source(Layer("data", type_id, params), seed=0)
            times.append(time.perf_counter() - start)
        print(json.dumps({"source": name, "median_ms": round(1e3 * statistics.median(times), 1),
                          "slowest_ms": round(1e3 * max(times), 1)}))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
