"""Ranker variants on the kernel-held-out split (5-fold by kernel, one seed), against the default parameters (--base: a model's
JSON, whose parameters then are the default): each JSON argument overrides Ranker parameters; --blend [regressor|throughput|mlp] also scores a
per-kernel z-score blend of the default ranker with the log-runtime regressor, the normalized-throughput regressor (Ansor's target)
or the torch MLP; --cascade re-ranks the default
ranker's top K of each kernel with half the weight on a second ranker trained only on configs within 2x of their kernel's best (fine steps: label_base 1.05);
--average N fits the default ranker with model seeds 0..N-1 and scores each, then the per-kernel z-score average of the first 2..N.
  python scripts/cost_model_variants.py dataset/data/cuda.sqlite '{}' '{"n_estimators": 800}' --blend --threads 2
  python scripts/cost_model_variants.py dataset/data/cuda.sqlite '{}' '{"truncation": 30}' --base models/cost_model_sm_90.json --cascade"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.baselines import Regressor
from models.mlp import MLPRanker
from models.data import load
from models.evaluate import average, out_of_fold, per_kernel
from models.ranker import Ranker, kernel_best
from models.cost_model import ranker_params

def cascade(s1:np.ndarray, s2:np.ndarray, kernel:np.ndarray, k:int, w:float=0.5) -> np.ndarray:
  """s1 with each kernel's top k re-ranked by (1-w) z(s1) + w z(s2) over those k, kept above the rest."""
  out = s1.copy()
  for kk in np.unique(kernel):
    ix = np.flatnonzero(kernel == kk)
    top = ix[np.argsort(-s1[ix])[:k]]
    out[top] = 1e6 + (1 - w)*per_kernel_z(s1[top], kernel[top]) + w*per_kernel_z(s2[top], kernel[top])
  return out

def per_kernel_z(s:np.ndarray, kernel:np.ndarray) -> np.ndarray:
  out = np.zeros_like(s)
  for k in np.unique(kernel):
    m = kernel == k
    out[m] = (s[m] - s[m].mean())/(s[m].std() + 1e-9)
  return out

def main():
  ap = argparse.ArgumentParser("cost_model_variants")
  ap.add_argument("dataset"); ap.add_argument("variants", nargs="*", default=["{}"])
  ap.add_argument("--blend", nargs="?", const="regressor", choices=("regressor", "throughput", "mlp")); ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--base", help="a cost model's JSON: its ranker parameters are the default the variants override")
  ap.add_argument("--cascade", action="store_true")
  ap.add_argument("--average", type=int, default=0, metavar="N", help="model seeds of the default ranker to average (0: none)")
  a = ap.parse_args()
  ds = load(a.dataset)
  base = ranker_params(a.base) if a.base else {}
  show = lambda s: {k: round(v, 4) for k, v in average(per_kernel(s, ds.time_s, ds.kernel)).items()}
  default = None
  for v in a.variants:
    st, p = time.perf_counter(), json.loads(v)
    s = out_of_fold(lambda: Ranker(seed=0, threads=a.threads, **{**base, **p}), ds)
    if not p: default = s
    print(f"ranker {v}: {show(s)} ({time.perf_counter() - st:.0f} s)", flush=True)
  if (a.blend or a.cascade) and default is None: default = out_of_fold(lambda: Ranker(seed=0, threads=a.threads, **base), ds)
  zs = []
  for seed in range(a.average):
    st = time.perf_counter()
    s = default if seed == 0 and default is not None else out_of_fold(lambda: Ranker(seed=seed, threads=a.threads, **base), ds)
    zs.append(per_kernel_z(s, ds.kernel))
    print(f"ranker seed {seed}: {show(s)} ({time.perf_counter() - st:.0f} s)", flush=True)
    if seed: print(f"  average of seeds 0-{seed}: {show(np.mean(zs, 0))}", flush=True)
  if a.cascade:
    near = ds.time_s <= 2.0*kernel_best(ds.time_s, ds.kernel)
    s2 = out_of_fold(lambda: Ranker(seed=0, threads=a.threads, **{**base, "n_estimators": 400, "label_base": 1.05, "levels": 30}), ds, rows=near)
    for k in (5, 10, 20): print(f"cascade top {k}: {show(cascade(default, s2, ds.kernel, k))}", flush=True)
  if a.blend:
    zr = per_kernel_z(default, ds.kernel)
    other = {"regressor": Regressor, "throughput": lambda **kw: Regressor(target="throughput", **kw), "mlp": MLPRanker}[a.blend]
    zg = per_kernel_z(out_of_fold(lambda: other(seed=0, threads=a.threads), ds), ds.kernel)
    for w in (1.0, 0.8, 0.65, 0.5, 0.35, 0.0): print(f"blend {w:.2f} ranker + {1-w:.2f} {a.blend}: {show(w*zr + (1-w)*zg)}", flush=True)

if __name__ == "__main__": main()
