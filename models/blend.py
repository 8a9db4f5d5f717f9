"""The ranker blended with the MLP challenger: weight * ranker/s_r + (1 - weight) * mlp/s_m.

The two score on different scales, and only within a kernel do scores mean anything, so each is divided by its fixed scale: the
median over the training kernels of the per-kernel std of its scores on its own training rows. The scales are fitted with the
models, so scoring a candidate needs nothing from the other candidates (a per-kernel z-score would: the same lift, but not
shippable). The Hopper model ships as this blend at ranker weight 0.7: on kernels held out of training it ranks better than
either part alone (results/cost_model.md: top-1 0.901 against the ranker's 0.898 and the MLP's 0.891), and the MLP's forward pass
is numpy only, so search's compile workers score without torch.

scikit-learn style: fit(X, time_s, kernel), predict(X), parts(X) (each model's score and the blend's)."""
from __future__ import annotations
import numpy as np

WEIGHT = 0.6   # the ranker's share (split 0: 0.5-0.65 all within 0.001 of the best top-1)

def scale(score:np.ndarray, kernel:np.ndarray) -> float:
  """The median over kernels (2+ rows) of the per-kernel std of `score`: what one unit of a model's score spans within a kernel."""
  order = np.argsort(kernel, kind="stable")
  starts = np.unique(kernel[order], return_index=True)[1]
  stds = [s.std() for s in np.split(score[order], starts[1:]) if len(s) > 1]
  med = float(np.median(stds)) if stds else 0.0
  return med if med > 0 else 1.0

class Blend:
  """`ranker` and `mlp`: estimators with fit(X, time_s, kernel) and predict(X) (Ranker and MLPRanker, optionally WithResources)."""
  name = "ranker_mlp_blend"
  def __init__(self, ranker, mlp, weight:float=WEIGHT, scales:tuple[float, float]|None=None):
    if not 0.0 <= weight <= 1.0: raise ValueError(f"blend weight must be in [0, 1], got {weight}")
    self.ranker, self.mlp, self.weight, self.scales = ranker, mlp, weight, scales

  def get_params(self) -> dict: return {"weight": self.weight, "scales": list(self.scales) if self.scales else None}

  def fit(self, X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray) -> Blend:
    self.ranker.fit(X, time_s, kernel); self.mlp.fit(X, time_s, kernel)
    self.scales = (scale(self.ranker.predict(X), kernel), scale(self.mlp.predict(X), kernel))
    return self

  def combine(self, r:np.ndarray, m:np.ndarray) -> np.ndarray:
    if self.scales is None: raise RuntimeError("Blend is not fitted")
    return self.weight*r/self.scales[0] + (1 - self.weight)*m/self.scales[1]

  def parts(self, X:np.ndarray) -> dict[str, np.ndarray]:
    r, m = self.ranker.predict(X), self.mlp.predict(X)
    return {"ranker": r, "mlp": m, "blend": self.combine(r, m)}

  def predict(self, X:np.ndarray) -> np.ndarray: return self.parts(X)["blend"]
  def __repr__(self) -> str: return f"Blend(weight={self.weight}, scales={self.scales})"
