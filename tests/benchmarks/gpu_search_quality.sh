#!/usr/bin/env bash
# `init` + `search --trials N` on UCR/UEA sets on one GPU, as a user runs them, the sets one
# after another; then `evaluate` of init's own project and of the best trial's run folder, with
# MiniRocket beside each (the [peers] extra). One line a set; OUT/<set>/ holds the projects,
# studies, runs and reports. REFIT_SEEDS=K passes `--refit-seeds K`: the pick is trained again
# with K seeds and `evaluate` scores the ensemble of the K run folders (each seed's own accuracy
# on the line after). REFIT_TOP=D then runs the same search again (no new trial) with
# `--refit-top D`: the D best designs trained again, and `evaluate` scores that ensemble too.
# PARALLEL=1 runs the sets at once; GPU_EACH=1 then gives set i GPU i (of a machine with as
# many GPUs as sets). nvidia-smi's utilisation of each GPU, each second, goes to OUT/util.csv
# and its mean over the whole command is the last line.
#   RNN_DESIGNER_DATA=<data> [SETS="GunPoint ..."] [TRIALS=50] [PER_GPU=8] [STEPS=] \
#     [OBJECTIVE=val_loss] [LIMIT=240] [INIT=1] [PARALLEL=0] [GPU_EACH=0] [FOLDS=auto] \
#     [REFIT_SEEDS=1] [REFIT_TOP=] [SEED=1] bash tests/benchmarks/gpu_search_quality.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/search_quality}
sets=${SETS:-GunPoint ArrowHead OSULeaf JapaneseVowels}
trials=${TRIALS:-50}; per_gpu=${PER_GPU:-8}; objective=${OBJECTIVE:-val_loss}
limit=${LIMIT:-240}; steps=${STEPS:+--steps $STEPS}; folds=${FOLDS:+--folds $FOLDS}
refit_seeds=${REFIT_SEEDS:+--refit-seeds $REFIT_SEEDS}
py=${PYTHON:-python3}
data=${RNN_DESIGNER_DATA:-../shared/data}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -l 1 \
    > "$out/util.csv" 2>/dev/null &
monitor=$!
report() {  # set what eval.json seconds
  $py - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
peer = r.get("peer") or {}
print(f"SEARCH | {sys.argv[1]} | {sys.argv[2]} | accuracy {r['accuracy']:.3f} | peer "
      f"{peer.get('name')} {peer.get('accuracy', float('nan')):.3f} | {float(sys.argv[4]):.0f} s",
      flush=True)
if r.get("members"):
    alone = [m["accuracy"] for m in r["members"]]
    print(f"  ensemble of {len(alone)}; each run alone: "
          f"{' '.join(f'{a:.3f}' for a in alone)} (mean {sum(alone) / len(alone):.3f})",
          flush=True)
PY
}
one_set() {
  local set=$1 file d s0 took
  local -a runs
  file=$(ls "$data"/{ucr,japanese_vowels,.}/${set}_TRAIN.ts 2>/dev/null | head -1)
  d="$out/$set"; mkdir -p "$d"
  $py -m designer init --data "$file" --out "$d/p.json" > "$d/init.txt" 2>&1 || { tail -2 "$d/init.txt"; return; }
  if [ "${INIT:-1}" = 1 ]; then
    s0=$(date +%s)
    $py -m designer train "$d/p.json" --out "$d/init.run" --quiet --seed "${SEED:-1}" > "$d/init.train.txt" 2>&1 \
      && $py -m designer evaluate "$d/init.run" --json > "$d/init.eval.json" 2>/dev/null \
      && report "$set" init "$d/init.eval.json" "$(( $(date +%s) - s0 ))"
  fi
  s0=$(date +%s)
  $py -m designer search "$d/p.json" --trials "$trials" --device cuda --per-gpu "$per_gpu" \
      --objective "$objective" --seed "${SEED:-1}" --time-limit "$limit" $steps $folds $refit_seeds --json \
      --best-out "$d/best.json" > "$d/search.jsonl" 2> "$d/search.err" || { tail -3 "$d/search.err"; return; }
  took=$(( $(date +%s) - s0 ))
  # the best trial's run folder, or with --refit-seeds K every seed's, one a line
  mapfile -t runs < <($py -c "import json; b = [json.loads(l) for l in open('$d/search.jsonl') if '\"best\"' in l][-1]; print('\n'.join(b.get('run_dirs') or [b['run_dir']]))")
  $py - "$d/search.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = [r for r in rows if r.get("kind") == "trial"]
states = {s: sum(r["state"] == s for r in t) for s in ("COMPLETE", "PRUNED", "FAIL")}
b = [r for r in rows if r.get("kind") == "best"][-1]
print(f"  trials {len(t)} {states}; best #{b['number']} {b['values']} {b['params']}", flush=True)
for r in t:
    if r["state"] == "FAIL":
        print("  failed:", r.get("reason")); break
PY
  $py -m designer evaluate "${runs[@]}" --json > "$d/best.eval.json" 2>/dev/null \
    && report "$set" "search $trials${REFIT_SEEDS:+, $REFIT_SEEDS seeds}" "$d/best.eval.json" "$took"
  [ -n "${REFIT_TOP:-}" ] || return 0
  s0=$(date +%s)
  $py -m designer search "$d/p.json" --trials "$trials" --device cuda --per-gpu "$per_gpu" \
      --objective "$objective" --seed "${SEED:-1}" --time-limit 0.001 $steps $folds $refit_seeds \
      --refit-top "$REFIT_TOP" --json > "$d/top.jsonl" 2> "$d/top.err" || { tail -3 "$d/top.err"; return; }
  mapfile -t runs < <($py -c "import json; b = [json.loads(l) for l in open('$d/top.jsonl') if '\"best\"' in l][-1]; print('\n'.join(b.get('run_dirs') or [b['run_dir']]))")
  $py -m designer evaluate "${runs[@]}" --json > "$d/top.eval.json" 2>/dev/null \
    && report "$set" "search $trials, top $REFIT_TOP designs" "$d/top.eval.json" "$(( took + $(date +%s) - s0 ))"
}
if [ "${PARALLEL:-0}" = 1 ]; then  # every set's search at once, sharing the GPU
  i=0
  for set in $sets; do
    if [ "${GPU_EACH:-0}" = 1 ]; then
      (export CUDA_VISIBLE_DEVICES=$i; one_set "$set") > "$out/$set.log" 2>&1 &
    else
      one_set "$set" > "$out/$set.log" 2>&1 &
    fi
    i=$((i + 1))
  done
  wait
  cat "$out"/*.log
else
  for set in $sets; do one_set "$set"; done
fi
kill $monitor 2>/dev/null
$py - "$out/util.csv" <<'PY'
import collections, sys
u = collections.defaultdict(list)
for line in open(sys.argv[1]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 2 and parts[1].isdigit():
        u[parts[0]].append(int(parts[1]))
print("UTIL | " + " | ".join(f"GPU {k}: mean {sum(v) / len(v):.0f}% over {len(v)} s"
                             for k, v in sorted(u.items())), flush=True)
PY
