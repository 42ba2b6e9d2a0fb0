#!/usr/bin/env bash
# The recurrent cells on tinyshakespeare at the Char-RNN's 3.2 M parameters, each given the same
# wall time of one GPU: `search` of its training recipe (tests/benchmarks/cell_quality.py makes
# the projects) starting trials for LIMIT seconds, stopped by Ctrl-C at HARD seconds, PER_GPU
# trials at once. The cells take the GPUs in turn (GPUS, default "0 1 2 3"; a GPU with two
# cells runs them one after the other); nvidia-smi samples the GPUs every second.
#   RNN_DESIGNER_DATA=<data> [CELLS="LSTM sLSTM mLSTM MinGRU MinLSTM"] [GPUS="0 1 2 3"] \
#     [LIMIT=480] [HARD=600] [PER_GPU=3] [WIDE=1] [SEED=1] bash tests/benchmarks/gpu_cell_quality.sh OUT
# WIDE=1: the search space reaches dropout 0.7 and 20,000 steps (cell_quality.py make --wide).
# SEED: the search's seed (the sampler's and the trials'), 1 unless given.
# OUT/<cell>.json, OUT/<cell>/search.jsonl, OUT/table.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/cell_quality}
py=${PYTHON:-python3}
cells=(${CELLS:-LSTM sLSTM mLSTM MinGRU MinLSTM}); gpus=(${GPUS:-0 1 2 3})
limit=${LIMIT:-480}; hard=${HARD:-600}; per_gpu=${PER_GPU:-3}; seed=${SEED:-1}
mkdir -p "$out/data"
# the corpus where nothing else writes while the searches run
cp "${RNN_DESIGNER_DATA:-../shared/data}/tinyshakespeare.txt" "$out/data/"
export RNN_DESIGNER_DATA="$out/data"
$py tests/benchmarks/cell_quality.py make "$out" ${WIDE:+--wide} | tee "$out/sizes.txt"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -l 1 \
    > "$out/util.csv" 2>/dev/null &
mon=$!
one_gpu() {  # gpu cell...
  local g=$1; shift
  for cell in "$@"; do
    mkdir -p "$out/$cell"
    local s0=$(date +%s)
    CUDA_VISIBLE_DEVICES=$g timeout -s INT -k 90 "$hard" $py -m designer search "$out/$cell.json" \
        --trials 1000 --device cuda --per-gpu "$per_gpu" --seed "$seed" --time-limit "$limit" --json \
        --storage "sqlite:///$out/$cell/study.db" > "$out/$cell/search.jsonl" 2> "$out/$cell/search.err"
    echo "$cell on GPU $g: exit $? after $(( $(date +%s) - s0 )) s" | tee -a "$out/done.txt"
  done
}
pids=()
for i in "${!gpus[@]}"; do
  mine=()
  for j in "${!cells[@]}"; do
    [ $(( j % ${#gpus[@]} )) = "$i" ] && mine+=("${cells[$j]}")
  done
  [ ${#mine[@]} -gt 0 ] && { one_gpu "${gpus[$i]}" "${mine[@]}" & pids+=($!); }
done
wait "${pids[@]}"
kill $mon 2>/dev/null
$py tests/benchmarks/cell_quality.py table "$out" | tee "$out/table.md"
