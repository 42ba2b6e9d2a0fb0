#!/usr/bin/env bash
# `init` + `train` + `evaluate` on the UCR/UEA sets the quality targets name, on a GPU, for
# init's classifier and the other designs tests/benchmarks/init_designs.py rewrites it into,
# one seed; `evaluate` puts MiniRocket beside each (the [peers] extra). Prints one line a set and design; OUT/*.eval.json
# hold the reports.
#   RNN_DESIGNER_DATA=<data> bash tests/benchmarks/gpu_init_quality.sh OUT [DESIGNS...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/init_quality}; shift || true
designs=${*:-lstm lstm-fcn}
py=${PYTHON:-python3}
data=${RNN_DESIGNER_DATA:-../shared/data}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
for set in GunPoint ArrowHead OSULeaf JapaneseVowels; do
  file=$(ls "$data"/{ucr,japanese_vowels,.}/${set}_TRAIN.ts 2>/dev/null | head -1)
  for design in $designs; do
    p="$out/$set-$design"
    start=$(date +%s.%N)
    $py -m designer init --data "$file" --out "$p.json" > "$p.init.txt" 2>&1 \
      && $py tests/benchmarks/init_designs.py "$p.json" "$design" >> "$p.init.txt" 2>&1 \
      || { tail -2 "$p.init.txt"; continue; }
    $py -m designer train "$p.json" --out "$p.run" --quiet --seed 1 > "$p.train.txt" 2>&1 || { tail -2 "$p.train.txt"; continue; }
    trained=$(date +%s.%N)
    $py -m designer evaluate "$p.run" --json > "$p.eval.json" 2> "$p.eval.err" || { tail -2 "$p.eval.err"; continue; }
    $py - "$set" "$design" "$p.eval.json" "$start" "$trained" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
peer = r.get("peer") or {}
acc = r.get("accuracy")
print(f"QUALITY | {sys.argv[1]} | {sys.argv[2]} | accuracy {acc:.3f} | peer {peer.get('name')} "
      f"{peer.get('accuracy', float('nan')):.3f} | init+train {float(sys.argv[5]) - float(sys.argv[4]):.0f} s")
PY
  done
done
