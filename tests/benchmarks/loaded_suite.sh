#!/usr/bin/env bash
# The README's test command, RUNS times in a row on a fresh clone of HEAD, with both cores kept
# busy by two spinning processes (a loaded machine), one line a run: passed, failed, seconds.
#
#   bash tests/benchmarks/loaded_suite.sh [RUNS=5] [LOG_DIR=/tmp/loaded-suite]
#
# The clone lives beside the checkout (so ../shared/data is found as on CI) and is set up once,
# as .ci/run does (torch, then .[test,peers]); each run's whole output stays in LOG_DIR/run-N.log.
set -euo pipefail
runs=${1:-5}
logs=${2:-/tmp/loaded-suite}
here=$(cd "$(dirname "$0")/../.." && pwd)
clone="$(dirname "$here")/loaded-clone"
rm -rf "$clone" && git clone -q "$here" "$clone" && mkdir -p "$logs"
cd "$clone"
python3 -m venv .venv && . .venv/bin/activate
{ python -m pip install -q --upgrade pip && python -m pip install -q torch==2.13.0 \
    && python -m pip install -q -e '.[test,peers]' \
    && python -m pip install -q --no-deps xlstm==2.0.6 mlstm_kernels==2.0.6 einops==0.8.2; } \
    > "$logs/install.log" 2>&1
spin() { python3 -c "while 1: pass" >/dev/null 2>&1 & echo $!; }
hogs="$(spin) $(spin)"
trap 'kill $hogs 2>/dev/null' EXIT
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, 2 spinning processes"
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    QT_QPA_PLATFORM=offscreen RNN_DESIGNER_DATA=../shared/data python -m pytest -n 2 \
        -p no:cacheprovider > "$logs/run-$i.log" 2>&1 || true
    summary=$(tail -1 "$logs/run-$i.log")
    echo "run $i: $summary (wall $(( $(date +%s) - start )) s)"
    grep -E "^(FAILED|ERROR) " "$logs/run-$i.log" || true
done
