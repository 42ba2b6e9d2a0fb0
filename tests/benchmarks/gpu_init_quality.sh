#!/usr/bin/env bash
# `init` + `train` + `evaluate`, as a user runs them, on UCR/UEA sets on a GPU: init's
# classifier and the designs tests/benchmarks/init_designs.py rewrites it into, for each seed;
# `evaluate` puts MiniRocket beside each (the [peers] extra). The sets run side by side (one
# process at a time per set). Prints one line a set, design and seed; OUT/*.eval.json hold the
# reports.
#   RNN_DESIGNER_DATA=<data> [SETS="GunPoint ..."] [SEEDS="1 2 3"] \
#     bash tests/benchmarks/gpu_init_quality.sh OUT [DESIGNS...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/init_quality}; shift || true
designs=${*:-init plain-lstm}
sets=${SETS:-GunPoint ArrowHead OSULeaf JapaneseVowels}
seeds=${SEEDS:-1}
py=${PYTHON:-python3}
data=${RNN_DESIGNER_DATA:-../shared/data}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
one_set() {
  local set=$1 file
  file=$(ls "$data"/{ucr,japanese_vowels,.}/${set}_TRAIN.ts 2>/dev/null | head -1)
  for design in $designs; do
    for seed in $seeds; do
      p="$out/$set-$design-$seed"
      start=$(date +%s.%N)
      $py -m designer init --data "$file" --out "$p.json" > "$p.init.txt" 2>&1 \
        && $py tests/benchmarks/init_designs.py "$p.json" "$design" >> "$p.init.txt" 2>&1 \
        || { tail -2 "$p.init.txt"; continue; }
      $py -m designer train "$p.json" --out "$p.run" --quiet --seed "$seed" > "$p.train.txt" 2>&1 \
        || { tail -2 "$p.train.txt"; continue; }
      trained=$(date +%s.%N)
      $py -m designer evaluate "$p.run" --json > "$p.eval.json" 2> "$p.eval.err" \
        || { tail -2 "$p.eval.err"; continue; }
      $py - "$set" "$design" "$seed" "$p.eval.json" "$start" "$trained" <<'PY'
import json, sys
r = json.load(open(sys.argv[4]))
peer = r.get("peer") or {}
print(f"QUALITY | {sys.argv[1]} | {sys.argv[2]} | seed {sys.argv[3]} | accuracy {r['accuracy']:.3f} "
      f"| peer {peer.get('name')} {peer.get('accuracy', float('nan')):.3f} "
      f"| init+train {float(sys.argv[6]) - float(sys.argv[5]):.0f} s", flush=True)
PY
    done
  done
}
for set in $sets; do one_set "$set" > "$out/$set.log" 2>&1 & done
wait
cat "$out"/*.log
