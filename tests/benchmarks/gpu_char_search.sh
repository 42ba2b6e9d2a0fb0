#!/usr/bin/env bash
# The Char-RNN search on one GPU: `search` over tests/benchmarks/char-rnn-search.json (the
# example project with early stopping, and its "search" section) for LIMIT seconds of starting
# trials, PER_GPU trials at once, with the GPU's utilisation sampled every second beside it.
#   RNN_DESIGNER_DATA=<data> [LIMIT=1080] [PER_GPU=3] [TRIALS=200] bash tests/benchmarks/gpu_char_search.sh OUT
# OUT/search.jsonl (every trial), OUT/util.csv, OUT/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/char_search}
py=${PYTHON:-python3}
mkdir -p "$out"
cp tests/benchmarks/char-rnn-search.json "$out/p.json"
# the data where nothing else writes while the search runs
if [ -n "${RNN_DESIGNER_DATA:-}" ] && [ -f "$RNN_DESIGNER_DATA/tinyshakespeare.txt" ]; then
  mkdir -p "$out/data" && cp "$RNN_DESIGNER_DATA/tinyshakespeare.txt" "$out/data/" && export RNN_DESIGNER_DATA="$out/data"
fi
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw --format=csv,noheader -l 1 > "$out/util.csv" 2>/dev/null &
mon=$!
s0=$(date +%s)
$py -m designer search "$out/p.json" --trials "${TRIALS:-200}" --device cuda --per-gpu "${PER_GPU:-3}" \
    --seed 1 --time-limit "${LIMIT:-1080}" --json --best-out "$out/best.json" \
    > "$out/search.jsonl" 2> "$out/search.err"
echo "exit $? after $(( $(date +%s) - s0 )) s" > "$out/summary.txt"
kill $mon 2>/dev/null
$py - "$out" >> "$out/summary.txt" <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(f"{d}/search.jsonl")]
t = [r for r in rows if r.get("kind") == "trial"]
states = {s: sum(r["state"] == s for r in t) for s in ("COMPLETE", "PRUNED", "FAIL")}
print(f"trials {len(t)} {states}")
for r in sorted(t, key=lambda r: (r.get("values") or [9])[0])[:8]:
    print(r["number"], r["state"], r.get("values"), r.get("seconds"), r.get("params"))
b = [r for r in rows if r.get("kind") == "best"]
print("best", b[-1] if b else None)
u = [float(l.split(",")[1].split()[0]) for l in open(f"{d}/util.csv") if "%" in l]
print(f"GPU utilisation mean {sum(u) / max(len(u), 1):.0f}% over {len(u)} s")
PY
cat "$out/summary.txt"
