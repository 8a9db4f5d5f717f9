"""What a kernel's own measurements teach its search: an online correction of the cost model's scores, and how far the model is
trusted on this kernel.

The cost model ranks well near the kernels it was trained on; on a kernel unlike them (a grouped conv with 16 groups, a 197-wide
bmm) it can be wrong in a way that is consistent across the kernel's configs: too much upcast, too little GROUP. The correction
learns that per kernel, as Ansor refits its model after every round, from the configs measured so far: a ridge fit of
-log(runtime) on the model's score and a few shape terms of each config (log2 of its upcast, unroll, local, group and global sizes,
tensor cores), which can re-rank the next round's children (search.beam.Beam's `correct`, off by default: replayed offline on
kernels of held-out networks and families, scripts/bench_adapt.py, it ranked worse than the model alone). Kendall's tau between the
model's scores and the measured times says how well it ranks this kernel (reported); how far the model's favourite measures from
the fastest decides how long the beam goes on (search.beam.Beam)."""
from __future__ import annotations
import math
import numpy as np
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.uop.ops import AxisType
from tinygrad.helpers import prod

def _l2(x) -> float: return math.log2(x) if isinstance(x, int) and x > 0 else 0.0

def shape_terms(k:Scheduler) -> tuple[float, ...]:
  """log2 sizes of what the opts built: upcast (UPCAST+UNROLL), unroll, local threads, grouped reduction, global work; tensor cores."""
  sz = lambda *ts: prod(s for s, t in zip(k.full_shape, k.axis_types) if t in ts)
  return (_l2(sz(AxisType.UPCAST, AxisType.UNROLL)), _l2(sz(AxisType.UNROLL)), _l2(sz(AxisType.WARP, AxisType.LOCAL)),
          _l2(sz(AxisType.GROUP_REDUCE)), _l2(sz(AxisType.GLOBAL)), float(getattr(k, "tensor_core", None) is not None))

def kendall(a:np.ndarray, b:np.ndarray) -> float:
  """Kendall's tau-a between two score vectors (higher = better in both); nan below 3 pairs."""
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  if len(a) < 3: return math.nan
  i, j = np.triu_indices(len(a), 1)
  return float(np.mean(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])))

class Correction:
  """Corrected score = the ridge fit of -log(time) on [model score, shape terms], all standardized over the measured configs; the
  model's score keeps a weak prior towards weight 1, so a few measurements move the ranking only as far as they agree."""
  MIN_ROWS = 6
  def __init__(self, alpha:float=2.0): self.alpha, self.w = alpha, None
  def fit(self, scores:np.ndarray, terms:np.ndarray, times:np.ndarray) -> Correction:
    ok = np.isfinite(times) & (times > 0) & np.isfinite(scores)
    if ok.sum() < self.MIN_ROWS: self.w = None; return self
    X, y = np.column_stack([scores[ok], terms[ok]]).astype(np.float64), -np.log(times[ok])
    self.mu, self.sd = X.mean(0), X.std(0) + 1e-9
    Z, yz = (X - self.mu)/self.sd, (y - y.mean())/(y.std() + 1e-9)
    # ridge towards the prior 'rank by the model's score' (weight 1 on it, 0 on the shape terms)
    prior = np.zeros(Z.shape[1]); prior[0] = 1.0
    self.w = prior + np.linalg.solve(Z.T @ Z + self.alpha*np.eye(Z.shape[1]), Z.T @ (yz - Z @ prior))
    return self
  def __call__(self, scores:np.ndarray, terms:np.ndarray) -> np.ndarray:
    """Corrected scores (higher = predicted faster), or the model's own while too few configs are measured."""
    if self.w is None: return np.asarray(scores, np.float64)
    X = np.column_stack([scores, terms]).astype(np.float64)
    return ((X - self.mu)/self.sd) @ self.w
