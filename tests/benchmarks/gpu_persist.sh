#!/usr/bin/env bash
# The PERSIST engine on a CUDA machine, in one run: parity with cuDNN, the cost of a grid-wide
# barrier, layer-only times of both PERSIST kernels (CUDA C++ and Triton) against cuDNN, then
# `rnn-designer bench` rows with all three engines (the whole training step, Adam, the Char-RNN
# bench config).
#   bash tests/benchmarks/gpu_persist.sh OUT_DIR [--sweep]
set -uo pipefail
out=${1:-.}
mkdir -p "$out"
py=${PYTHON:-python3}
source tests/benchmarks/bench_rows.sh
machine
echo "== parity: PERSIST against cuDNN, outputs, states and every gradient"
timeout 150 $py -W ignore tests/benchmarks/bench_persist.py --check
echo "== barrier cost; layer forward + backward and forward alone, T=100"
PERSIST_TIME='[[2,512,16],[2,512,64],[2,512,256],[3,1024,64]]' \
  timeout 300 $py -W ignore tests/benchmarks/bench_persist.py --barrier --time
if [ "${2:-}" = "--sweep" ]; then
  echo "== the Triton kernel's block sizes"
  timeout 300 $py -W ignore tests/benchmarks/bench_persist.py --sweep
fi
E=cudnn,caffe,persist
L2=$(mk LSTM 2 512)
row "LSTM 2x512 N=64 fp32" "$L2" $E
row "LSTM 2x512 N=16 fp32" "$L2" $E --batch 16
row "LSTM 2x512 N=64 bf16" "$L2" $E --precision bf16
row "LSTM 2x512 N=16 bf16" "$L2" $E --batch 16 --precision bf16
row "LSTM 2x512 N=256 fp32" "$L2" $E --batch 256
L3=$(mk LSTM 3 1024)
row "LSTM 3x1024 N=64 fp32" "$L3" $E
