"""Ranker parameter variants on the H200 data (base and shards, opt-sequence columns masked as shipped), the kernel 3-fold of seed 0 (the folds of
results/learning_curve_kernels.md), two LightGBM threads, 2026-12-02 on a 2-core machine. Run from the repository root:
  python results/logs/ranker_limits/variants.py > results/logs/ranker_limits/variants.log"""
import json, sys, time, numpy as np
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.heldout import resource_model
from models.resources import augment
from models.ranker import Ranker
from models.cost_model import mask_columns
from models.features import group_features
ds = load("dataset/data/cuda.sqlite", workers=2)
ds.X = mask_columns(ds.X, group_features(["opts"]))
shipped = {k: v for k, v in json.load(open("models/cost_model_sm_90.json"))["params"].items() if k not in ("seed", "threads")}
V = {"defaults": {}, "shipped": shipped, "fine_labels": dict(label_base=1.05, levels=80), "gain3": dict(gain_power=3.0),
     "trees800": dict(n_estimators=800), "fine_gain3": dict(label_base=1.05, levels=80, gain_power=3.0)}
names = sys.argv[1:] or list(V)
folds = list(kernel_kfold(ds.kernel, 3, 0))
Xa = [augment(ds.X, resource_model(ds, tr, 2)) for tr, _ in folds]
for name in names:
  ms = []
  for i, (tr, te) in enumerate(folds):
    st = time.perf_counter()
    s = Ranker(seed=0, threads=2, **V[name]).fit(Xa[i][tr], ds.time_s[tr], ds.kernel[tr]).predict(Xa[i][te])
    ms.append(average(per_kernel(s, ds.time_s[te], ds.kernel[te])))
    print(f"  {name} fold {i}: " + " ".join(f"{k}={v:.4f}" for k, v in ms[-1].items()) + f" ({time.perf_counter()-st:.0f} s)", flush=True)
  print(f"{name}: " + " ".join(f"{k}={np.mean([m[k] for m in ms]):.4f}±{np.std([m[k] for m in ms]):.4f}" for k in ms[0]), flush=True)
