rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
nvidia-smi -L
python3 tests/benchmarks/cell_quality.py make /tmp/r9 > /tmp/r9.sizes.txt
python3 tests/benchmarks/slstm_variants.py make /tmp/r9
for v in lstm slstm slstm-exp-forget slstm-3x576 slstm-dropout-0.3 slstm-lr-2e-3; do
  ( s0=$(date +%s); python3 -m designer train /tmp/r9/$v.json --out /tmp/r9/$v.run --seed 1 --device cuda --quiet > /tmp/r9/$v.txt 2>&1; echo "$v: exit $? after $(( $(date +%s) - s0 )) s" ) &
done
wait
python3 tests/benchmarks/slstm_forget_bias.py table /tmp/r9' > /tmp/r9.log 2>&1 < /dev/null &
sleep ${1:-200}
bash .rdata/r9poll.sh 0
