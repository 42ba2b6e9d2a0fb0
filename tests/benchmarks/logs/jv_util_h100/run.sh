set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD OMP_NUM_THREADS=1
cp -r .rdata /tmp/rdata; export RNN_DESIGNER_DATA=/tmp/rdata
nvidia-smi -L; nproc
for k in 8 14; do
  d=/tmp/j$k; mkdir -p $d; cp projects/japanese-vowels.json $d/p.json
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -l 1 > $d/util.csv &
  mon=$!
  timeout -s INT 100 python3 -m designer search $d/p.json --space tests/benchmarks/jv_space.json --trials 100000 --device cuda --per-gpu $k --seed 1 --time-limit 70 --pruner none --json --storage sqlite:///$d/jv.db > $d/search.jsonl 2> $d/search.err
  kill $mon
  python3 - $d $k <<'PY'
import json, sys
d, k = sys.argv[1], sys.argv[2]
u = [int(x) for x in open(f"{d}/util.csv").read().split() if x.strip().isdigit()]
rows = [json.loads(l) for l in open(f"{d}/search.jsonl") if l.startswith("{")]
t = [r for r in rows if r.get("kind") == "trial"]
mid = u[10:-15] if len(u) > 30 else u
print(f"per-gpu {k}: {len(t)} trials, util mean {sum(u)/max(1,len(u)):.0f}% (middle {sum(mid)/max(1,len(mid)):.0f}%), samples {len(u)}")
PY
done
