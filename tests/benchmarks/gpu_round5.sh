#!/usr/bin/env bash
# Engines, round 5, on a CUDA machine, one run: PERSIST's per-batch-block barriers against one
# grid-wide barrier (parity, barrier cost, layer-only A/B), then `rnn-designer bench` rows for the
# rows still short of their targets (the unrolled engine's small batches and bf16 with the wider
# set of fused-step tiles; PERSIST at N=16 and N=64), then the unrolled bf16 rows with and without
# set (PDL: programmatic dependent launch between the step kernels, off and on).
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_round5.sh OUT_DIR [PARTS]
# PARTS: comma-separated, of persist, tiles, pdl, fp32 (default: all four; fp32: parity and the
# fp32 rows of the unrolled engine, whose steps are a cuBLAS product and a unit kernel).
set -uo pipefail
out=${1:-.}
parts=,${2:-persist,tiles,pdl,fp32},
mkdir -p "$out"
py=${PYTHON:-python3}
source tests/benchmarks/bench_rows.sh
machine
if [[ $parts == *,persist,* ]]; then
echo "== parity: PERSIST against cuDNN, outputs, states and every gradient"
timeout 150 $py -W ignore tests/benchmarks/bench_persist.py --check
echo "== barrier cost (one counter for the grid, or one per batch block); layer A/B, T=100"
PERSIST_TIME='[[2,512,16],[2,512,64]]' PERSIST_KERNELS=cuda PERSIST_CUDA_TUNE='[{"GBAR":0},{}]' \
  timeout 200 $py -W ignore tests/benchmarks/bench_persist.py --barrier --time
fi
bf16_check() {
  echo "== bf16: the unrolled engine's fused steps (all tiles) against cuDNN fp32"
  timeout 120 $py -W ignore tests/benchmarks/bf16_check.py 16 64
}
L2=$($py tests/benchmarks/bench_project.py LSTM 2 512)
G2=$($py tests/benchmarks/bench_project.py GRU 2 512)
R2=$($py tests/benchmarks/bench_project.py RNN 2 512)
if [[ $parts == *,tiles,* ]]; then
RNN_DESIGNER_PDL=0 bf16_check
export RNN_DESIGNER_PDL=0
row "LSTM 2x512 N=16 fp32" "$L2" cudnn,caffe,persist --batch 16
row "LSTM 2x512 N=64 fp32" "$L2" cudnn,caffe,persist
row "LSTM 2x512 N=64 bf16" "$L2" cudnn,caffe,persist --precision bf16
row "LSTM 2x512 N=16 bf16" "$L2" cudnn,caffe,persist --batch 16 --precision bf16
row "GRU 2x512 N=64 bf16" "$G2" cudnn,caffe --precision bf16
unset RNN_DESIGNER_PDL
fi
if [[ $parts == *,fp32,* ]]; then
echo "== parity on CUDA (fp32, TF32 off): cuDNN vs unrolled"
timeout 150 $py -W ignore - <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
from designer.engines.measure.parity import compare
for kind in ("LSTM", "GRU", "RNN"):
    for size in ((512, 512, 2, 50, 16), (300, 200, 2, 30, 5)):
        d = compare(kind, *size, device="cuda")
        print(kind, size, "max rel %.2e" % max(x.rel for x in d), flush=True)
PY
L3=$($py tests/benchmarks/bench_project.py LSTM 3 1024)
row "LSTM 2x512 N=16 fp32" "$L2" cudnn,caffe --batch 16
row "LSTM 2x512 N=64 fp32" "$L2" cudnn,caffe
row "GRU 2x512 N=64 fp32" "$G2" cudnn,caffe
row "RNN 2x512 N=64 fp32" "$R2" cudnn,caffe
row "LSTM 2x512 N=256 fp32" "$L2" cudnn,caffe --batch 256
row "LSTM 3x1024 N=64 fp32" "$L3" cudnn,caffe
fi
if [[ $parts == *,pdl,* ]]; then
echo "== PDL on"
bf16_check
for pdl in 0 1; do
  export RNN_DESIGNER_PDL=$pdl
  row "LSTM 2x512 N=64 bf16 PDL=$pdl" "$L2" cudnn,caffe --precision bf16
  row "LSTM 2x512 N=16 bf16 PDL=$pdl" "$L2" cudnn,caffe --batch 16 --precision bf16
  row "GRU 2x512 N=64 bf16 PDL=$pdl" "$G2" cudnn,caffe --precision bf16
  row "RNN 2x512 N=64 bf16 PDL=$pdl" "$R2" cudnn,caffe --precision bf16
done
unset RNN_DESIGNER_PDL
fi
