#!/usr/bin/env bash
# Engines, round 7, on a CUDA machine: PERSIST's cluster mode sized by the driver
# (cuOccupancyMaxActiveClusters), and the unrolled engine's fused fp32 steps against cuBLAS + unit.
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_round7.sh OUT_DIR [PARTS]
# PARTS: comma-separated, of cluster (profiler over one level, whole-step rows at N=16, 32, 64,
# then parity with clusters on), fused (fp32 rows with RNN_DESIGNER_FUSED_STEPS=0 and =1) and
# memory (PERSIST's bf16 estimate against the allocator's peak, every example project).
set -uo pipefail
out=${1:-.}
parts=,${2:-cluster,fused},
mkdir -p "$out"
py=${PYTHON:-python3}
source tests/benchmarks/bench_rows.sh
machine
L2=$(mk LSTM 2 512)
tunes='{} {"TC_CLUSTER":1} {"TC_CLUSTER":1,"TC_ROWS":16}'   # JSON objects without spaces
if [[ $parts == *,cluster,* ]]; then
for n in 16 64; do for t in $tunes; do
  echo "== probe N=$n $t"
  RNN_DESIGNER_PERSIST_TUNE=$t timeout 100 $py tests/benchmarks/persist_probe.py $n 512 bf16 --profile 2>&1 | grep -v -i warn | head -5
done; done
for n in 64 16 32; do for t in $tunes; do
  RNN_DESIGNER_PERSIST_TUNE=$t row "LSTM 2x512 N=$n bf16 $t" "$L2" cudnn,persist --batch $n --precision bf16
done; done
echo "== parity with clusters"
RNN_DESIGNER_PERSIST_TUNE='{"TC_CLUSTER":1}' timeout 150 $py -W ignore tests/benchmarks/bench_persist.py --check
fi
if [[ $parts == *,fused,* ]]; then
G2=$(mk GRU 2 512); R2=$(mk RNN 2 512)
for f in 0 1; do
  export RNN_DESIGNER_FUSED_STEPS=$f
  row "LSTM 2x512 N=16 fp32 fused=$f" "$L2" cudnn,caffe --batch 16
  row "GRU 2x512 N=64 fp32 fused=$f" "$G2" cudnn,caffe
  row "RNN 2x512 N=64 fp32 fused=$f" "$R2" cudnn,caffe
  row "GRU 2x512 N=16 fp32 fused=$f" "$G2" cudnn,caffe --batch 16
done
fi
if [[ $parts == *,memory,* ]]; then
timeout 500 $py tests/benchmarks/bench_memory.py --device cuda --engines persist --precision bf16 \
  --json "$out/memory_cuda_bf16_persist.json"
fi
