#!/bin/bash
# phase 1: sLSTM variants, one H100, all at once
rm -rf /tmp/repo; cp -r "$PWD" /tmp/repo; cd /tmp/repo
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata PYTHONUNBUFFERED=1
O=/tmp/r12; rm -rf $O; mkdir -p $O
python3 tests/benchmarks/cell_quality.py make $O > $O/make.log 2>&1
python3 tests/benchmarks/slstm_variants.py make $O >> $O/make.log 2>&1
for rs in "slstm-1x512 1" "slstm-1x512-14k-dropout-0.55 1" "slstm-1x512-10k-dropout-0.55 1" "slstm-1x512 2" "lstm 2" "slstm-14k-dropout-0.55 2"; do
  set -- $rs
  setsid nohup bash -c "python3 -m designer train $O/$1.json --out $O/$1-s$2.run --seed $2 --device cuda --quiet > $O/$1-s$2.log 2>&1; echo done >> $O/finished" >/dev/null 2>&1 &
done
setsid nohup bash -c "nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 5 > $O/util.csv" >/dev/null 2>&1 &
sleep ${1:-60}
cat $O/make.log | tail -3
