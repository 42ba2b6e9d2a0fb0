#!/usr/bin/env bash
# Engines, round 2, on a CUDA machine: every kind and precision, the cuDNN engine against the
# unrolled one, in one run (one process per row, both engines in each).
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_engines_round2.sh OUT_DIR
set -uo pipefail
out=${1:-.}
mkdir -p "$out"
py=${PYTHON:-python3}
source tests/benchmarks/bench_rows.sh
machine
echo "== parity on CUDA (fp32, TF32 off): cuDNN vs unrolled, fused Triton units"
$py - <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
from designer.engines.measure.parity import compare
from designer.engines import lstm_steps, gru_steps
for kind, lv in (("LSTM", 2), ("GRU", 2), ("RNN", 2)):
    d = compare(kind, 512, 512, lv, 50, 16, device="cuda")
    print(kind, lv, "N=16 max rel %.2e" % max(x.rel for x in d))
    d = compare(kind, 300, 200, lv, 30, 5, device="cuda")  # sizes off the tiles
    print(kind, lv, "max rel %.2e" % max(x.rel for x in d),
          "triton" if (lstm_steps._triton() if kind == "LSTM" else gru_steps._triton())
          else "torch-ops")
PY
echo "== bf16: the unrolled engine against cuDNN (outputs and input gradients)"
$py -W ignore tests/benchmarks/bf16_check.py 64
# one project per row, made from the bench config
E=cudnn,caffe
L2=$(mk LSTM 2 512); L3=$(mk LSTM 3 1024); G2=$(mk GRU 2 512); R2=$(mk RNN 2 512)
row "LSTM 2x512 N=64 fp32" "$L2" $E
row "LSTM 2x512 N=16 fp32" "$L2" $E --batch 16
row "LSTM 2x512 N=256 fp32" "$L2" $E --batch 256
row "LSTM 3x1024 N=64 fp32" "$L3" $E
row "GRU 2x512 N=64 fp32" "$G2" $E
row "RNN 2x512 N=64 fp32" "$R2" $E
row "LSTM 2x512 N=64 bf16" "$L2" $E --precision bf16
row "GRU 2x512 N=64 bf16" "$G2" $E --precision bf16
row "LSTM 2x512 N=16 bf16" "$L2" $E --batch 16 --precision bf16
row "RNN 2x512 N=64 bf16" "$R2" $E --precision bf16
echo "== bf16 steps as two kernels (cuBLAS product, then the unit) instead of one fused kernel"
export RNN_DESIGNER_FUSED_STEPS=0
row "LSTM 2x512 N=64 bf16, two kernels a step" "$L2" $E --precision bf16
row "LSTM 2x512 N=16 bf16, two kernels a step" "$L2" $E --batch 16 --precision bf16
row "GRU 2x512 N=64 bf16, two kernels a step" "$G2" $E --precision bf16
row "RNN 2x512 N=64 bf16, two kernels a step" "$R2" $E --precision bf16
echo "== fp32 (TF32 off) steps forced into one fused kernel (an IEEE float32 product in Triton)"
export RNN_DESIGNER_FUSED_STEPS=1
row "LSTM 2x512 N=64 fp32, one fused kernel a step" "$L2" $E
unset RNN_DESIGNER_FUSED_STEPS
