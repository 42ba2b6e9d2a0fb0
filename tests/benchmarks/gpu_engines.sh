#!/usr/bin/env bash
# Engine benchmark on a CUDA machine: our engines and the bare PyTorch baselines in one run.
#   bash tests/benchmarks/gpu_engines.sh OUT_DIR
# Needs RNN_DESIGNER_DATA (tinyshakespeare.txt) and ANCHOR (the path of anchor_lstm.py).
set -uo pipefail
out=${1:-.}
py=${PYTHON:-python3}
cfg="--embed 512 --hidden 512 --layers 2 --seq 100 --batch 64 --vocab 65"
source tests/benchmarks/bench_rows.sh
machine
echo "== parity on CUDA (fp32, TF32 off): cuDNN vs unrolled (fused Triton units)"
$py - <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
from designer.engines.measure.parity import compare
from designer.engines import lstm_steps
for kind, lv in (("LSTM", 1), ("LSTM", 2), ("GRU", 2), ("RNN", 2)):
    d = compare(kind, 512, 512, lv, 50, 16, device="cuda")
    print(kind, lv, "max rel %.2e" % max(x.rel for x in d), "triton" if lstm_steps._triton() else "torch-ops")
PY
echo "== bench: rnn-designer engines (fp32, TF32 off)"
$py -m designer bench tests/benchmarks/char-rnn-bench.json --engines cudnn,caffe --device cuda --steps 30 --warmup 5 --json > "$out/bench_engines.json"
$py -m designer bench tests/benchmarks/char-rnn-bench.json --engines cudnn,caffe --device cuda --steps 30 --warmup 5
echo "== bench: eager only (no CUDA graphs)"
$py -m designer bench tests/benchmarks/char-rnn-bench.json --engines cudnn,caffe --device cuda --steps 20 --warmup 3 --no-cuda-graphs
echo "== bench: the project as MyCaffe sizes it (T=75, N=25, embed 15)"
$py -m designer bench projects/char-rnn-shakespeare-unrolled.json --engines cudnn,caffe --device cuda --steps 30 --warmup 5
echo "== anchor: bare PyTorch scripts, same sizes"
$py "$ANCHOR" $cfg --steps 30 --warmup 5 --variants cudnn,unrolled_naive,unrolled_premul,unrolled_graph --json "$out/anchor.json"
echo "== bench again (order effects)"
$py -m designer bench tests/benchmarks/char-rnn-bench.json --engines caffe,cudnn --device cuda --steps 30 --warmup 5
