#!/usr/bin/env bash
# Training targets on a CUDA machine: Char-RNN quality, MNIST on both engines, audio.
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_training.sh OUT_DIR
set -u
out=${1:-.}
py=${PYTHON:-python3}
$py -m designer.monitor --count 2 --interval 0.5 || true
echo "== Char-RNN (cuDNN project), 10-minute budget"
$py -m designer train projects/char-rnn-shakespeare.json --device cuda --out /tmp/shakespeare \
    --seed 1 --time-limit 570 --quiet 2>&1 | tail -4
cp /tmp/shakespeare/metrics.jsonl "$out/shakespeare.jsonl"
$py -m designer generate /tmp/shakespeare --prime "ROMEO:" -n 500 --seed 1 --temperature 0.8 > "$out/shakespeare_sample.txt"
echo "== MNIST rows, both engines"
for e in cudnn caffe; do
  $py -m designer train projects/mnist-lstm.json --device cuda --engine $e --out /tmp/mnist-$e --seed 1 --quiet 2>&1 | tail -2
done
echo "== audio"
$py -m designer train projects/char-rnn-audio.json --device cuda --out /tmp/audio --seed 1 --quiet 2>&1 | tail -2
cp /tmp/audio/metrics.jsonl "$out/audio.jsonl"
$py -m designer generate /tmp/audio --seconds 2 --wav "$out/audio_generated.wav" --seed 1 --device cuda 2>&1 | tail -1
$py - <<'PY'
import json, math
from designer.graph import project as P
from designer.training.data import open_source
p = P.load("projects/char-rnn-audio.json")
s = open_source(p.graph.layer("data"), p.path.parent)
v = [json.loads(l) for l in open("/tmp/audio/metrics.jsonl") if '"val"' in l]
print("audio: class-histogram entropy %.3f nats (val split); best val loss %.3f nats" % (
    s.class_histogram_entropy("val"), min(r["val_loss"] for r in v)))
PY
