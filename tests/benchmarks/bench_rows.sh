# Sourced by the GPU scripts. machine: prints the versions, the GPU, its clock and temperature.
machine() {
  $py -c "import torch, sys; print('torch', torch.__version__, torch.cuda.get_device_name(), 'python', sys.version.split()[0])"
  $py -c "import triton; print('triton', triton.__version__)" 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
}
# mk KIND LEVELS HIDDEN: the path of a copy of the Char-RNN bench config with that recurrent layer.
mk() {
  $py tests/benchmarks/bench_project.py "$@"
}
# row LABEL PROJECT ENGINES [bench args...] runs one
# `rnn-designer bench` process (30 timed steps after 5 warm-up, the whole step in a CUDA graph),
# prints a ROW line (each engine against cuDNN) and appends its JSON to $out/rows.jsonl.
# Needs $py and $out.
row() {
  label=$1; shift; proj=$1; shift; engines=$1; shift
  echo "== $label"
  timeout 120 $py -W ignore -m designer bench "$proj" --engines "$engines" --device cuda \
      --steps 30 --warmup 5 --json "$@" > "$out/row.json" 2> "$out/row.err" || { tail -3 "$out/row.err"; return; }
  $py - "$label" "$out/row.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[2]))["rows"]
by = {r["engine"].lower(): r for r in rows}
c = by["cudnn"]
out = "ROW | %s | cudnn %.2f ms" % (sys.argv[1], c["ms_step"])
if "caffe" in by:
    out += " | unrolled %.2f ms (%.2fx)" % (by["caffe"]["ms_step"], by["caffe"]["ms_step"] / c["ms_step"])
if "persist" in by:
    out += " | persist %.2f ms (%.2fx cuDNN's speed)" % (by["persist"]["ms_step"], c["ms_step"] / by["persist"]["ms_step"])
print(out)
PY
  cat "$out/row.json" >> "$out/rows.jsonl"
}
