#!/usr/bin/env bash
# The memory estimate against the CUDA allocator's peak, every example project and the bench
# config on both engines, fp32 and bf16, each configuration in a fresh process.
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_memory.sh OUT_DIR
set -u
out=${1:-.}
py=${PYTHON:-python3}
$py -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
echo "== fp32 (the projects' own settings: CUDA graphs where the step can be captured)"
$py tests/benchmarks/bench_memory.py --device cuda --json "$out/memory_cuda_fp32.json"
echo "== bf16 autocast"
$py tests/benchmarks/bench_memory.py --device cuda --precision bf16 \
    --json "$out/memory_cuda_bf16.json"
echo "== the 200,000-unit LSTM is refused before anything is allocated"
$py - <<'PY'
import json
d = json.load(open("projects/char-rnn-shakespeare.json"))
for layer in d["graph"]["layers"]:
    if layer["type"] == "LSTM":
        layer["params"]["num_output"] = 200000
json.dump(d, open("/tmp/lstm-200000.json", "w"))
PY
$py -m designer train /tmp/lstm-200000.json --device cuda --steps 1 --out /tmp/lstm-200000-run
echo "exit code $? (2 expected)"
