"""Ranker + MLP blend with fixed scales (each model's median per-kernel score std on its training rows: a shippable blend needs no
test-time statistics) against the per-kernel z-score blend, on the kernel-held-out 5-fold of split seeds 0..N-1 (model seed = split
seed); --resources puts the resource model in front of both, as train-cost-model's evaluation does.
  python scripts/cost_model_blend_fixed.py dataset/data/cuda.sqlite [--seeds 3] [--resources] [--threads 2]"""
import argparse, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import numpy as np
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.ranker import Ranker
from models.mlp import MLPRanker
from models.resources import ResourceModel, WithResources
from models.blend import scale as spread   # median over kernels of the per-kernel score std
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from cost_model_variants import per_kernel_z

ap = argparse.ArgumentParser()
ap.add_argument("dataset", nargs="?", default="dataset/data/cuda.sqlite")
ap.add_argument("--seeds", type=int, default=1)
ap.add_argument("--resources", action="store_true")
ap.add_argument("--threads", type=int, default=2)
a = ap.parse_args()
ds = load(a.dataset)
X, t, kern = ds.X, ds.time_s, ds.kernel
W = (0.65, 0.5, 0.35)
show = lambda s: {k: round(v, 4) for k, v in average(per_kernel(s, t, kern)).items()}
runs: dict[str, list] = {}
for seed in range(a.seeds):
  oof_r, oof_m = np.full(len(t), np.nan), np.full(len(t), np.nan)
  fixed = {w: np.full(len(t), np.nan) for w in W}
  for i, (tr, te) in enumerate(kernel_kfold(kern, 5, seed)):
    st = time.perf_counter()
    rm = ResourceModel(threads=a.threads).fit(X[tr], ds.regs[tr], ds.frame[tr]) if a.resources and ds.regs is not None else None
    r = WithResources(Ranker(seed=seed, threads=a.threads), rm).fit(X[tr], t[tr], kern[tr])
    m = WithResources(MLPRanker(seed=seed, threads=a.threads), rm).fit(X[tr], t[tr], kern[tr])
    sr, sm = spread(r.predict(X[tr]), kern[tr]), spread(m.predict(X[tr]), kern[tr])
    oof_r[te], oof_m[te] = r.predict(X[te]), m.predict(X[te])
    for w in W: fixed[w][te] = w*oof_r[te]/sr + (1-w)*oof_m[te]/sm
    print(f"seed {seed} fold {i}: train spreads ranker {sr:.4f} mlp {sm:.4f}; test spreads {spread(oof_r[te], kern[te]):.4f} "
          f"{spread(oof_m[te], kern[te]):.4f} ({time.perf_counter()-st:.0f} s)", flush=True)
  res = {"ranker": show(oof_r), "mlp": show(oof_m), **{f"fixed w={w}": show(fixed[w]) for w in W}}
  zr, zm = per_kernel_z(oof_r, kern), per_kernel_z(oof_m, kern)
  res.update({f"z-blend w={w}": show(w*zr + (1-w)*zm) for w in W})
  for n, v in res.items(): runs.setdefault(n, []).append(v); print(f"seed {seed} {n}: {v}", flush=True)
if a.seeds > 1:
  for n, vs in runs.items():
    print(f"mean over {a.seeds} seeds {n}: " + ", ".join(f"{k} {np.mean([v[k] for v in vs]):.4f} ± {np.std([v[k] for v in vs]):.4f}" for k in vs[0]), flush=True)
