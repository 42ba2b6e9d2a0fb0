pkill -f init_sweep.py; sleep 1
rm -rf /tmp/repo6; cp -r $PWD /tmp/repo6
cd /tmp/repo6 && setsid nohup bash -c '
export PYTHONPATH=/tmp/site:/tmp/repo6 OMP_NUM_THREADS=1 RNN_DESIGNER_DATA=/tmp/rdata
mkdir -p /tmp/u6
i=0
for s in GunPoint ArrowHead OSULeaf JapaneseVowels; do
 for seed in 4 5 6; do
  for d in "r128:res=64/128/128,lstm=0,frame=128,batch=16,steps=3000" "rraw:res=64/128/128,lstm=0,frame=1,batch=8,steps=6000"; do
   n=${d%%:*}
   CUDA_VISIBLE_DEVICES=$i python3 tests/benchmarks/init_sweep.py /tmp/u6/$s-$seed-$n "$d" --sets $s --seed $seed --device cuda --no-peer --probs > /tmp/u6/$s-$seed-$n.log 2>&1 &
  done
 done
 i=$((i+1))
done
wait' > /tmp/u6.log 2>&1 < /dev/null &
sleep 2
