#!/usr/bin/env bash
# What the Inspect view and the per-validation look at the held-out snippet cost on a CUDA
# machine, on both engines:
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_inspect.sh OUT_DIR
set -u
out=${1:-.}
py=${PYTHON:-python3}
export QT_QPA_PLATFORM=offscreen
for e in cudnn caffe; do
  echo "== $e: a validation against the look at the snippet, and full inspections"
  $py tests/benchmarks/bench_probe_cost.py --device cuda --engine $e | tee "$out/probe_cost_$e.json"
  echo "== $e: training through the window with the Inspect view open (live) vs closed"
  $py tests/benchmarks/bench_inspect_train.py --device cuda --engine $e --steps 3000 \
      --repeats 3 --every 100 | tee "$out/inspect_train_$e.jsonl"
done
