pkill -f init_sweep.py; sleep 1
rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
mkdir -p /tmp/u4
for seed in 1 2 3; do for s in ArrowHead OSULeaf GunPoint JapaneseVowels ACSF1 BasicMotions ItalyPowerDemand PickupGestureWiimoteZ; do
  python3 tests/benchmarks/init_sweep.py /tmp/u4/$s-$seed \
    "r256:res=64/128/128,lstm=0,frame=256,batch=8,steps=6000" \
    "r128:res=64/128/128,lstm=0,frame=128,batch=8,steps=6000" \
    --sets $s --seed $seed --device cuda --no-peer > /tmp/u4/$s-$seed.log 2>&1 &
done; done
wait' > /tmp/u4.log 2>&1 < /dev/null &
