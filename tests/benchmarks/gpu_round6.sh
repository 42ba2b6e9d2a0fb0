#!/usr/bin/env bash
# Engines, round 6, on a CUDA machine, one run: PERSIST's bf16 tensor-core kernels (persist_tc)
# against its fp32-FMA kernels and cuDNN: parity, layer-only A/B, then `rnn-designer bench` rows.
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_round6.sh OUT_DIR [PARTS]
# PARTS: comma-separated, of check, layer, rows (default: these three), tune (the plan's
# choices overridden through $RNN_DESIGNER_PERSIST_TUNE, whole step) and profile.
set -uo pipefail
out=${1:-.}
parts=,${2:-check,layer,rows},
mkdir -p "$out"
py=${PYTHON:-python3}
source tests/benchmarks/bench_rows.sh
machine
L2=$(mk LSTM 2 512)   # the Char-RNN bench net, 2x512
if [[ $parts == *,check,* ]]; then
echo "== parity: PERSIST against cuDNN, outputs, states and every gradient"
timeout 200 $py -W ignore tests/benchmarks/bench_persist.py --check
fi
if [[ $parts == *,layer,* ]]; then
echo "== layer only, T=100: fp32-FMA kernels (TC0) against tensor cores (16 or 32 units a block)"
PERSIST_TIME=${PERSIST_TIME:-'[[2,512,16],[2,512,64],[2,512,256]]'} PERSIST_KERNELS=cuda \
  PERSIST_CUDA_TUNE=${PERSIST_CUDA_TUNE:-'[{"TC":0},{},{"TC_U":32},{"TC_ROWS":2}]'} \
  PERSIST_BF16_ONLY=1 timeout 300 $py -W ignore tests/benchmarks/bench_persist.py --time
fi
if [[ $parts == *,rows,* ]]; then
row "LSTM 2x512 N=64 bf16" "$L2" cudnn,caffe,persist --precision bf16
row "LSTM 2x512 N=16 bf16" "$L2" cudnn,caffe,persist --batch 16 --precision bf16
row "LSTM 2x512 N=256 bf16" "$L2" cudnn,persist --batch 256 --precision bf16
row "LSTM 2x512 N=64 fp32" "$L2" cudnn,persist
row "LSTM 2x512 N=16 fp32" "$L2" cudnn,persist --batch 16
fi
if [[ $parts == *,profile,* ]]; then
echo "== the persistent kernels' time in one level's forward + backward (torch profiler)"
for n in 16 64; do $py tests/benchmarks/persist_probe.py $n 512 bf16 --profile 2>&1 | grep -v -i warn | head -4; done
fi
if [[ $parts == *,tune,* ]]; then
# the whole step with the tensor-core plan's choices overridden ($RNN_DESIGNER_PERSIST_TUNE)
tunes=${TUNES:-'{} {"TC_SPLIT":1} {"TC_U":16}'}   # JSON objects without spaces
for n in ${TUNE_N:-16 64 256}; do
  for tune in $tunes; do
    RNN_DESIGNER_PERSIST_TUNE=$tune row "LSTM 2x512 N=$n bf16 $tune" "$L2" cudnn,persist --batch $n --precision bf16
  done
done
fi
