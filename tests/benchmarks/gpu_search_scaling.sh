#!/usr/bin/env bash
# `search` on K GPUs against one: the same study (projects/japanese-vowels.json with
# tests/benchmarks/jv_space.json, seed 1) run twice on one machine, first on one GPU, then on
# GPUS of them, each for LIMIT seconds of starting trials, PER_GPU workers a GPU. Every event
# line is stamped with the time it arrived, so trials per hour come from the whole run and
# from its steady part (after the first trial ended); nvidia-smi samples every GPU each second.
#   RNN_DESIGNER_DATA=<data> [GPUS=4] [PER_GPU=8] [LIMIT=90] [PRUNER=median] bash tests/benchmarks/gpu_search_scaling.sh OUT
# OUT/g<K>/search.jsonl, util.csv; OUT/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/search_scaling}
py=${PYTHON:-python3}
gpus=${GPUS:-4}; per_gpu=${PER_GPU:-8}; limit=${LIMIT:-90}; pruner=${PRUNER:-median}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$out/gpus.txt"
stamp='import json, sys, time
for line in sys.stdin:
    try:
        row = json.loads(line)
    except ValueError:
        continue
    row["t"] = time.time()
    print(json.dumps(row), flush=True)'
for k in 1 "$gpus"; do
  d="$out/g$k"; mkdir -p "$d"
  cp projects/japanese-vowels.json "$d/p.json"
  nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -l 1 > "$d/util.csv" 2>/dev/null &
  mon=$!
  $py -c 'import time; print(time.time())' > "$d/t0"
  $py -m designer search "$d/p.json" --space tests/benchmarks/jv_space.json --trials 100000 \
      --device cuda --gpus "$k" --per-gpu "$per_gpu" --seed 1 --time-limit "$limit" --pruner "$pruner" --json \
      --storage "sqlite:///$d/jv.db" 2> "$d/search.err" | $py -c "$stamp" > "$d/search.jsonl"
  $py -c 'import time; print(time.time())' > "$d/t1"
  kill $mon 2>/dev/null; wait $mon 2>/dev/null
done
$py - "$out" "$gpus" > "$out/summary.txt" <<'PY'
import json, sys
out, gpus = sys.argv[1], int(sys.argv[2])
rate = {}
for k in (1, gpus):
    d = f"{out}/g{k}"
    t0, t1 = float(open(f"{d}/t0").read()), float(open(f"{d}/t1").read())
    rows = [json.loads(l) for l in open(f"{d}/search.jsonl")]
    ended = sorted(r["t"] for r in rows if r.get("kind") == "trial"
                   and r.get("state") in ("COMPLETE", "PRUNED"))
    failed = sum(r.get("kind") == "trial" and r.get("state") == "FAIL" for r in rows)
    steady = (len(ended) - 1) / (ended[-1] - ended[0]) * 3600 if len(ended) > 1 else 0.0
    whole = len(ended) / (t1 - t0) * 3600
    used = [float(l.split(",")[1]) for l in open(f"{d}/util.csv")
            if l.count(",") == 1 and int(l.split(",")[0]) < k]
    rate[k] = (whole, steady)
    print(f"{k} GPU(s): {len(ended)} trials ended ({failed} failed) in {t1 - t0:.0f} s: "
          f"{whole:.0f} trials/hour over the whole run, {steady:.0f} between the first and the "
          f"last trial's end; GPU utilisation {sum(used) / max(len(used), 1):.0f}% "
          f"({len(used)} samples)")
print(f"{gpus} GPUs / 1 GPU: {rate[gpus][0] / rate[1][0]:.2f}x over the whole run, "
      f"{rate[gpus][1] / rate[1][1]:.2f}x steady")
PY
cat "$out/summary.txt"
