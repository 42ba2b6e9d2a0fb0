import sys, numpy as np, torch
sys.path.insert(0,"/tmp/proto")
from ucr import load, features, head
torch.set_num_threads(1)
for name in sys.argv[1:]:
    Xtr,ytr,Xte,yte,cls,ytr_i,yte_i=load(name)
    res={}
    for seed in (1,2,3):
        Ftr,Fte=features(Xtr,Xte,seed)
        for tag,(lr,steps,bs,bn) in {"bn1e-4":(1e-4,2000,16,1),"bn1e-3":(1e-3,1000,16,1),"bn3e-4":(3e-4,1500,16,1),"bn1e-4b8":(1e-4,3000,8,1)}.items():
            net=head(Ftr,ytr_i,len(cls),seed,lr,steps,bs); acc=(net(Fte).argmax(1).numpy()==yte_i).mean(); res.setdefault(tag,[]).append(acc)
    print(name, {k:round(float(np.mean(v)),3) for k,v in res.items()}, flush=True)
