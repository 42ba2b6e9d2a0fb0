#!/usr/bin/env bash
# init_sweep.py on a GPU, one process per data set side by side (the nets are small):
#   RNN_DESIGNER_DATA=<data> bash tests/benchmarks/gpu_init_sweep.sh OUT "SET,SET" DESIGN...
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; sets=$2; shift 2
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
for s in ${sets//,/ }; do
  python3 tests/benchmarks/init_sweep.py "$out/$s" "$@" --sets "$s" --device cuda > "$out/$s.log" 2>&1 &
done
wait
grep -h SWEEP "$out"/*.log | sort
grep -h -B2 -A3 "Error\|ERROR" "$out"/*.log | head -40
