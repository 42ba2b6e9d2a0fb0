#!/bin/bash
W=${1:-60}
rm -rf /tmp/repo; cp -r "$PWD" /tmp/repo; cd /tmp/repo
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
O=/tmp/r14; rm -rf $O; mkdir -p $O
cat > $O/go.sh <<'EOS'
B=tests/benchmarks/bench_slstm.py; O=/tmp/r14
nvidia-smi -L > $O/gpu.txt; python3 -c "import triton,torch;print(torch.__version__,triton.__version__)" >> $O/gpu.txt
python3 $B --timeout 150 --heads 8,4 --rows "persist+graph,flashrnn/triton_fused" > $O/new.txt 2>&1
python3 $B --timeout 400 --heads 8,4 --rows "persist+graph,xlstm/cuda" > $O/xlstm.txt 2>&1
python3 $B --timeout 120 --heads 8 --dtype float32 --rows "persist+graph,flashrnn/triton_fused" --tune '{"precision":"tf32"}' > $O/tf32.txt 2>&1
python3 $B --timeout 150 --heads 4 --rows "persist+graph,torch loop+graph" > $O/loop.txt 2>&1
python3 $B --check --heads 8,4 > $O/check.txt 2>&1
python3 prof.py > $O/prof.txt 2>&1
echo ALLDONE > $O/finished
EOS
cp /tmp/rdata/prof.py . 
setsid nohup bash $O/go.sh > $O/go.log 2>&1 < /dev/null &
sleep $W
