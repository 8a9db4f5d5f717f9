"""The issue's nested protocol for the ranker alone, fold by fold: on each outer fold of train-cost-model --evaluate's kernel k-fold
(split seed --seed), optuna tunes on that fold's training kernels only (models.tune.tune, inner 3-fold; the study is the one
--evaluate would use, same name and rows, so a shared --storage lets either resume the other's), and the ranker with those parameters
and with Ranker.DEFAULTS are fitted there and scored on the fold's test kernels. With the resource model as --evaluate has it
(--no-resources: without). Prints each fold, then both over the folds run.
  python scripts/cost_model_nested.py dataset/data/cuda.sqlite --trials 8 --seed 0 --threads 2 --storage sqlite:///results/cost_model_studies.db
  python scripts/cost_model_nested.py dataset/data/cuda.sqlite --trials 8 --folds 0,1 --no-resources --storage sqlite:////tmp/nested.db"""
import argparse, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.data import load
from models.evaluate import average, kernel_kfold, per_kernel
from models.ranker import Ranker
from models.resources import augment
from models.train import resource_model, study_name
from models.tune import tune, STORAGE

def main():
  ap = argparse.ArgumentParser("cost_model_nested")
  ap.add_argument("dataset"); ap.add_argument("--trials", type=int, default=8); ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--folds", default=None, help="outer folds to run, e.g. 0,1 (default: all 5)")
  ap.add_argument("--no-resources", action="store_true"); ap.add_argument("--storage", default=STORAGE)
  ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  ds = load(a.dataset)
  t, kern = ds.time_s, ds.kernel
  splits = list(kernel_kfold(kern, 5, a.seed))
  folds = range(len(splits)) if a.folds is None else [int(f) for f in a.folds.split(",")]
  show = lambda s, m: " ".join(f"{k}={v:.4f}" for k, v in average(per_kernel(s[m], t[m], kern[m])).items())
  scores = {"defaults": np.full(len(t), np.nan), "tuned": np.full(len(t), np.nan)}
  for i in folds:
    tr, te = splits[i]
    st = time.perf_counter()
    X = ds.X if a.no_resources else augment(ds.X, resource_model(ds, tr, a.threads))
    p = tune(X[tr], t[tr], kern[tr], a.trials, study_name(ds, f"kfold5-s{a.seed}-f{i}"), a.storage, a.seed, threads=a.threads)
    print(f"fold {i}: tuned in {time.perf_counter() - st:.0f} s: {p}", flush=True)
    for name, params in (("defaults", {}), ("tuned", p)):
      scores[name][te] = Ranker(seed=a.seed, threads=a.threads, **params).fit(X[tr], t[tr], kern[tr]).predict(X[te])
      print(f"fold {i} {name}: {show(scores[name], te)}", flush=True)
  done = ~np.isnan(scores["tuned"])
  for name, s in scores.items(): print(f"folds {','.join(map(str, folds))} {name}: {show(s, done)}")

if __name__ == "__main__": main()
