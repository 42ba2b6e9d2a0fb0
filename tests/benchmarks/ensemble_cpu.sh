#!/usr/bin/env bash
# `init`'s project for each set trained with SEEDS seeds on the CPU, each run scored alone and
# the seeds scored together as an ensemble (`evaluate RUN1 RUN2 ...`, the class probabilities
# averaged), MiniRocket beside it. One line a set in OUT/results.txt.
#   RNN_DESIGNER_DATA=<data> [SEEDS="1 2 3 4 5"] [SETS="GunPoint ..."] bash tests/benchmarks/ensemble_cpu.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
export RNN_DESIGNER_DATA=${RNN_DESIGNER_DATA:-../shared/data}
py=${PYTHON:-python3}
out=${1:-/tmp/ensemble_cpu}; mkdir -p "$out"
for set in ${SETS:-GunPoint ArrowHead JapaneseVowels OSULeaf}; do
  f=$(ls "$RNN_DESIGNER_DATA"/{ucr,japanese_vowels}/${set}_TRAIN.ts 2>/dev/null | head -1)
  $py -m designer init --data "$f" --out "$out/$set.json" > /dev/null 2>&1
  runs=()
  for seed in ${SEEDS:-1 2 3 4 5}; do
    $py -m designer train "$out/$set.json" --out "$out/$set.s$seed" --quiet --seed "$seed" \
        --device cpu > "$out/$set.s$seed.log" 2>&1 && runs+=("$out/$set.s$seed")
  done
  $py -m designer evaluate "${runs[@]}" --json > "$out/$set.eval.json" 2> "$out/$set.eval.err"
  $py - "$set" "$out/$set.eval.json" <<'PY' | tee -a "$out/results.txt"
import json, sys
r = json.load(open(sys.argv[2]))
alone = [m["accuracy"] for m in r["members"]]
print(f"{sys.argv[1]} | ensemble of {len(alone)} {r['accuracy']:.3f} | each alone "
      f"{' '.join(f'{a:.3f}' for a in alone)} (mean {sum(alone) / len(alone):.3f}) | "
      f"{r['peer']['name']} {r['peer']['accuracy']:.3f}")
PY
done
