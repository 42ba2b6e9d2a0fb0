#!/usr/bin/env bash
# Generation speed on a CUDA machine, against the targets, and the audio it writes.
#   RNN_DESIGNER_DATA=... bash tests/benchmarks/gpu_generate.sh [OUT_DIR]
# Prints the benchmark rows (GPU, then the host CPU), a PASS/FAIL line per target, then trains
# the audio project for a minute on the GPU and generates 2 s with the default temperature.
set -u
out=${1:-/tmp/gpu-generate}
mkdir -p "$out"
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
echo "== GPU: decoder (CUDA graph and eager) and the v0.1 loop, both engines, 1 and 64 streams"
$py tests/benchmarks/bench_generate.py --device cuda --streams 1,64 | tee "$out/gpu.txt"
echo "== the host CPU, same rows (the v0.1 rows are the window's speed before)"
CUDA_VISIBLE_DEVICES= $py tests/benchmarks/bench_generate.py --device cpu --streams 1,64 \
    | tee "$out/cpu.txt"
$py - "$out/gpu.txt" "$out/cpu.txt" <<'PY'
import json, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.startswith('{"project"')]
def rate(project, engine, device, path, streams, graph=None):
    for r in rows:
        if (r["project"], r["engine"], r["device"].split(":")[0], r["path"], r["streams"]) == \
                (project, engine, device, path, streams) and (graph is None or
                                                               r["graph"].startswith(graph)):
            return r["per_s"]
    return float("nan")
print("\n== targets (best engine first; every engine listed)")
checks = [("audio 2x256, 1 stream, GPU", "audio", 1, 8000, "samples/s"),
          ("Char-RNN text, 1 stream, GPU", "text", 1, 5000, "chars/s"),
          ("Char-RNN text, 64 streams summed, GPU", "text", 64, 50000, "chars/s")]
for name, project, k, goal, unit in checks:
    got = {e: rate(project, e, "cuda", "decoder", k, "CUDA graph") for e in ("cudnn", "caffe")}
    best = max(got.values())
    print(f"{'PASS' if best >= goal else 'FAIL'}  {name}: " + ", ".join(
        f"{e} {v:,.0f}" for e, v in got.items()) + f" {unit} (target {goal:,})")
for project, unit in (("audio", "samples/s"), ("text", "chars/s")):
    for e in ("cudnn", "caffe"):
        before = rate(project, e, "cpu", "v0.1", 1)
        gpu = rate(project, e, "cuda", "decoder", 1, "CUDA graph")
        cpu = rate(project, e, "cpu", "decoder", 1)
        print(f"{project} {e}: v0.1 on the CPU {before:,.0f} {unit}; now {cpu:,.0f} on the CPU "
              f"({cpu / before:.1f}x), {gpu:,.0f} on the GPU ({gpu / before:.1f}x)")
PY
echo "== audio end to end: train 600 steps on the GPU, generate 2 s at the default temperature"
$py -m designer train projects/char-rnn-audio.json --device cuda --steps 600 --out "$out/audio" \
    --seed 1 --quiet 2>&1 | tail -2
$py -m designer generate "$out/audio" --seconds 2 --wav "$out/audio.wav" --seed 1 2>&1 | tail -4
$py -m designer generate "$out/audio" --seconds 2 --wav "$out/audio8.wav" --seed 1 \
    --streams 8 2>&1 | tail -3
$py -m designer generate "$out/audio" --seconds 2 --wav "$out/audio_cold.wav" --seed 1 \
    --temperature 0.8 2>&1 | tail -3
