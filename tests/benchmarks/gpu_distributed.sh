#!/usr/bin/env bash
# Data-parallel training on a machine with 2 (or more) GPUs, in one run of about 5 minutes:
# tokens/s on 1 and 2 GPUs for both engines (and on all GPUs when there are more), the loss
# curve over tokens of 2 GPUs x 64 against 1 GPU x 128, and a 2-GPU run resumed on 1 GPU and
# back on 2. Prints the figures; OUT_DIR/distributed.json holds them.
#   RNN_DESIGNER_DATA=<data> bash tests/benchmarks/gpu_distributed.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
# the lent machines' rule: no NVLink multicast (NVLS) in anything started here
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out=${1:-/tmp/gpu_distributed}
mkdir -p "$out"
py=${PYTHON:-python3}
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -12
$py tests/benchmarks/bench_distributed.py --out "$out" "${@:2}" 2>&1 | tee "$out/log.txt"
