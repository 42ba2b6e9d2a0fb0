#!/usr/bin/env bash
# Small data on one GPU, as a user runs it, every set at once: `init`, `train` (the final model
# trained on every training sequence) and `evaluate` (MiniRocket and MultiRocket-Hydra beside
# it); then, for the sets named in SEARCH, `search --trials N` from init's project and
# `evaluate` of its pick. One line a run; OUT/<set>/ keeps the projects, runs and reports.
# The sets share the GPU and the CPU's cores, so a set's wall time here is more than alone.
# The last figure of a search line is init's seconds plus the search's (to its pick's final
# model trained), without the evaluations.
# INIT_RUN=0 leaves out init's own training and evaluation (init, then the search alone).
#   [TRIALS=50] [LIMIT=240] [PER_GPU=auto] [SEED=1] [SEARCH="A B"] [DEVICE=cuda] [INIT_RUN=1] \
#     bash tests/benchmarks/gpu_small_data.sh OUT SET_TRAIN.ts ...
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?OUT}; shift
py=${PYTHON:-python3}
trials=${TRIALS:-50}; limit=${LIMIT:-240}; per_gpu=${PER_GPU:-auto}; seed=${SEED:-1}
device=${DEVICE:-cuda}
mkdir -p "$out"
report() {  # set what eval.json seconds
  $py - "$@" <<'PY'
import json, sys
name, what, path, seconds = sys.argv[1:]
r = json.load(open(path))
peers = {p["name"]: p.get("accuracy") for p in r.get("peers", [])}
f = lambda v: "-" if v is None else f"{v:.3f}"
seen = r.get("trained_on") or {}
print(f"GPU | {name} | {what} | accuracy {r['accuracy']:.3f} | MiniRocket "
      f"{f(peers.get('MiniRocket'))} | MultiRocket-Hydra {f(peers.get('MultiRocket-Hydra'))} | "
      f"final {seen.get('final')} on {seen.get('sequences')} | {float(seconds):.0f} s", flush=True)
PY
}
one_set() {
  local file=$1 name d s0 s1
  name=$(basename "$file" | sed 's/_TRAIN.*//'); d="$out/$name"; mkdir -p "$d"
  s0=$(date +%s)
  $py -m designer init --data "$file" --out "$d/p.json" > "$d/init.txt" 2>&1 || { echo "$name init: $(tail -1 "$d/init.txt")"; return; }
  s1=$(date +%s)
  echo "GPU | $name | head: $(grep '^head:' "$d/init.txt" | cut -c7- | cut -d: -f1) | init $((s1 - s0)) s"
  if [ "${INIT_RUN:-1}" = 1 ]; then
    $py -m designer train "$d/p.json" --out "$d/init.run" --quiet --seed "$seed" --device "$device" > "$d/train.txt" 2>&1 \
      || { echo "$name train: $(tail -1 "$d/train.txt")"; return; }
    $py -m designer evaluate "$d/init.run" --json > "$d/init.eval.json" 2> "$d/init.eval.err" \
      && report "$name" "init (train $(( $(date +%s) - s1 )) s with evaluate)" "$d/init.eval.json" "$(( $(date +%s) - s0 ))"
  fi
  case " ${SEARCH:-} " in *" $name "*) ;; *) return ;; esac
  local s2=$(date +%s)
  $py -m designer search "$d/p.json" --trials "$trials" --device "$device" --per-gpu "$per_gpu" \
      --seed "$seed" --time-limit "$limit" --json > "$d/search.jsonl" 2> "$d/search.err" \
    || { echo "$name search: $(tail -1 "$d/search.err")"; return; }
  local took=$(( s1 - s0 + $(date +%s) - s2 )) run
  run=$($py -c "import json; print([json.loads(l) for l in open('$d/search.jsonl') if '\"best\"' in l][-1]['run_dir'])")
  $py - "$d/search.jsonl" "$name" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = [r for r in rows if r.get("kind") == "trial"]
states = {s: sum(r["state"] == s for r in t) for s in ("COMPLETE", "PRUNED", "FAIL")}
b = [r for r in rows if r.get("kind") == "best"][-1]
print(f"  {sys.argv[2]}: trials {len(t)} {states}; pick #{b['number']} {b['params']}", flush=True)
PY
  $py -m designer evaluate "$run" --json > "$d/search.eval.json" 2> "$d/search.eval.err" \
    && report "$name" "init + search $trials (init, then the search to the pick's final model)" \
       "$d/search.eval.json" "$took"
}
for file in "$@"; do one_set "$file" > "$out/$(basename "$file" | sed 's/_TRAIN.*//').log" 2>&1 & done
wait
cat "$out"/*.log
