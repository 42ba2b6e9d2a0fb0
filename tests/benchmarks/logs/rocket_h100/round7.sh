rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
nvidia-smi -L
python3 tests/benchmarks/bench_rocket_memory.py /tmp/r7/mem GunPoint OSULeaf JapaneseVowels
for s in GunPoint ArrowHead OSULeaf JapaneseVowels; do
  t0=$(date +%s)
  SETS=$s TRIALS=50 PER_GPU=8 LIMIT=240 INIT=1 REFIT_TOP=5 bash tests/benchmarks/gpu_search_quality.sh /tmp/r7/$s
  echo "WALL | $s | $(( $(date +%s) - t0 )) s"
done' > /tmp/r7.log 2>&1 < /dev/null &
sleep ${1:-400}
bash .rdata/r7poll.sh 0
