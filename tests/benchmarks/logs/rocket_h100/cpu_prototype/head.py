import sys, time, numpy as np, torch
from aeon.classification.convolution_based import MiniRocketClassifier
from ucr import P, load, features
torch.set_num_threads(2)
for name in sys.argv[1:] or P:
    Xtr,ytr,Xte,yte,cls,ytr_i,yte_i=load(name)
    res={}
    for seed in (1,2,3):
        clf=MiniRocketClassifier(random_state=seed,n_jobs=1).fit(Xtr,ytr); res.setdefault("ridge",[]).append(np.mean(clf.predict(Xte)==yte))
        Ftr,Fte=features(Xtr,Xte,seed)
        mu,sd=Ftr.mean(0),Ftr.std(0).clamp_min(1e-6)
        for tag,(lr,wd,steps,bs) in {"adam1e-3":(1e-3,0,1000,16),"adam1e-4":(1e-4,0,2000,16),"adamw1e-3wd.1":(1e-3,0.1,1000,16)}.items():
            torch.manual_seed(seed); lin=torch.nn.Linear(Ftr.shape[1],len(cls)); torch.nn.init.zeros_(lin.weight);
            opt=torch.optim.AdamW(lin.parameters(),lr=lr,weight_decay=wd); Y=torch.tensor(ytr_i)
            g=torch.Generator().manual_seed(seed)
            for s in range(steps):
                idx=torch.randint(len(Y),(min(bs,len(Y)),),generator=g)
                loss=torch.nn.functional.cross_entropy(lin((Ftr[idx]-mu)/sd),Y[idx]); opt.zero_grad(); loss.backward(); opt.step()
            acc=(lin((Fte-mu)/sd).argmax(1).numpy()==yte_i).mean(); res.setdefault(tag,[]).append(acc)
    print(name, {k:round(float(np.mean(v)),3) for k,v in res.items()}, flush=True)
