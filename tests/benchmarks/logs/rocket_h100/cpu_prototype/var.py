import sys, numpy as np, torch
from aeon.datasets import load_from_ts_file
from aeon.transformations.collection.convolution_based import MiniRocket
D="/work/shared/data"
P={"GunPoint":"ucr/GunPoint","ArrowHead":"ucr/ArrowHead","OSULeaf":"ucr/OSULeaf","JapaneseVowels":"japanese_vowels/JapaneseVowels"}
torch.set_num_threads(1)
def pad(X):
    if isinstance(X,np.ndarray): return X
    L=max(x.shape[1] for x in X); out=np.zeros((len(X),X[0].shape[0],L))
    for i,x in enumerate(X): out[i,:,:x.shape[1]]=x
    return out
name=sys.argv[1]
Xtr,ytr=load_from_ts_file(f"{D}/{P[name]}_TRAIN.ts"); Xte,yte=load_from_ts_file(f"{D}/{P[name]}_TEST.ts")
Xtr,Xte=pad(Xtr),pad(Xte); L=max(Xtr.shape[2],Xte.shape[2])
Xtr=np.pad(Xtr,((0,0),(0,0),(0,L-Xtr.shape[2]))); Xte=np.pad(Xte,((0,0),(0,0),(0,L-Xte.shape[2])))
cls=sorted(set(ytr)); ytr_i=np.array([cls.index(y) for y in ytr]); yte_i=np.array([cls.index(y) for y in yte])
res={}
for seed in (1,2,3):
    t=MiniRocket(random_state=seed,n_jobs=1).fit(Xtr); Ftr=torch.tensor(np.asarray(t.transform(Xtr)),dtype=torch.float32); Fte=torch.tensor(np.asarray(t.transform(Xte)),dtype=torch.float32)
    hold=np.random.RandomState(seed).permutation(len(ytr))[: max(1,len(ytr)//10)]
    for tag,(init,holdout) in {"zero_all":("zero",0),"xav_all":("xav",0),"zero_90":("zero",1),"xav_90":("xav",1)}.items():
        idx_tr=np.setdiff1d(np.arange(len(ytr)),hold) if holdout else np.arange(len(ytr))
        torch.manual_seed(seed); lin=torch.nn.Linear(Ftr.shape[1],len(cls))
        if init=="zero": torch.nn.init.zeros_(lin.weight)
        else: torch.nn.init.xavier_uniform_(lin.weight)
        net=torch.nn.Sequential(torch.nn.BatchNorm1d(Ftr.shape[1]),lin)
        opt=torch.optim.Adam(net.parameters(),lr=1e-4); X=Ftr[idx_tr]; Y=torch.tensor(ytr_i[idx_tr]); g=torch.Generator().manual_seed(seed)
        net.train()
        for s in range(2000):
            idx=torch.randperm(len(Y),generator=g)[:min(16,len(Y))]
            loss=torch.nn.functional.cross_entropy(net(X[idx]),Y[idx]); opt.zero_grad(); loss.backward(); opt.step()
        net.eval(); res.setdefault(tag,[]).append((net(Fte).argmax(1).numpy()==yte_i).mean())
print(name, {k:round(float(np.mean(v)),3) for k,v in res.items()}, flush=True)
