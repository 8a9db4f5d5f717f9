"""Ranker variants on the kernel-held-out split (5-fold by kernel, one seed), against the default parameters: each JSON argument
overrides Ranker parameters; --blend also scores a per-kernel z-score blend of the default ranker with the log-runtime regressor.
  python scripts/cost_model_variants.py dataset/data/cuda.sqlite '{}' '{"n_estimators": 800}' --blend --threads 2"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.baselines import Regressor
from models.data import load
from models.evaluate import average, kernel_kfold, per_kernel, run_splits
from models.ranker import Ranker

def held_out(make, ds) -> np.ndarray: return run_splits(lambda i, tr: make(), ds.X, ds.time_s, ds.kernel, kernel_kfold(ds.kernel, 5, 0))

def per_kernel_z(s:np.ndarray, kernel:np.ndarray) -> np.ndarray:
  out = np.zeros_like(s)
  for k in np.unique(kernel):
    m = kernel == k
    out[m] = (s[m] - s[m].mean())/(s[m].std() + 1e-9)
  return out

def main():
  ap = argparse.ArgumentParser("cost_model_variants")
  ap.add_argument("dataset"); ap.add_argument("variants", nargs="*", default=["{}"])
  ap.add_argument("--blend", action="store_true"); ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  ds = load(a.dataset)
  show = lambda s: {k: round(v, 4) for k, v in average(per_kernel(s, ds.time_s, ds.kernel)).items()}
  default = None
  for v in a.variants:
    st, p = time.perf_counter(), json.loads(v)
    s = held_out(lambda: Ranker(seed=0, threads=a.threads, **p), ds)
    if not p: default = s
    print(f"ranker {v}: {show(s)} ({time.perf_counter() - st:.0f} s)", flush=True)
  if a.blend:
    zr = per_kernel_z(default if default is not None else held_out(lambda: Ranker(seed=0, threads=a.threads), ds), ds.kernel)
    zg = per_kernel_z(held_out(lambda: Regressor(seed=0, threads=a.threads), ds), ds.kernel)
    for w in (1.0, 0.8, 0.65, 0.5, 0.35, 0.0): print(f"blend {w:.2f} ranker + {1-w:.2f} regressor: {show(w*zr + (1-w)*zg)}", flush=True)

if __name__ == "__main__": main()
