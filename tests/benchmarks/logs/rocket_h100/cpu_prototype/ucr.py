"""What the prototypes here start from: a UCR/UEA set read from the shared data folder, both
splits padded to one length, its labels as class indices, and aeon's MiniRocket features."""
import numpy as np, torch
from aeon.datasets import load_from_ts_file
from aeon.transformations.collection.convolution_based import MiniRocket
D="/work/shared/data"
P={"GunPoint":"ucr/GunPoint","ArrowHead":"ucr/ArrowHead","OSULeaf":"ucr/OSULeaf","JapaneseVowels":"japanese_vowels/JapaneseVowels"}
def pad(X):
    if isinstance(X,np.ndarray): return X
    L=max(x.shape[1] for x in X); out=np.zeros((len(X),X[0].shape[0],L))
    for i,x in enumerate(X): out[i,:,:x.shape[1]]=x
    return out
def load(name):
    """Xtr, ytr, Xte, yte as read (the series padded to one length), the classes, and both
    splits' labels as indices into them."""
    Xtr,ytr=load_from_ts_file(f"{D}/{P[name]}_TRAIN.ts"); Xte,yte=load_from_ts_file(f"{D}/{P[name]}_TEST.ts")
    Xtr,Xte=pad(Xtr),pad(Xte); L=max(Xtr.shape[2],Xte.shape[2])
    Xtr=np.pad(Xtr,((0,0),(0,0),(0,L-Xtr.shape[2]))); Xte=np.pad(Xte,((0,0),(0,0),(0,L-Xte.shape[2])))
    cls=sorted(set(ytr)); ytr_i=np.array([cls.index(y) for y in ytr]); yte_i=np.array([cls.index(y) for y in yte])
    return Xtr,ytr,Xte,yte,cls,ytr_i,yte_i
def features(Xtr,Xte,seed):
    """MiniRocket fitted on Xtr with this seed: both splits' features as float32 tensors."""
    t=MiniRocket(random_state=seed,n_jobs=1).fit(Xtr)
    return torch.tensor(np.asarray(t.transform(Xtr)),dtype=torch.float32), torch.tensor(np.asarray(t.transform(Xte)),dtype=torch.float32)
def head(X,y,classes,seed,lr=1e-4,steps=2000,bs=16,init="zero"):
    """The BatchNorm -> Linear head (weights zero or Xavier) trained by Adam on the features X
    and label indices y, batches of bs drawn with the seed; returned in eval mode."""
    torch.manual_seed(seed); lin=torch.nn.Linear(X.shape[1],classes)
    if init=="zero": torch.nn.init.zeros_(lin.weight)
    else: torch.nn.init.xavier_uniform_(lin.weight)
    net=torch.nn.Sequential(torch.nn.BatchNorm1d(X.shape[1]),lin)
    opt=torch.optim.Adam(net.parameters(),lr=lr); Y=torch.tensor(y); g=torch.Generator().manual_seed(seed)
    net.train()
    for s in range(steps):
        idx=torch.randperm(len(Y),generator=g)[:min(bs,len(Y))]
        loss=torch.nn.functional.cross_entropy(net(X[idx]),Y[idx]); opt.zero_grad(); loss.backward(); opt.step()
    return net.eval()
