pkill -f init_sweep.py; sleep 1
rm -rf /tmp/repo; cp -r $PWD /tmp/repo
cd /tmp/repo && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
mkdir -p /tmp/u5
A="init: initS:slice=0.9 initJ:jitter=0.03,scaling=0.1 initSJ:slice=0.9,jitter=0.03,scaling=0.1"
B="r128:res=64/128/128,lstm=0,frame=128,batch=16,steps=3000 r128S:res=64/128/128,lstm=0,frame=128,batch=16,steps=3000,slice=0.9"
C="rraw:res=64/128/128,lstm=0,frame=1,batch=8,steps=6000 rrawS:res=64/128/128,lstm=0,frame=1,batch=8,steps=6000,slice=0.9"
for seed in 1 2 3; do
 for s in ArrowHead OSULeaf; do
  for g in A B C; do
   python3 tests/benchmarks/init_sweep.py /tmp/u5/$s-$seed-$g ${!g} --sets $s --seed $seed --device cuda --no-peer --probs > /tmp/u5/$s-$seed-$g.log 2>&1 &
  done
 done
 for s in GunPoint JapaneseVowels; do
  for g in A B; do
   python3 tests/benchmarks/init_sweep.py /tmp/u5/$s-$seed-$g ${!g} --sets $s --seed $seed --device cuda --no-peer --probs > /tmp/u5/$s-$seed-$g.log 2>&1 &
  done
 done
done
wait' > /tmp/u5.log 2>&1 < /dev/null &
sleep 5; ls /tmp/u5 | head -3
