"""The search's compile-time penalty: the scorer (models.cost_model.Scorer) takes it off a candidate's ranking score for the compile
seconds models.compile_cost's regressor predicts, so of two configs the model ranks about equal, the one that compiles in a second
is measured first."""
from __future__ import annotations
import numpy as np

# a ranking score unit off per doubling past the cap: on the Hopper dataset's held-out predictions (models.compile_cost --tradeoff)
# the model's top 8 per kernel then compile in 17% fewer seconds, their best time 0.4% slower (top-1: 0.8%)
PENALTY_CAP_S, PENALTY_WEIGHT = 1.0, 1.0

def penalty(log_compile_s:np.ndarray, cap_s:float=PENALTY_CAP_S, weight:float=PENALTY_WEIGHT) -> np.ndarray:
  """What the scorer subtracts: `weight` per doubling of the predicted compile seconds past `cap_s`."""
  return weight*np.maximum(0.0, (log_compile_s - np.log(cap_s))/np.log(2))
