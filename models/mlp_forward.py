"""An MLPRanker's forward pass in numpy: what the shipped cost model scores with, so that scoring never imports torch (seconds in
every search compile worker)."""
from __future__ import annotations
from pathlib import Path
import numpy as np

def _gelu(x:np.ndarray) -> np.ndarray:
  """torch's exact GELU, x * Phi(x), with erf from Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7)."""
  z = np.abs(x)/np.sqrt(2.0)
  t = 1.0/(1.0 + 0.3275911*z)
  erf = 1.0 - t*(0.254829592 + t*(-0.284496736 + t*(1.421413741 + t*(-1.453152027 + t*1.061405429))))*np.exp(-z*z)
  return 0.5*x*(1.0 + np.sign(x)*erf)

SD_FLOOR = 1e-6   # added to every input column's std in training: a column constant there has exactly this std

def standardize(X:np.ndarray, mu:np.ndarray, sd:np.ndarray) -> np.ndarray:
  """The network's inputs: each column less its training mean over its training std. A column constant in training (std at the
  floor) is 0, as it always was there: a value off that constant is no evidence the network learned to read, and scaled by the
  floor it swamped every score (a Llama block's fused gate/up GEMM, where rel_loads_n is 1 and was 0 in every training row, scored
  -8,562 against 2-5 for everything else: its first batch was ranked by that alone)."""
  z = np.nan_to_num((np.asarray(X, np.float32) - mu)/sd, posinf=0.0, neginf=0.0)
  z[:, sd <= np.float32(SD_FLOOR)] = 0.0
  return z

class NumpyMLP:
  """An MLPRanker's forward pass in numpy (eval mode: no dropout). save/load as .npz."""
  def __init__(self, mu:np.ndarray, sd:np.ndarray, weights:list[np.ndarray], biases:list[np.ndarray]):
    self.mu, self.sd, self.weights, self.biases = mu, sd, weights, biases
  def predict(self, X:np.ndarray) -> np.ndarray:
    h = standardize(X, self.mu, self.sd)
    for i, (w, b) in enumerate(zip(self.weights, self.biases)):
      h = h @ w.T + b
      if i < len(self.weights) - 1: h = _gelu(h)
    return h[:, 0].astype(np.float64)
  def save(self, path:str|Path):
    with open(path, "wb") as f:
      np.savez(f, mu=self.mu, sd=self.sd, **{f"w{i}": w for i, w in enumerate(self.weights)}, **{f"b{i}": b for i, b in enumerate(self.biases)})
  @classmethod
  def load(cls, path:str|Path) -> NumpyMLP:
    z = np.load(path)
    n = sum(k.startswith("w") for k in z.files)
    return cls(z["mu"], z["sd"], [z[f"w{i}"] for i in range(n)], [z[f"b{i}"] for i in range(n)])
