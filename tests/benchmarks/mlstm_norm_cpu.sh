#!/usr/bin/env bash
# The mLSTM's cell_norm on the CPU: a Char-RNN with its LSTM retyped into an mLSTM (2 levels
# of 256 in 4 heads, Embed 15, batch 25 x 100, AdamW), trained for STEPS steps with the
# per-head normalisation ("head", the default) and without ("none"), at learning rates LRS;
# one line a run: the validation losses, and where a run stopped on a non-finite loss.
#   RNN_DESIGNER_DATA=<data> [STEPS=400] [LRS="0.008"] bash tests/benchmarks/mlstm_norm_cpu.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/mlstm_norm}
py=${PYTHON:-python3}
mkdir -p "$out"
for lr in ${LRS:-0.008}; do
  for norm in head none; do
    $py - "$out/p_${norm}_$lr.json" "$norm" "$lr" <<'PY'
import json, sys
p = json.load(open("projects/char-rnn-shakespeare.json"))
p.pop("search", None)
for layer in p["graph"]["layers"]:
    if layer["name"] == "lstm1":
        layer.update(type="mLSTM", params={"num_output": 256, "num_heads": 4, "num_layers": 2,
                                           "dropout_ratio": 0.3, "cell_norm": sys.argv[2]})
    if layer["name"] == "data":
        layer["params"]["seq_len"] = 100
p["solver"].update(type="AdamW", base_lr=float(sys.argv[3]), max_steps=3000)
p["training"].update(eval_interval=100, eval_batches=5)
json.dump(p, open(sys.argv[1], "w"), indent=1)
PY
    OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} $py -m designer train "$out/p_${norm}_$lr.json" \
        --out "$out/run_${norm}_$lr" --device cpu --seed 1 --steps "${STEPS:-400}" --quiet \
        > "$out/train_${norm}_$lr.txt" 2>&1
    $py - "$out/run_${norm}_$lr" "$norm" "$lr" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(f"{sys.argv[1]}/metrics.jsonl")]
val = [f"{r['step']}: {r['val_loss']:.3f}" for r in rows if r.get("kind") == "val"]
bad = [r["step"] for r in rows if r.get("kind") == "train" and r.get("loss") is None]
print(f"cell_norm {sys.argv[2]}, lr {sys.argv[3]}: validation {', '.join(val)}"
      + (f"; non-finite loss from step {bad[0]}" if bad else ""))
PY
  done
done | tee "$out/summary.txt"
