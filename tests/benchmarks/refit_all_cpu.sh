#!/usr/bin/env bash
# init each set; train with the project's split (val 10%, best-validation checkpoint) and with
# every training sequence (val_fraction 0: the last step's weights); evaluate on the test split
cd "$(dirname "$0")/../.."
export RNN_DESIGNER_DATA=${RNN_DESIGNER_DATA:-../shared/data}
D=$RNN_DESIGNER_DATA
out=${1:-/tmp/refit}; mkdir -p $out
for set in GunPoint ArrowHead JapaneseVowels OSULeaf; do
  f=$(ls $D/ucr/${set}_TRAIN.ts $D/japanese_vowels/${set}_TRAIN.ts 2>/dev/null | head -1)
  python -m designer init --data "$f" --out $out/$set.json > /dev/null 2>&1
  python - $out/$set.json <<'PY'
import json,sys
p=json.load(open(sys.argv[1]))
for l in p['graph']['layers']:
    if l['name']=='data': l['params']['val_fraction']=0.0
json.dump(p,open(sys.argv[1].replace('.json','-all.json'),'w'),indent=1)
PY
  for seed in 1 2; do
    for v in "" "-all"; do
      s0=$(date +%s)
      python -m designer train $out/$set$v.json --out $out/$set$v.s$seed --quiet --seed $seed --device cpu > $out/$set$v.s$seed.log 2>&1
      ck=best; [ "$v" = "-all" ] && ck=last
      python -m designer evaluate $out/$set$v.s$seed --json --checkpoint $ck > $out/$set$v.s$seed.eval.json 2>$out/$set$v.s$seed.eval.err
      acc=$(python -c "import json,sys; r=json.load(open('$out/$set$v.s$seed.eval.json')); print(r['accuracy'], (r.get('peer') or {}).get('accuracy'))" 2>&1 | tail -1)
      echo "$set$v seed $seed acc $acc $(( $(date +%s) - s0 )) s" | tee -a $out/results.txt
    done
  done
done
