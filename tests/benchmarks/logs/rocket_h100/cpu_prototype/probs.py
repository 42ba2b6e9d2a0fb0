import sys, json, numpy as np, torch
from ucr import load, features, head
torch.set_num_threads(1)
out=open(sys.argv[1],"w")
for name in sys.argv[2:]:
    Xtr,ytr,Xte,yte,cls,ytr_i,yte_i=load(name)
    for seed in range(1,7):
        Ftr,Fte=features(Xtr,Xte,seed)
        net=head(Ftr,ytr_i,len(cls),seed); p=torch.softmax(net(Fte),1).detach().numpy()
        out.write(json.dumps({"set":name,"design":"rocket","seed":seed,"truth":yte_i.tolist(),"probs":np.round(p,5).tolist()})+"\n"); out.flush()
        print(name, seed, (p.argmax(1)==yte_i).mean(), flush=True)
