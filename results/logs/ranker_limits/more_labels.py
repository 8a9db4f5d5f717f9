"""Does the register model, trained on more compile labels, make the ranker's two stacked columns pay? The H200 data (base and
shards, opt-sequence columns masked as shipped), kernel 3-fold of seed 0 (the folds of results/learning_curve_kernels.md), the default
ranker, two threads: without the columns; with them from the labels the shipped model learns (dataset/data/cuda.resources.jsonl.gz,
the base store's kernels); with them from those plus dataset/data/cuda.resources_more.jsonl.gz (4 more configs of every kernel,
shards' too, compiled here without a GPU: `python -m dataset.resources run`). The register model of each fold learns only its
training kernels' labels. Run from the repository root:
  python results/logs/ranker_limits/more_labels.py > results/logs/ranker_limits/more_labels.log"""
import time
import numpy as np
from dataset.resources import load_labels
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.heldout import resource_model
from models.resources import augment
from models.ranker import Ranker
from models.cost_model import mask_columns
from models.features import group_features
ds = load("dataset/data/cuda.sqlite", workers=2)
ds.X = mask_columns(ds.X, group_features(["opts"]))
regs0, frame0 = ds.regs.copy(), ds.frame.copy()
r2, f2 = load_labels("dataset/data/cuda.resources_more.jsonl.gz", ds.kernel, ds.opts)
more = ~np.isfinite(regs0) & np.isfinite(r2)
regs1, frame1 = np.where(more, r2, regs0), np.where(more, f2, frame0)
print(f"rows {len(ds)}, kernels {len(np.unique(ds.kernel))}; labelled: shipped {np.isfinite(regs0).sum()} rows of "
      f"{len(np.unique(ds.kernel[np.isfinite(regs0)]))} kernels, with more {np.isfinite(regs1).sum()} of {len(np.unique(ds.kernel[np.isfinite(regs1)]))}", flush=True)
res: dict[str, list] = {"none": [], "shipped labels": [], "more labels": []}
for i, (tr, te) in enumerate(kernel_kfold(ds.kernel, 3, 0)):
  for name in res:
    st = time.perf_counter()
    if name == "none": X = ds.X
    else:
      ds.regs, ds.frame = (regs0, frame0) if name == "shipped labels" else (regs1, frame1)
      X = augment(ds.X, resource_model(ds, tr, 2))
    s = Ranker(seed=0, threads=2).fit(X[tr], ds.time_s[tr], ds.kernel[tr]).predict(X[te])
    res[name].append(average(per_kernel(s, ds.time_s[te], ds.kernel[te])))
    print(f"  fold {i} {name}: " + " ".join(f"{k}={v:.4f}" for k, v in res[name][-1].items()) + f" ({time.perf_counter()-st:.0f} s)", flush=True)
for name, ms in res.items():
  print(f"{name}: " + " ".join(f"{k}={np.mean([m[k] for m in ms]):.4f}±{np.std([m[k] for m in ms]):.4f}" for k in ms[0]), flush=True)
