pkill -f init_sweep.py; sleep 1
rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
mkdir -p /tmp/u3
for seed in 1 2 3; do for s in ArrowHead OSULeaf GunPoint JapaneseVowels; do
  python3 tests/benchmarks/init_sweep.py /tmp/u3/$s-$seed "base:" \
    "res16:res=64/128/128,lstm=0,frame=1,batch=16,steps=3000" \
    "res16f:res=64/128/128,lstm=0,batch=16,steps=3000" \
    "res8:res=64/128/128,lstm=0,frame=1,batch=8,steps=6000" \
    "fcn16:conv=128/256/128,lstm=0,frame=1,batch=16,steps=3000" \
    --sets $s --seed $seed --device cuda --no-peer > /tmp/u3/$s-$seed.log 2>&1 &
done; done
wait' > /tmp/u3.log 2>&1 < /dev/null &
