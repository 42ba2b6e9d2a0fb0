"""Which random convolution features classify small labelled sets best, under one ridge head
(scikit-learn's RidgeClassifierCV, leave-one-out alpha, features standardised): aeon 1.6.0's
MiniRocket of the series, of its first difference, Hydra, and MultiRocket's poolings beside
them. The experiment behind init's classifier (docs/benchmarks/your-data.md, "Small labelled
sets"); it reads no rnn-designer code.

    SEED=1 python tests/benchmarks/feature_views.py DIR/NAME ...   # DIR/NAME_TRAIN.ts, _TEST.ts
"""
import os
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")
SEED = int(os.environ.get("SEED", "1"))
POOLINGS = ("ppv", "lspv", "mpv", "mipv")  # MultiRocket's order within a view


def pad(x, steps=None):
    """(N, C, T) float32: a list of unequal sequences zero-padded to the longest (or steps)."""
    if isinstance(x, np.ndarray):
        return x.astype(np.float32)
    steps = steps or max(s.shape[1] for s in x)
    out = np.zeros((len(x), x[0].shape[0], steps), np.float32)
    for i, s in enumerate(x):
        out[i, :, :min(steps, s.shape[1])] = s[:, :steps]
    return out


def ridge(train, y, test, truth):
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.preprocessing import StandardScaler
    scale = StandardScaler().fit(train)
    model = RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)).fit(scale.transform(train), y)
    return float((model.predict(scale.transform(test)) == truth).mean())


def sparse_scaled(train, test):
    """Hydra's own scaler: the square root of the positive part, standardised where not 0."""
    root = lambda h: np.sqrt(np.clip(h, 0, None))  # noqa: E731
    fit = root(train)
    mu, sigma = fit.mean(0), fit.std(0) + 1e-8
    scale = lambda h: np.where(root(h) == 0, 0, (root(h) - mu) / sigma)  # noqa: E731
    return scale(train), scale(test)


def poolings(u, which):
    """MultiRocket's features of the poolings ``which``, both views."""
    half = u.shape[1] // 2
    n = half // 4
    return np.hstack([u[:, v + POOLINGS.index(w) * n: v + (POOLINGS.index(w) + 1) * n]
                      for v in (0, half) for w in which])


def run(root, name):
    from aeon.datasets import load_from_ts_file
    from aeon.transformations.collection.convolution_based import (HydraTransformer,
                                                                   MiniRocket, MultiRocket)
    xtr, ytr = load_from_ts_file(f"{root}/{name}_TRAIN.ts")
    xte, yte = load_from_ts_file(f"{root}/{name}_TEST.ts")
    steps = max(pad(xtr).shape[2], pad(xte).shape[2])
    xtr, xte = pad(xtr, steps), pad(xte, steps)
    diff = lambda x: np.diff(x, axis=2)  # noqa: E731
    mini = MiniRocket(random_state=SEED).fit(xtr)
    m = mini.transform(xtr), mini.transform(xte)
    mini_d = MiniRocket(random_state=SEED).fit(diff(xtr))
    d = mini_d.transform(diff(xtr)), mini_d.transform(diff(xte))
    hydra = HydraTransformer(random_state=SEED).fit(xtr)
    h = sparse_scaled(np.asarray(hydra.transform(xtr)), np.asarray(hydra.transform(xte)))
    multi = MultiRocket(random_state=SEED).fit(xtr)
    u = multi.transform(xtr), multi.transform(xte)
    join = lambda *parts: (np.hstack([p[0] for p in parts]),  # noqa: E731
                           np.hstack([p[1] for p in parts]))
    mpv = poolings(u[0], ("mpv",)), poolings(u[1], ("mpv",))
    views = {"MiniRocket": m, "Hydra": h, "MiniRocket + diff": join(m, d),
             "MiniRocket + diff + Hydra": join(m, d, h),
             "MiniRocket + diff + MPV": join(m, d, mpv),
             "MiniRocket + diff + Hydra + MPV": join(m, d, h, mpv),
             "MultiRocket + Hydra": join(u, h)}
    return {k: ridge(v[0], ytr, v[1], yte) for k, v in views.items()}


if __name__ == "__main__":
    rows = []
    for arg in sys.argv[1:]:
        root, name = os.path.split(arg)
        start = time.time()
        rows.append(run(root or ".", name))
        print(name, " | ".join(f"{k} {v:.3f}" for k, v in rows[-1].items()),
              f"({time.time() - start:.0f} s)", flush=True)
    print("MEAN", " | ".join(f"{k} {np.mean([r[k] for r in rows]):.4f}" for k in rows[0]))
