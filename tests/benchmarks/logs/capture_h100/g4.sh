python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD OMP_NUM_THREADS=1
cp -r .rdata /tmp/rdata; export RNN_DESIGNER_DATA=/tmp/rdata
mkdir -p /tmp/g4
for seed in 1 2 3 4 5 6; do for s in ArrowHead GunPoint; do for g in 1 0; do
  timeout 200 python3 .rdata/g4.py $s $seed $g > /tmp/g4/$s-$seed-$g.log 2>&1 &
done; done; done
wait
grep -h "G4\|ERROR\|Error" /tmp/g4/*.log | sort
