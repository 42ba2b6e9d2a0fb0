import sys, numpy as np, torch
from ucr import load, features, head
torch.set_num_threads(1)
name=sys.argv[1]
Xtr,ytr,Xte,yte,cls,ytr_i,yte_i=load(name)
res={}
for seed in (1,2,3):
    Ftr,Fte=features(Xtr,Xte,seed)
    hold=np.random.RandomState(seed).permutation(len(ytr))[: max(1,len(ytr)//10)]
    for tag,(init,holdout) in {"zero_all":("zero",0),"xav_all":("xav",0),"zero_90":("zero",1),"xav_90":("xav",1)}.items():
        idx_tr=np.setdiff1d(np.arange(len(ytr)),hold) if holdout else np.arange(len(ytr))
        net=head(Ftr[idx_tr],ytr_i[idx_tr],len(cls),seed,init=init); res.setdefault(tag,[]).append((net(Fte).argmax(1).numpy()==yte_i).mean())
print(name, {k:round(float(np.mean(v)),3) for k,v in res.items()}, flush=True)
