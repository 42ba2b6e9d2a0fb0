"""Variants of the sLSTM at the Char-RNN's 3.2 M parameters on the LSTM search's best recipe,
the LSTM beside them: which change, if any, brings the sLSTM level with the LSTM?

    python tests/benchmarks/cell_quality.py make OUT        # OUT/LSTM.json, OUT/sLSTM.json
    python tests/benchmarks/slstm_variants.py make OUT      # OUT/<variant>.json, parameters
    rnn-designer train OUT/<variant>.json --out OUT/<variant>.run --seed 1 --device cuda --quiet
    python tests/benchmarks/slstm_forget_bias.py table OUT  # best validation nats/char a run

Each variant changes one thing of `cell_quality.py`'s sLSTM (768 units in 6 heads of 128):
the forget gate exp instead of sigmoid, three levels of 576 units in heads of 64 (nearly the
same parameters), dropout 0.3 instead of the recipe's 0.47, the learning rate 2e-3 instead of
3e-3. Later rounds: longer runs and more dropout, then one head of 512 units.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from slstm_forget_bias import LSTM_BEST, _with

VARIANTS = {
    "lstm": ("LSTM", {}),
    "slstm": ("sLSTM", {}),
    "slstm-exp-forget": ("sLSTM", {"lstm1.forget_gate": "exp"}),
    "slstm-3x576": ("sLSTM", {"lstm1.num_layers": 3, "lstm1.num_output": 576,
                              "lstm1.num_heads": 9}),
    "slstm-dropout-0.3": ("sLSTM", {"lstm1.dropout_ratio": 0.3}),
    "slstm-lr-2e-3": ("sLSTM", {"solver.base_lr": 0.002}),
    # the second round: longer training (the sLSTM's best was at its last step)
    "lstm-10k": ("LSTM", {"solver.max_steps": 10000}),
    "lstm-14k": ("LSTM", {"solver.max_steps": 14000}),
    "slstm-10k": ("sLSTM", {"solver.max_steps": 10000}),
    "slstm-14k": ("sLSTM", {"solver.max_steps": 14000}),
    "slstm-14k-dropout-0.55": ("sLSTM", {"solver.max_steps": 14000, "lstm1.dropout_ratio": 0.55}),
    # the third round: more dropout still, and longer
    "slstm-14k-dropout-0.65": ("sLSTM", {"solver.max_steps": 14000, "lstm1.dropout_ratio": 0.65}),
    "slstm-20k-dropout-0.55": ("sLSTM", {"solver.max_steps": 20000, "lstm1.dropout_ratio": 0.55}),
    "slstm-20k-dropout-0.62": ("sLSTM", {"solver.max_steps": 20000, "lstm1.dropout_ratio": 0.62}),
    "slstm-20k-dropout-0.7": ("sLSTM", {"solver.max_steps": 20000, "lstm1.dropout_ratio": 0.7}),
    # the fourth round: one head of 512 (the LSTM's own units and parameters: a full recurrent
    # matrix, where 6 heads of 128 mix units only within a head)
    "slstm-1x512": ("sLSTM", {"lstm1.num_output": 512, "lstm1.num_heads": 1}),
    "slstm-1x512-14k-dropout-0.55": ("sLSTM", {"lstm1.num_output": 512, "lstm1.num_heads": 1,
                                                "solver.max_steps": 14000,
                                                "lstm1.dropout_ratio": 0.55}),
    "slstm-1x512-10k-dropout-0.55": ("sLSTM", {"lstm1.num_output": 512, "lstm1.num_heads": 1,
                                                "solver.max_steps": 10000,
                                                "lstm1.dropout_ratio": 0.55}),
}


def make(out: Path) -> None:
    from designer.graph import project as P
    for name, (cell, extra) in VARIANTS.items():
        p = _with(json.loads((out / f"{cell}.json").read_text()), {**LSTM_BEST, **extra})
        p["name"] = f"Char-RNN, {name}"
        params = P.from_dict(p).graph.total_params()
        (out / f"{name}.json").write_text(json.dumps(p, indent=1))
        print(f"{name}: {params:,} parameters")


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    make(Path(sys.argv[2]))
