"""Offline: does the MLP's reading of training-constant columns as 0 (models.mlp_forward.standardize) change the held-out
evaluation? Per kernel 5-fold of the H200 base store (opt-sequence columns masked as shipped): the columns constant in a fold's
training rows, and the held-out rows off those constants.
  python results/logs/ranker_limits/constant_columns.py > results/logs/ranker_limits/constant_columns.txt"""
import numpy as np
from models.data import load
from models.evaluate import kernel_kfold
from models.cost_model import mask_columns
from models.features import group_features, FEATURES
ds = load("dataset/data/cuda.sqlite", workers=2)
X = mask_columns(ds.X, group_features(["opts"]))
for i, (tr, te) in enumerate(kernel_kfold(ds.kernel, 5, 0)):
  c = X[tr].std(0) == 0
  off = (X[te][:, c] != X[tr][0, c]).any(1)
  ks = np.unique(ds.kernel[te][off])
  cols = [FEATURES[j] for j in np.flatnonzero(c)[(X[te][:, c] != X[tr][0, c]).any(0)]]
  print(f"fold {i}: {c.sum()} columns constant in training; {off.sum()} held-out rows ({len(ks)} of {len(np.unique(ds.kernel[te]))} kernels) off them: {cols[:6]}", flush=True)
