rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
SETS="GunPoint ArrowHead OSULeaf JapaneseVowels" TRIALS=50 PER_GPU=6 LIMIT=180 INIT=1 PARALLEL=1 REFIT_TOP=5 bash tests/benchmarks/gpu_search_quality.sh /tmp/r4' > /tmp/r4.log 2>&1 < /dev/null &
sleep 2; nvidia-smi -L
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
for s in ACSF1 ItalyPowerDemand PickupGestureWiimoteZ BasicMotions; do
  d=/tmp/x4/$s; mkdir -p $d
  python3 -m designer init --data /tmp/rdata/${s}_TRAIN.ts --out $d/p.json > $d/init.txt 2>&1
  python3 -m designer train $d/p.json --out $d/init.run --quiet --seed 1 > $d/train.txt 2>&1
  python3 -m designer evaluate $d/init.run --json > $d/eval.json 2> $d/eval.err
  python3 -c "import json;r=json.load(open(\"$d/eval.json\"));print(\"$s\", round(r[\"accuracy\"],3), r[\"peer\"][\"name\"], round(r[\"peer\"][\"accuracy\"],3))"
done' > /tmp/x4.log 2>&1 < /dev/null &
