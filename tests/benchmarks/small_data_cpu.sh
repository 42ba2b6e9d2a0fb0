#!/usr/bin/env bash
# `init` + `train` + `evaluate`, as a user runs them, on labelled sets one after another (this
# 2-core CPU is shared: the load average is printed with every line). One line a set: the head
# init chose, the test accuracy of the run's model (the final one, trained on every training
# sequence), the two peers beside it, and the seconds init and train took. With TRIALS=N, then
# `search --trials N` on the CPU from init's project and `evaluate` of its pick: a second line.
#   [OMP_NUM_THREADS=1] [SEED=1] [TRIALS=] bash tests/benchmarks/small_data_cpu.sh OUT SET_TRAIN.ts ...
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?OUT}; shift
py=${PYTHON:-python3}
mkdir -p "$out"
for file in "$@"; do
  set_name=$(basename "$file" | sed 's/_TRAIN.*//')
  d="$out/$set_name"; rm -rf "$d"; mkdir -p "$d"
  s0=$(date +%s.%N)
  $py -m designer init --data "$file" --out "$d/p.json" > "$d/init.txt" 2>&1 || { tail -2 "$d/init.txt"; continue; }
  s1=$(date +%s.%N)
  $py -m designer train "$d/p.json" --out "$d/run" --quiet --seed "${SEED:-1}" --device cpu > "$d/train.txt" 2>&1 || { tail -2 "$d/train.txt"; continue; }
  s2=$(date +%s.%N)
  $py -m designer evaluate "$d/run" --json > "$d/eval.json" 2> "$d/eval.err" || { tail -2 "$d/eval.err"; continue; }
  s3=$(date +%s.%N)
  $py - "$set_name" "$d" "$s0" "$s1" "$s2" "$s3" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
name, d, s0, s1, s2, s3, load = sys.argv[1:]
r = json.load(open(f"{d}/eval.json"))
head = next((l.split(":", 1)[1].split(":")[0].strip() for l in open(f"{d}/init.txt")
             if l.startswith("head:")), "-")
peers = {p["name"]: p.get("accuracy") for p in r.get("peers", [])}
f = lambda v: "-" if v is None else f"{v:.3f}"
print(f"CPU | {name} | {head} | accuracy {r['accuracy']:.3f} | MiniRocket "
      f"{f(peers.get('MiniRocket'))} | MultiRocket-Hydra {f(peers.get('MultiRocket-Hydra'))} | "
      f"init {float(s1) - float(s0):.0f} s | train {float(s2) - float(s1):.0f} s | "
      f"init+train {float(s2) - float(s0):.0f} s | evaluate {float(s3) - float(s2):.0f} s | "
      f"load {load}", flush=True)
PY
  [ -n "${TRIALS:-}" ] || continue
  s4=$(date +%s)
  $py -m designer search "$d/p.json" --trials "$TRIALS" --device cpu --seed "${SEED:-1}" --json \
      > "$d/search.jsonl" 2> "$d/search.err" || { tail -2 "$d/search.err"; continue; }
  s5=$(date +%s)
  pick=$($py -c "import json; print([json.loads(l) for l in open('$d/search.jsonl') if '\"best\"' in l][-1]['run_dir'])")
  $py -m designer evaluate "$pick" --json > "$d/search.eval.json" 2> "$d/search.eval.err" || { tail -2 "$d/search.eval.err"; continue; }
  $py - "$set_name" "$d" "$((s5 - s4))" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
name, d, seconds, load = sys.argv[1:]
r = json.load(open(f"{d}/search.eval.json"))
rows = [json.loads(l) for l in open(f"{d}/search.jsonl")]
t = [x for x in rows if x.get("kind") == "trial"]
b = [x for x in rows if x.get("kind") == "best"][-1]
done = sum(x["state"] == "COMPLETE" for x in t)
print(f"CPU | {name} | init + search: pick #{b['number']} of {len(t)} ({done} complete) | "
      f"accuracy {r['accuracy']:.3f} | search {seconds} s | load {load}", flush=True)
PY
done
