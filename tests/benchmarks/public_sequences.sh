#!/usr/bin/env bash
# init + train + evaluate, with every default, on public series and labelled sequences that
# the examples never used: the data files shipped inside the aeon 1.6.0 and statsmodels 0.15.0
# wheels (downloaded, unpacked, never installed). One line of figures per file.
#
#   bash tests/benchmarks/public_sequences.sh [WORK_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${1:-$(mktemp -d)}"
mkdir -p "$WORK/wheels" "$WORK/runs"
cd "$WORK"
python -m pip download -q --no-deps aeon==1.6.0 statsmodels==0.15.0 -d wheels
python - <<'PY'
import glob, zipfile
want = {"aeon/datasets/data/" + p for p in (
    "Airline/Airline.csv", "ShampooSales/ShampooSales.csv", "solar/solar.csv",
    "Lynx/Lynx.csv", "Uschange/Uschange.csv", "ArrowHead/ArrowHead_TRAIN.ts",
    "ArrowHead/ArrowHead_TEST.ts", "BasicMotions/BasicMotions_TRAIN.ts",
    "BasicMotions/BasicMotions_TEST.ts", "GunPoint/GunPoint_TRAIN.ts", "GunPoint/GunPoint_TEST.ts",
    "ItalyPowerDemand/ItalyPowerDemand_TRAIN.ts", "ItalyPowerDemand/ItalyPowerDemand_TEST.ts",
    "OSULeaf/OSULeaf_TRAIN.ts", "OSULeaf/OSULeaf_TEST.ts")}
want |= {f"statsmodels/datasets/{p}" for p in (
    "sunspots/sunspots.csv", "nile/nile.csv", "elec_equip/elec_equip.csv",
    "macrodata/macrodata.csv")}
for wheel in glob.glob("wheels/*.whl"):
    z = zipfile.ZipFile(wheel)
    for name in set(z.namelist()) & want:
        z.extract(name, ".")
PY
A=aeon/datasets/data; S=statsmodels/datasets
for f in $A/Airline/Airline.csv $A/ShampooSales/ShampooSales.csv $S/sunspots/sunspots.csv \
         $S/nile/nile.csv $S/elec_equip/elec_equip.csv $A/Uschange/Uschange.csv \
         $A/solar/solar.csv $A/Lynx/Lynx.csv $S/macrodata/macrodata.csv \
         $A/ArrowHead/ArrowHead_TRAIN.ts $A/BasicMotions/BasicMotions_TRAIN.ts \
         $A/GunPoint/GunPoint_TRAIN.ts $A/ItalyPowerDemand/ItalyPowerDemand_TRAIN.ts \
         $A/OSULeaf/OSULeaf_TRAIN.ts; do
  name=$(basename "${f%.*}")
  rm -rf "runs/$name" "runs/$name.json"
  (cd "$ROOT" && python -m designer init --data "$WORK/$f" --out "$WORK/runs/$name.json") \
      > "runs/$name.init"
  start=$SECONDS
  (cd "$ROOT" && python -m designer train "$WORK/runs/$name.json" --device cpu --seed 1 \
      --out "$WORK/runs/$name" --quiet) > "runs/$name.train"
  (cd "$ROOT" && python -m designer evaluate "$WORK/runs/$name" --json) > "runs/$name.eval"
  python - "$name" "$((SECONDS - start))" "runs/$name.eval" <<'PY'
import json, sys
name, seconds, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
if r["task"] == "classify":
    print(f"{name:24s} classify  n={r['n']:5d}  accuracy {r['accuracy']:.4f}  train {seconds:.0f} s")
else:
    b = {x["name"]: x["rmse"] for x in r["baselines"]}
    base = " ".join(f"{k} {v:.4g}" for k, v in b.items())
    print(f"{name:24s} forecast  n={r['n']:5d}  rmse {r['rmse']:.4g}  ({base}; "
          f"ratio to {r['baseline']['name']} {r['rmse'] / r['baseline']['rmse']:.3f})  "
          f"train {seconds:.0f} s")
PY
done
