"""The best recipes of the 10-minute searches (RESULTS.md, the cells on tinyshakespeare, round 3)
trained again with more seeds: is the sLSTM's win the cell's or its recipe's?

    python tests/benchmarks/cell_quality.py make OUT --wide   # OUT/LSTM.json, OUT/sLSTM.json
    python tests/benchmarks/recipe_seeds.py make OUT          # OUT/<name>.json, below
    rnn-designer train OUT/<name>.json --out OUT/<name>-s<S>.run --seed S --device cuda --quiet
    python tests/benchmarks/recipe_seeds.py table OUT         # every run, then each name's mean

``make`` writes three projects, each validating on the whole validation split in its own batch
shape, as a search's trials do (so seed 1 repeats the trial's score):
``slstm-best`` (the sLSTM search's best trial, seed 1), ``lstm-best`` (the LSTM's best trial
in the first search, RESULTS.md) and ``lstm-slstm-recipe`` (the LSTM on the sLSTM's recipe).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from slstm_forget_bias import LSTM_BEST, _with, best

SLSTM_BEST = {"lstm1.dropout_ratio": 0.4142857370571219, "data.batch_size": 16,
              "data.seq_len": 50, "solver.weight_decay": 0.1,
              "solver.base_lr": 0.004574422245071884, "solver.max_steps": 18000}
RECIPES = {"slstm-best": ("sLSTM", SLSTM_BEST), "lstm-best": ("LSTM", LSTM_BEST),
           "lstm-slstm-recipe": ("LSTM", SLSTM_BEST)}


def make(out: Path) -> None:
    from designer.graph import project as P
    from designer.search.validation import whole_validation
    for name, (cell, recipe) in RECIPES.items():
        p = _with(json.loads((out / f"{cell}.json").read_text()), recipe)
        p["name"] = f"Char-RNN, {name}"
        p["training"] = whole_validation(P.from_dict(p), ("data",)).training
        (out / f"{name}.json").write_text(json.dumps(p, indent=1))
        print(f"{name}: validates on {p['training']['eval_batches']} batches")


def table(out: Path) -> None:
    scores: dict[str, list[float]] = {}
    print("| run | best validation nats/char | at step | steps run |")
    print("|---|---:|---:|---:|")
    for run in sorted(out.glob("*-s*.run")):
        loss, step, last = best(run)
        if loss is not None:
            scores.setdefault(run.stem.rsplit("-s", 1)[0], []).append(loss)
        print(f"| {run.stem} | {loss:.4f} | {step} | {last} |" if loss is not None else
              f"| {run.stem} | - | - | {last} |")
    print("\n| recipe | runs | mean | median | best |")
    print("|---|---:|---:|---:|---:|")
    for name, s in scores.items():
        print(f"| {name} | {len(s)} | {statistics.mean(s):.4f} | {statistics.median(s):.4f} | "
              f"{min(s):.4f} |")


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    (make if sys.argv[1] == "make" else table)(Path(sys.argv[2]))
