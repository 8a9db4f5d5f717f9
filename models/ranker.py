"""The main cost model: a LightGBM LambdaRank ranker, one query group per kernel.

A kernel's runtimes span orders of magnitude and kernels differ by orders of magnitude, so the model never sees absolute times:
within each kernel, a config's relevance is how many steps of `label_base` (e.g. 1.1 = 10%) it is slower than the kernel's best,
counted down from `levels`-1. The gain of a level grows as level**gain_power, which puts the weight on ordering the fast end."""
from __future__ import annotations
import json
from pathlib import Path
import numpy as np
from models.lgb import lgb

def group_sizes(kernel:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """(row order that makes every kernel's rows contiguous, sizes of those runs): LightGBM's query groups."""
  order = np.argsort(kernel, kind="stable")
  _, sizes = np.unique(kernel[order], return_counts=True)
  return order, sizes

def kernel_best(time_s:np.ndarray, kernel:np.ndarray) -> np.ndarray:
  """Per row: the best (smallest) time of its kernel."""
  _, inv = np.unique(kernel, return_inverse=True)
  best = np.full(inv.max() + 1, np.inf)
  np.minimum.at(best, inv, time_s)
  return best[inv]

def relevance(time_s:np.ndarray, kernel:np.ndarray, label_base:float, levels:int) -> np.ndarray:
  """Per-kernel relevance: levels-1 for the kernel's best config, one level less per factor of label_base slower, floored at 0."""
  steps = np.floor(np.log(time_s/kernel_best(time_s, kernel))/np.log(label_base) + 1e-9).astype(np.int64)
  return np.clip(levels - 1 - steps, 0, levels - 1).astype(np.int32)

class Ranker:
  """LambdaRank over per-kernel query groups. scikit-learn style: fit(X, time_s, kernel), predict(X) -> scores (higher = faster),
  save(path), Ranker.load(path). The LightGBM model is stored in its text format."""
  name = "lgbm_lambdarank"
  DEFAULTS = dict(n_estimators=400, learning_rate=0.05, num_leaves=63, min_data_in_leaf=20, feature_fraction=0.5,
                  bagging_fraction=0.8, lambda_l2=1e-3, label_base=1.1, levels=40, gain_power=2.0, truncation=10000,
                  objective="lambdarank")

  def __init__(self, seed:int=0, threads:int=0, **params):
    unknown = set(params) - set(self.DEFAULTS)
    if unknown: raise TypeError(f"unknown Ranker parameters: {sorted(unknown)}")
    self.params, self.seed, self.threads = {**self.DEFAULTS, **params}, seed, threads
    self.booster: lgb.Booster|None = None

  def get_params(self) -> dict: return {**self.params, "seed": self.seed, "threads": self.threads}
  def set_params(self, **params) -> Ranker:
    for k in ("seed", "threads"):
      if k in params: setattr(self, k, params.pop(k))
    self.params.update(params)
    return self

  def _lgb_params(self) -> dict:
    p = self.params
    return {"objective": p["objective"], "learning_rate": p["learning_rate"], "num_leaves": int(p["num_leaves"]),
            "min_data_in_leaf": int(p["min_data_in_leaf"]), "feature_fraction": p["feature_fraction"],
            "bagging_fraction": p["bagging_fraction"], "bagging_freq": 1 if p["bagging_fraction"] < 1 else 0, "lambda_l2": p["lambda_l2"],
            "label_gain": [float(i)**p["gain_power"] for i in range(int(p["levels"]))],
            "lambdarank_truncation_level": int(p["truncation"]),   # pairs involving the top `truncation` configs of a kernel count
            "seed": self.seed, "deterministic": True, "force_row_wise": True, "num_threads": self.threads, "verbosity": -1}

  def fit(self, X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray) -> Ranker:
    order, sizes = group_sizes(kernel)
    y = relevance(time_s, kernel, self.params["label_base"], int(self.params["levels"]))
    ds = lgb.Dataset(X[order], y[order], group=sizes, free_raw_data=True)
    self.booster = lgb.train(self._lgb_params(), ds, num_boost_round=int(self.params["n_estimators"]))
    return self

  def predict(self, X:np.ndarray) -> np.ndarray:
    if self.booster is None: raise RuntimeError("Ranker is not fitted")
    return self.booster.predict(np.asarray(X, dtype=np.float32), num_threads=self.threads or 1)

  def feature_importance(self) -> np.ndarray: return self.booster.feature_importance("gain")

  # *** persistence: LightGBM text format; the estimator's parameters travel in the caller's metadata ***
  def save(self, path:str|Path):
    if self.booster is None: raise RuntimeError("Ranker is not fitted")
    self.booster.save_model(str(path))
  @classmethod
  def load(cls, path:str|Path, **params) -> Ranker:
    r = cls(**params)
    r.booster = lgb.Booster(model_file=str(path))
    return r
  def to_json(self) -> dict: return {"model": self.name, "params": self.get_params()}
  def __repr__(self) -> str: return f"Ranker({json.dumps(self.params)})"
