"""Would exact compile stats (registers per thread, stack frame: ptxas's) rank better than the register model's predictions of them, or
than neither? The H200 data's rows with compile labels (dataset/data/cuda.resources.jsonl.gz), each kernel ranked over its labelled rows
(kernels with 8 or more), kernel 3-fold of seed 0, the default ranker, two threads. Run from the repository root:
  python results/logs/ranker_limits/oracle_regs.py > results/logs/ranker_limits/oracle_regs.log"""
import time, numpy as np
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.heldout import resource_model
from models.resources import augment
from models.ranker import Ranker
from models.cost_model import mask_columns
from models.features import group_features
ds = load("dataset/data/cuda.sqlite", workers=2)
ds.X = mask_columns(ds.X, group_features(["opts"]))
lab = np.isfinite(ds.regs) & np.isfinite(ds.frame)
# the labelled rows of kernels with at least 8 of them (each kernel ranked over its labelled rows)
ks, inv = np.unique(ds.kernel, return_inverse=True)
keep = lab & (np.bincount(inv, weights=lab)[inv] >= 8)
print(f"labelled rows {lab.sum()} of {len(lab)}; kept {keep.sum()} rows of {len(np.unique(ds.kernel[keep]))} kernels", flush=True)
ds = ds.subset(keep)
true = np.c_[np.log(ds.regs), np.log1p(ds.frame)].astype(np.float32)
res = {"none": [], "predicted": [], "exact": []}
for i, (tr, te) in enumerate(kernel_kfold(ds.kernel, 3, 0)):
  for name, X in (("none", ds.X), ("predicted", augment(ds.X, resource_model(ds, tr, 2))), ("exact", np.c_[ds.X, true])):
    s = Ranker(seed=0, threads=2).fit(X[tr], ds.time_s[tr], ds.kernel[tr]).predict(X[te])
    res[name].append(average(per_kernel(s, ds.time_s[te], ds.kernel[te])))
    print(f"  fold {i} {name}: " + " ".join(f"{k}={v:.4f}" for k, v in res[name][-1].items()), flush=True)
for name, ms in res.items():
  print(f"{name}: " + " ".join(f"{k}={np.mean([m[k] for m in ms]):.4f}±{np.std([m[k] for m in ms]):.4f}" for k in ms[0]), flush=True)
