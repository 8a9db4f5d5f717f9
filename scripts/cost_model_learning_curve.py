"""How the ranker's kernel-held-out scores grow with its training data: the same kernel-grouped 5-fold, with the training side cut
to a fraction of its kernels or of each kernel's configs. Says whether more kernels or more configs per kernel would help more.
  python scripts/cost_model_learning_curve.py dataset/data/cuda.sqlite [--fractions 0.5,1] [--seeds 2] [--threads 2]"""
import argparse, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, average
from models.ranker import Ranker

def main():
  ap = argparse.ArgumentParser("cost_model_learning_curve")
  ap.add_argument("dataset"); ap.add_argument("--fractions", default="0.5,1"); ap.add_argument("--seeds", type=int, default=2)
  ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  ds = load(a.dataset)
  X, t, kern = ds.X, ds.time_s, ds.kernel
  print(f"{a.dataset}: {len(t)} rows, {len(np.unique(kern))} kernels; default ranker, kernel-grouped 5-fold, {a.seeds} seeds")
  for frac in [float(f) for f in a.fractions.split(",")]:
    for mode in (("kernels", "configs") if frac < 1 else ("all",)):
      res = []
      for seed in range(a.seeds):
        rng, s = np.random.default_rng(seed), np.zeros(len(t))
        for tr, te in kernel_kfold(kern, 5, seed):
          tr = np.flatnonzero(tr) if tr.dtype == bool else np.asarray(tr)
          if mode == "configs": tr = tr[rng.random(len(tr)) < frac]
          elif mode == "kernels":
            ks = np.unique(kern[tr]); tr = tr[np.isin(kern[tr], rng.choice(ks, int(len(ks)*frac), replace=False))]
          s[te] = Ranker(seed=seed, threads=a.threads).fit(X[tr], t[tr], kern[tr]).predict(X[te])
        res.append(average(per_kernel(s, t, kern)))
      print(f"train on {frac:.0%} of the {mode:<7}: " + "  ".join(f"{k} {np.mean([r[k] for r in res]):.4f}" for k in res[0]), flush=True)

if __name__ == "__main__": main()
