import sys, time, numpy as np, torch
from aeon.datasets import load_from_ts_file
from aeon.transformations.collection.convolution_based import MiniRocket
from aeon.classification.convolution_based import MiniRocketClassifier
D="/work/shared/data"
P={"GunPoint":"ucr/GunPoint","ArrowHead":"ucr/ArrowHead","OSULeaf":"ucr/OSULeaf","JapaneseVowels":"japanese_vowels/JapaneseVowels"}
def pad(X):
    if isinstance(X,np.ndarray): return X
    L=max(x.shape[1] for x in X); out=np.zeros((len(X),X[0].shape[0],L))
    for i,x in enumerate(X): out[i,:,:x.shape[1]]=x
    return out
torch.set_num_threads(2)
for name in sys.argv[1:] or P:
    Xtr,ytr=load_from_ts_file(f"{D}/{P[name]}_TRAIN.ts"); Xte,yte=load_from_ts_file(f"{D}/{P[name]}_TEST.ts")
    Xtr,Xte=pad(Xtr),pad(Xte); L=max(Xtr.shape[2],Xte.shape[2])
    if Xtr.shape[2]<L: Xtr=np.pad(Xtr,((0,0),(0,0),(0,L-Xtr.shape[2])))
    if Xte.shape[2]<L: Xte=np.pad(Xte,((0,0),(0,0),(0,L-Xte.shape[2])))
    cls=sorted(set(ytr)); ytr_i=np.array([cls.index(y) for y in ytr]); yte_i=np.array([cls.index(y) for y in yte])
    res={}
    for seed in (1,2,3):
        clf=MiniRocketClassifier(random_state=seed,n_jobs=1).fit(Xtr,ytr); res.setdefault("ridge",[]).append(np.mean(clf.predict(Xte)==yte))
        t=MiniRocket(random_state=seed,n_jobs=1).fit(Xtr); Ftr=t.transform(Xtr); Fte=t.transform(Xte)
        Ftr=torch.tensor(np.asarray(Ftr),dtype=torch.float32); Fte=torch.tensor(np.asarray(Fte),dtype=torch.float32)
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
