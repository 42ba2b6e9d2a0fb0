rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
SETS="GunPoint ArrowHead OSULeaf JapaneseVowels" TRIALS=50 PER_GPU=6 LIMIT=180 INIT=1 SEED=2 PARALLEL=1 REFIT_TOP=5 bash tests/benchmarks/gpu_search_quality.sh /tmp/r5' > /tmp/r5.log 2>&1 < /dev/null &
sleep 2; nvidia-smi -L
