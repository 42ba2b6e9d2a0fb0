"""The recurrent cells on tinyshakespeare at the Char-RNN's parameter count: the example
project (projects/char-rnn-shakespeare.json, 2 levels, Embed 15) with its LSTM retyped into each
cell and sized to the parameter count nearest the LSTM's 3.2 M, each given the same budget of
one GPU's wall time to search its training recipe (dropout, weight decay, the
learning rate, the batch and window, the steps; trial 0 is the example's own recipe). The
solver is the example's AdamW: the tables in RESULTS.md before "Adam's weight decay" also
searched Adam, whose trials with weight decay all stopped learning.

    python tests/benchmarks/cell_quality.py make OUT [--wide]  # OUT/<cell>.json, sizes printed
    python tests/benchmarks/cell_quality.py table OUT     # after gpu_cell_quality.sh: the table
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CELLS = {"LSTM": {"engine": "CUDNN"}, "sLSTM": {"num_heads": 4}, "mLSTM": {"num_heads": 4},
         "MinGRU": {}, "MinLSTM": {}}
SPACE = {
    "lstm1.dropout_ratio": {"float": [0.0, 0.6]},
    "data.batch_size": {"choice": [16, 25, 32]},
    "data.seq_len": {"choice": [50, 75, 100]},
    "solver.weight_decay": {"choice": [0.0, 0.01, 0.1]},
    "solver.base_lr": {"float": [0.0005, 0.005], "log": True},
    "solver.max_steps": {"int": [3000, 16000], "step": 1000},
}
# `make OUT --wide`: more dropout and longer runs, where the sLSTM's best recipe lies
# (RESULTS.md, the sLSTM against the LSTM on one recipe: dropout 0.55 over 14,000 steps)
WIDE = dict(SPACE, **{"lstm1.dropout_ratio": {"float": [0.0, 0.7]},
                      "solver.max_steps": {"int": [3000, 20000], "step": 1000}})


def _retyped(base: dict, kind: str, units: int, heads: int | None = None,
             space: dict = SPACE) -> dict:
    from designer.graph import project as P
    p = json.loads(json.dumps(base))
    p.pop("search", None)
    cell = dict(CELLS[kind], **({"num_heads": heads} if heads else {}))
    for layer in p["graph"]["layers"]:
        if layer["name"] == "lstm1":
            layer.update(type=kind, params={"num_output": units, "num_layers": 2,
                                            "dropout_ratio": 0.3, **cell})
    p["name"] = f"Char-RNN, {kind}"
    p["training"]["patience"] = 6
    p["search"] = space
    P.from_dict(p)   # raises on a design the designer does not take
    return p


def params(p: dict) -> int:
    from designer.graph import project as P
    return P.from_dict(p).graph.total_params()


def make(out: Path, wide: bool = False) -> None:
    base = json.loads((ROOT / "projects/char-rnn-shakespeare.json").read_text())
    target = params(_retyped(base, "LSTM", 512))
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for kind in CELLS:
        step = 4 * 8 if kind in ("sLSTM", "mLSTM") else 8
        sizes = [(512, None)] if kind == "LSTM" else [(u, None) for u in range(256, 2049, step)]
        if kind == "sLSTM":  # also heads of 64, 128 or 256 units: the kernels' full widths
            sizes += [(h * d, h) for d in (64, 128, 256) for h in range(1, 17)]
        units, heads = min(sizes, key=lambda s: abs(params(_retyped(base, kind, *s)) - target))
        p = _retyped(base, kind, units, heads, WIDE if wide else SPACE)
        (out / f"{kind}.json").write_text(json.dumps(p, indent=1))
        counts[kind] = params(p)
        print(f"{kind}: {units} units, {counts[kind]:,} parameters ({params(p) / target:.3f} of "
              f"the LSTM's)")
    (out / "params.json").write_text(json.dumps(counts))


def table(out: Path) -> None:
    counts = json.loads((out / "params.json").read_text())
    print("| cell | units | parameters | trials (complete / pruned / failed) | example recipe "
          "(trial 0) | best validation nats/char | best trial's recipe |")
    print("|---|---:|---:|---|---:|---:|---|")
    for kind in CELLS:
        f = out / kind / "search.jsonl"
        if not f.exists():
            print(f"| {kind} | | | not run | | | |")
            continue
        p = json.loads((out / f"{kind}.json").read_text())
        cell = next(l["params"] for l in p["graph"]["layers"] if l["name"] == "lstm1")
        units = cell["num_output"]
        if kind in ("sLSTM", "mLSTM"):
            units = f"{units} ({cell.get('num_heads', 4)} heads)"
        rows = [json.loads(line) for line in f.open() if line.startswith("{")]
        trials = [r for r in rows if r.get("kind") == "trial"]
        n = {s: sum(r["state"] == s for r in trials) for s in ("COMPLETE", "PRUNED", "FAIL")}
        done = [r for r in trials if r["state"] == "COMPLETE" and r.get("values")]
        zero = next((r["values"][0] for r in done if r["number"] == 0), None)
        best = min(done, key=lambda r: r["values"][0], default=None)
        recipe = ", ".join(f"{k.split('.')[1]} {v:.3g}" if isinstance(v, float) else
                           f"{k.split('.')[1]} {v}" for k, v in (best or {}).get("params",
                                                                            {}).items())
        print(f"| {kind} | {units} | {counts[kind]:,} | {n['COMPLETE']} / {n['PRUNED']} / "
              f"{n['FAIL']} | {'%.4f' % zero if zero else '-'} | "
              f"{'%.4f' % best['values'][0] if best else '-'} | {recipe} |")


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    if sys.argv[1] == "make":
        make(Path(sys.argv[2]), wide="--wide" in sys.argv[3:])
    else:
        table(Path(sys.argv[2]))
