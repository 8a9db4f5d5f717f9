"""Ranker + MLP blend with fixed scales (each model's median per-kernel score std on its training rows: a shippable blend needs no
test-time statistics) against the per-kernel z-score blend, on the kernel-held-out split 0 (5 folds, model seed 0, no resource model).
  python scripts/cost_model_blend_fixed.py dataset/data/cuda.sqlite"""
import sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import numpy as np
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.ranker import Ranker
from models.mlp import MLPRanker
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from cost_model_variants import per_kernel_z
ds = load(sys.argv[1] if len(sys.argv) > 1 else "dataset/data/cuda.sqlite")
X, t, kern = ds.X, ds.time_s, ds.kernel
def spread(s, k):  # median over kernels of the per-kernel std
  return float(np.median([s[k == kk].std() for kk in np.unique(k) if (k == kk).sum() > 1]))
oof_r, oof_m = np.full(len(t), np.nan), np.full(len(t), np.nan)
fixed = {}
for i, (tr, te) in enumerate(kernel_kfold(kern, 5, 0)):
  st = time.perf_counter()
  r = Ranker(seed=0, threads=2).fit(X[tr], t[tr], kern[tr]); m = MLPRanker(seed=0, threads=2).fit(X[tr], t[tr], kern[tr])
  rtr, mtr = r.predict(X[tr]), m.predict(X[tr])
  sr, sm = spread(rtr, kern[tr]), spread(mtr, kern[tr])
  oof_r[te], oof_m[te] = r.predict(X[te]), m.predict(X[te])
  for w in (0.65, 0.5, 0.35):
    fixed.setdefault(w, np.full(len(t), np.nan))[te] = w*oof_r[te]/sr + (1-w)*oof_m[te]/sm
  print(f"fold {i}: train spreads ranker {sr:.4f} mlp {sm:.4f}; test spreads {spread(oof_r[te], kern[te]):.4f} {spread(oof_m[te], kern[te]):.4f} ({time.perf_counter()-st:.0f} s)", flush=True)
show = lambda s: {k: round(v, 4) for k, v in average(per_kernel(s, t, kern)).items()}
print("ranker", show(oof_r)); print("mlp", show(oof_m))
zr, zm = per_kernel_z(oof_r, kern), per_kernel_z(oof_m, kern)
for w in (0.65, 0.5, 0.35):
  print(f"w={w}: z-blend {show(w*zr + (1-w)*zm)}  fixed-scale {show(fixed[w])}", flush=True)
