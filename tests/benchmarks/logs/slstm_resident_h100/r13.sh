#!/bin/bash
# sLSTM kernels: resident against the old path and FlashRNN, one H100
W=${1:-60}
rm -rf /tmp/repo; cp -r "$PWD" /tmp/repo; cd /tmp/repo
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
O=/tmp/r13; rm -rf $O; mkdir -p $O
B=tests/benchmarks/bench_slstm.py
cat > $O/go.sh <<'EOS'
B=tests/benchmarks/bench_slstm.py; O=/tmp/r13
nvidia-smi -L > $O/gpu.txt; python3 -c "import triton,torch;print(torch.__version__,triton.__version__)" >> $O/gpu.txt
python3 $B --check --heads 8,4 > $O/check.txt 2>&1
python3 $B --timeout 150 --heads 8 --rows "persist+graph,flashrnn/triton_fused" > $O/new.txt 2>&1
python3 $B --timeout 120 --heads 8 --rows "persist+graph" --tune '{"precision":"tf32"}' > $O/tf32.txt 2>&1
python3 $B --timeout 120 --heads 8 --rows "persist+graph" --tune '{"resident":false}' > $O/old.txt 2>&1
python3 $B --timeout 120 --heads 4 --dtype bfloat16 --rows "persist+graph" --tune '{"resident":true}' > $O/res128.txt 2>&1
python3 $B --timeout 120 --heads 4 --rows "persist+graph" > $O/split128.txt 2>&1
echo ALLDONE > $O/finished
EOS
setsid nohup bash $O/go.sh > $O/go.log 2>&1 < /dev/null &
sleep $W
