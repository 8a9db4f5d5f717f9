"""Register-pressure model: LightGBM regressors of a config's registers per thread and stack frame (spilled bytes) on the cost
model's features, trained on compile labels (dataset.resources: sm_90 CUBINs compiled without a GPU). Its two predictions are
extra inputs of the ranker (`augment`): the features' analytical register estimate misses where ptxas spills, and one opt past a
kernel's best that spills (a 1.8-2.7 KB stack frame) runs 4-6x slower.

Stacking is done honestly in evaluation: each split's resource model is fit on its training kernels' labels only."""
from __future__ import annotations
import json
from pathlib import Path
import numpy as np
from dataset.resources import labels_path
from models.baselines import Regressor

COLUMNS = ("pred_log_regs", "pred_log_frame")
PARAMS = dict(n_estimators=300, learning_rate=0.05, num_leaves=63, min_data_in_leaf=10, feature_fraction=0.5, bagging_fraction=1.0)

class ResourceModel:
  """fit(X, regs, frame) on labelled rows; predict(X) -> (n, 2): log registers, log(1 + frame bytes). save/load: one JSON file."""
  def __init__(self, seed:int=0, threads:int=0):
    self.seed, self.threads = seed, threads
    self.regs: Regressor|None = None
    self.frame: Regressor|None = None

  def fit(self, X:np.ndarray, regs:np.ndarray, frame:np.ndarray) -> ResourceModel:
    m = np.isfinite(regs) & np.isfinite(frame)
    if m.sum() < 100: raise ValueError(f"{int(m.sum())} rows with compile labels: too few to learn registers from")
    self.regs = Regressor(self.seed, self.threads, **PARAMS).fit(X[m], regs[m])
    self.frame = Regressor(self.seed, self.threads, **PARAMS).fit(X[m], 1 + frame[m])
    return self

  def predict(self, X:np.ndarray) -> np.ndarray:
    if self.regs is None: raise RuntimeError("ResourceModel is not fitted")
    return np.c_[self.regs.predict_log_time(X), self.frame.predict_log_time(X)].astype(np.float32)

  def save(self, path:str|Path):
    Path(path).write_text(json.dumps({"format": "kerntune-resource-model", "columns": COLUMNS,
                                      "regs": self.regs.booster.model_to_string(), "frame": self.frame.booster.model_to_string()}))
  @classmethod
  def load(cls, path:str|Path) -> ResourceModel:
    from models.lgb import lgb
    d = json.loads(Path(path).read_text())
    if d.get("format") != "kerntune-resource-model": raise ValueError(f"{path} is not a kerntune resource model")
    rm = cls()
    rm.regs, rm.frame = Regressor(), Regressor()
    rm.regs.booster, rm.frame.booster = lgb.Booster(model_str=d["regs"]), lgb.Booster(model_str=d["frame"])
    return rm

def augment(X:np.ndarray, rm:ResourceModel|None) -> np.ndarray:
  """The ranker's input: the features, then the resource model's predictions (none without a resource model)."""
  return X if rm is None else np.concatenate([X, rm.predict(X)], axis=1)

class WithResources:
  """An estimator (Ranker, Regressor, MLPRanker) that sees the features plus a fitted resource model's predictions."""
  def __init__(self, est, rm:ResourceModel|None): self.est, self.rm = est, rm
  def fit(self, X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray) -> WithResources:
    self.est.fit(augment(X, self.rm), time_s, kernel); return self
  def predict(self, X:np.ndarray) -> np.ndarray: return self.est.predict(augment(X, self.rm))

def evaluate(store:str, folds:int=5, seed:int=0, threads:int=0) -> dict:
  """Kernel-held-out accuracy of the resource model on a store's compile labels: registers (mean absolute log2 error, and of the
  features' analytical estimate regs_est for reference) and spills (ROC AUC of the predicted frame for frame > 0)."""
  from sklearn.metrics import roc_auc_score
  from models.data import load   # here: the cost model imports this module, and a compile worker that loads it needs no pandas
  from models.evaluate import kernel_kfold
  from models.features import FEATURES
  ds = load(store)
  if ds.regs is None: raise ValueError(f"{store} has no compile labels ({labels_path(store)})")
  lab = np.isfinite(ds.regs)
  pred = np.full((len(ds), 2), np.nan)
  for tr, te in kernel_kfold(ds.kernel, folds, seed): pred[te & lab] = ResourceModel(seed, threads).fit(ds.X[tr], ds.regs[tr], ds.frame[tr]).predict(ds.X[te & lab])
  r, f, p = np.log2(ds.regs[lab]), ds.frame[lab], pred[lab]
  est = np.log2(np.clip(16 + 2**ds.X[lab, FEATURES.index("regs_est")] - 1, 32, 255))   # features.py's per-thread estimate
  return {"labelled_configs": int(lab.sum()), "kernels": int(len(np.unique(ds.kernel[lab]))), "spill_share": float((f > 0).mean()),
          "regs_mae_log2": float(np.abs(p[:, 0]/np.log(2) - r).mean()), "regs_est_mae_log2": float(np.abs(est - r).mean()),
          "spill_auc": float(roc_auc_score(f > 0, p[:, 1])), "folds": folds, "seed": seed}

if __name__ == "__main__":
  import argparse, datetime
  ap = argparse.ArgumentParser("models.resources", description="kernel-held-out accuracy of the register-pressure model")
  ap.add_argument("store"); ap.add_argument("--folds", type=int, default=5); ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  print(json.dumps({**evaluate(a.store, a.folds, threads=a.threads), "date": datetime.date.today().isoformat()}))
