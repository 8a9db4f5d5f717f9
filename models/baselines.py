"""Baselines the ranker is measured against: a LightGBM regressor of log runtime (pointwise, absolute times across kernels) and a
random ranker. Same interface as Ranker: fit(X, time_s, kernel), predict(X) -> scores, higher = faster."""
from __future__ import annotations
from pathlib import Path
import numpy as np
from models.lgb import lgb
from models.ranker import kernel_best

class Regressor:
  """LightGBM regression of log(runtime) on the features; its score is the negated prediction. target="throughput" regresses
  Ansor's per-kernel normalized throughput instead (the kernel's best time / the config's: slow configs all near 0, the fast end
  spread out; needs `kernel` in fit)."""
  name = "lgbm_regressor"
  DEFAULTS = dict(n_estimators=600, learning_rate=0.05, num_leaves=63, min_data_in_leaf=20, feature_fraction=0.5, bagging_fraction=0.8,
                  lambda_l2=0.0, target="log_time")
  def __init__(self, seed:int=0, threads:int=0, **params):
    self.params, self.seed, self.threads = {**self.DEFAULTS, **params}, seed, threads
    self.booster: lgb.Booster|None = None
  def get_params(self) -> dict: return {**self.params, "seed": self.seed, "threads": self.threads}
  def fit(self, X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray|None=None) -> Regressor:
    p = self.params
    lp = {"objective": "regression", "learning_rate": p["learning_rate"], "num_leaves": int(p["num_leaves"]),
          "min_data_in_leaf": int(p["min_data_in_leaf"]), "feature_fraction": p["feature_fraction"], "bagging_fraction": p["bagging_fraction"],
          "bagging_freq": 1 if p["bagging_fraction"] < 1 else 0, "lambda_l2": p["lambda_l2"], "seed": self.seed, "deterministic": True,
          "force_row_wise": True, "num_threads": self.threads, "verbosity": -1}
    if p["target"] == "throughput":   # negated, so that the score stays the negated prediction
      y = -kernel_best(time_s, kernel) / time_s
    else: y = np.log(time_s)
    self.booster = lgb.train(lp, lgb.Dataset(X, y), num_boost_round=int(p["n_estimators"]))
    return self
  def predict_log_time(self, X:np.ndarray) -> np.ndarray:
    if self.booster is None: raise RuntimeError("Regressor is not fitted")
    return self.booster.predict(np.asarray(X, dtype=np.float32), num_threads=self.threads or 1)
  def predict(self, X:np.ndarray) -> np.ndarray: return -self.predict_log_time(X)
  def save(self, path:str|Path): self.booster.save_model(str(path))
  @classmethod
  def load(cls, path:str|Path, **params) -> Regressor:
    r = cls(**params)
    r.booster = lgb.Booster(model_file=str(path))
    return r

class RandomRanker:
  """Uniformly random scores: the floor every model has to clear."""
  name = "random"
  def __init__(self, seed:int=0): self.seed = seed
  def get_params(self) -> dict: return {"seed": self.seed}
  def fit(self, X=None, time_s=None, kernel=None) -> RandomRanker: return self
  def predict(self, X:np.ndarray) -> np.ndarray: return np.random.default_rng(self.seed).random(len(X))
