"""The sLSTM's forget-gate bias at the Char-RNN's 3.2 M parameters: ``constant`` (zero) against
``powerlaw`` (the xLSTM code's start), on one recipe, several seeds, the LSTM beside them.

    python tests/benchmarks/slstm_forget_bias.py make OUT [RECIPE.json]   # OUT/<name>.json
    python tests/benchmarks/slstm_forget_bias.py table OUT                # after training

``make`` writes the projects from `cell_quality.py make`'s sLSTM and LSTM (run it into OUT
first), with the recipe given (a trial's ``params``, keys as in a search space) or the LSTM
search's best (RESULTS.md, the cells on tinyshakespeare); train each with
``rnn-designer train OUT/<name>.json --out OUT/<name>-s<seed>.run --seed <seed>``. ``table``
prints the best validation nats/char of every run folder.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LSTM_BEST = {"lstm1.dropout_ratio": 0.4697602950084866, "data.batch_size": 25,
             "data.seq_len": 50, "solver.type": "AdamW", "solver.weight_decay": 0.1,
             "solver.base_lr": 0.002992660720611539, "solver.max_steps": 7000}


def _with(p: dict, recipe: dict) -> dict:
    p = json.loads(json.dumps(p))
    p.pop("search", None)
    for key, value in recipe.items():
        target, param = key.split(".", 1)
        if target == "solver":
            p["solver"][param] = value
        else:
            next(lay for lay in p["graph"]["layers"] if lay["name"] == target)["params"][
                param] = value
    return p


def make(out: Path, recipe: dict) -> None:
    from designer.graph import project as P
    for cell, variants in (("LSTM", {"lstm": {}}),
                           ("sLSTM", {"slstm-constant": {"lstm1.forget_bias": "constant"},
                                      "slstm-powerlaw": {"lstm1.forget_bias": "powerlaw"}})):
        base = json.loads((out / f"{cell}.json").read_text())
        for name, extra in variants.items():
            p = _with(base, {**recipe, **extra})
            p["name"] = f"Char-RNN, {name}"
            P.from_dict(p)
            (out / f"{name}.json").write_text(json.dumps(p, indent=1))
            print(name)


def best(run: Path) -> tuple[float | None, int | None, int]:
    """A run folder's best validation loss, the step it came at (None, None without one) and
    the last step it ran."""
    from designer.training.run.rundir import RunDir
    rows = RunDir(run).read_metrics()
    vals = [r for r in rows if r.get("kind") == "val" and r.get("val_loss") is not None]
    top = min(vals, key=lambda r: r["val_loss"], default=None)
    last = max((r.get("step", 0) for r in rows), default=0)
    return (top["val_loss"], top["step"], last) if top else (None, None, last)


def table(out: Path) -> None:
    print("| run | best validation nats/char | at step | steps run |")
    print("|---|---:|---:|---:|")
    for run in sorted(out.glob("*.run")):
        loss, step, last = best(run)
        print(f"| {run.stem} | {loss:.4f} | {step} | {last} |" if loss is not None else
              f"| {run.stem} | - | - | {last} |")

if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    if sys.argv[1] == "make":
        make(Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())
             if len(sys.argv) > 3 else LSTM_BEST)
    else:
        table(Path(sys.argv[2]))
