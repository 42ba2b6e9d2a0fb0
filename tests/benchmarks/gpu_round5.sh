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
$py -c "import torch, triton, sys; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(), 'python', sys.version.split()[0])"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
if [[ $parts == *,persist,* ]]; then
echo "== parity: PERSIST against cuDNN, outputs, states and every gradient"
timeout 150 $py -W ignore tests/benchmarks/bench_persist.py --check
echo "== barrier cost (one counter for the grid, or one per batch block); layer A/B, T=100"
PERSIST_TIME='[[2,512,16],[2,512,64]]' PERSIST_KERNELS=cuda PERSIST_CUDA_TUNE='[{"GBAR":0},{}]' \
  timeout 200 $py -W ignore tests/benchmarks/bench_persist.py --barrier --time
fi
bf16_check() {
echo "== bf16: the unrolled engine's fused steps (all tiles) against cuDNN fp32"
timeout 120 $py -W ignore - <<'PY'
import torch
from designer.engines.convert import convert_layer
from designer.engines.recurrent import CudnnRecurrent
from designer.engines.unrolled import UnrolledRecurrent
torch.manual_seed(0)
for kind in ("LSTM", "GRU", "RNN"):
    for n in (16, 64):
        c = CudnnRecurrent(kind, 512, 512, 2, 0.0, False).cuda()
        u = UnrolledRecurrent(kind, 512, 512, 2).cuda()
        u.load_state_dict(convert_layer(kind, c.state_dict(), 2, "CUDNN", "CAFFE"))
        x = torch.randn(100, n, 512, device="cuda", requires_grad=True)
        w = torch.randn(100, n, 512, device="cuda")

        def run(m, bf16):
            x.grad = None
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                y, _ = m(x)
            (y.float() * w).sum().backward()
            return y.float().detach(), x.grad.clone()
        y32, g32 = run(c, False)
        for name, m in (("cuDNN", c), ("unrolled", u)):
            y, g = run(m, True)
            print(kind, "N=%d" % n, name, "bf16 vs fp32 cuDNN: max |dy| %.3e  rel |dgrad| %.3e"
                  % ((y - y32).abs().max(), (g - g32).abs().max() / g32.abs().max()), flush=True)
PY
}
row() {  # label project engines extra-args...
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
from designer.engines.parity import compare
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
