cd /tmp && rm -rf cpu_rk && mkdir cpu_rk && cd cpu_rk
. /work/main/.venv/bin/activate
for f in /work/shared/data/ucr/GunPoint /work/shared/data/ucr/ArrowHead /work/shared/data/ucr/OSULeaf /work/shared/data/japanese_vowels/JapaneseVowels /work/main/.rdata/ACSF1 /work/main/.rdata/ItalyPowerDemand /work/main/.rdata/PickupGestureWiimoteZ /work/main/.rdata/BasicMotions; do
  s=$(basename $f)
  rnn-designer init --data ${f}_TRAIN.ts --out $s.json > $s.init.txt 2>&1
  t0=$(date +%s.%N); rnn-designer train $s.json --out $s.run --quiet --seed 1 --device cpu > $s.train.txt 2>&1; t1=$(date +%s.%N)
  rnn-designer evaluate $s.run --json > $s.eval.json 2>/dev/null; t2=$(date +%s.%N)
  python -c "import json;r=json.load(open('$s.eval.json'));print('$s', '$(grep -o '[0-9,]* steps of [0-9]*' $s.init.txt)', round($t1-$t0), round($t2-$t1), round(r['accuracy'],3), round(r['peer']['accuracy'],3))"
done
