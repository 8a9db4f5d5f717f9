"""Compile-time model: a LightGBM regressor of log(compile seconds) on the cost model's features, stored next to it (NAME.compile.txt,
recorded with its sha256 in NAME.json under "compile_model").

Why: on the GPU host tune-model is compile-bound (its pool compiles the model's favourite configs; waiting on them is most of a
kernel's tuning seconds), and compile times are heavy-tailed (ResNet-50 fp16 kernels: median 0.7 s, p90 5.3 s, max 78 s). They
are also predictable from the Scheduler state: a big UPCAST x UNROLL product is a big unrolled kernel for NVRTC. The search's scorer
(models.cost_model.Scorer) takes PENALTY_WEIGHT off a candidate's ranking score per doubling of its predicted compile seconds past
PENALTY_CAP_S (models.compile_penalty), so of two configs the model ranks about equal, the one that compiles in a second is measured
first.

  python -m models.compile_cost dataset/data/cuda.sqlite models/cost_model_sm_90.txt             # fit and attach to a model
  python -m models.compile_cost dataset/data/cuda.sqlite models/cost_model_sm_90.txt --tradeoff [--out FILE.json]  # held-out: what the penalty costs"""
from __future__ import annotations
import argparse, datetime, json, sys
from pathlib import Path
import numpy as np
from dataset.paths import cannot_write
from dataset.store import StoreError
from models.baselines import Regressor
from models.compile_penalty import PENALTY_CAP_S, PENALTY_WEIGHT, penalty
from models.cost_model import CostModel, CostModelError, file_sha256, mask_columns, ranker_params
from models.data import load
from models.evaluate import kernel_kfold, run_splits
from models.ranker import Ranker

PARAMS = dict(n_estimators=300, learning_rate=0.1, num_leaves=63, feature_fraction=0.5)

def compile_path(model_path:Path) -> Path: return model_path.with_suffix(".compile.txt")

def fit(X:np.ndarray, compile_s:np.ndarray, threads:int=0) -> Regressor:
  """The regressor on the rows whose compile seconds are recorded."""
  m = np.isfinite(compile_s) & (compile_s > 0)
  if m.sum() < 100: raise ValueError(f"{int(m.sum())} measurements with a recorded compile time: too few to learn from")
  return Regressor(threads=threads, **PARAMS).fit(X[m], compile_s[m])

def attach(model_path:Path, reg:Regressor, rows:int):
  """Save the regressor next to the cost model and record it (file, sha256, parameters, penalty) in the model's metadata."""
  f = compile_path(model_path)
  reg.save(f)
  mj = model_path.with_suffix(".json")
  meta = json.loads(mj.read_text())
  meta["compile_model"] = {"file": f.name, "sha256": file_sha256(f), "params": reg.get_params(), "rows": rows,
                           "penalty": {"cap_s": PENALTY_CAP_S, "weight": PENALTY_WEIGHT},
                           "trained": datetime.date.today().isoformat()}
  mj.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n")

def tradeoff(ds, params:dict, folds:int=3, threads:int=0, top:int=8, log=print, masked:list[str]=()) -> dict:
  """Kernel-held-out: fit the ranker (`params`: the shipped model's, fewer trees; `masked`: the feature columns its model holds at 0)
  and the compile regressor on k-1 folds, predict the rest; report log-compile R^2 and, per (cap, weight), the model's top `top` per
  kernel: best time (TenSet top-k score), their compile seconds, and the slowest of them per kernel (a first batch, compiled in
  parallel, waits on it: "batch_wait_s", the mean over kernels)."""
  splits, logc = list(kernel_kfold(ds.kernel, folds, 0)), np.full(len(ds), np.nan)
  score = run_splits(lambda i, tr: Ranker(threads=threads, **params), mask_columns(ds.X, list(masked)) if masked else ds.X,
                     ds.time_s, ds.kernel, splits)
  for i, (tr, te) in enumerate(splits):
    logc[te] = fit(ds.X[tr], ds.compile_s[tr], threads).predict_log_time(ds.X[te])
    log(f"fold {i} done")
  m = np.isfinite(ds.compile_s) & (ds.compile_s > 0)
  y = np.log(ds.compile_s[m])
  out = {"r2_log_compile_s": float(1 - np.var(y - logc[m])/np.var(y)), "rows": int(m.sum()), "top": top, "penalties": []}
  groups = [ix for ix in (np.flatnonzero(ds.kernel == k) for k in np.unique(ds.kernel)) if len(ix) >= 10 and m[ix].all()]
  for c, w in [(1.0, 0.0)] + [(c, w) for c in (0.5, 1.0, 2.0) for w in (0.5, 1.0, 2.0)]:
    picks = [ix[np.argsort(-(score[ix] - penalty(logc[ix], c, w)), kind="stable")[:top]] for ix in groups]
    out["penalties"].append({"cap_s": c, "weight": w, "topk_score": float(np.mean([ds.time_s[ix].min()/ds.time_s[p].min() for ix, p in zip(groups, picks)])),
                             "top1_score": float(np.mean([ds.time_s[ix].min()/ds.time_s[p[0]] for ix, p in zip(groups, picks)])),
                             "compile_s": float(sum(ds.compile_s[p].sum() for p in picks)),
                             "batch_wait_s": float(np.mean([ds.compile_s[p].max() for p in picks]))})
  base = out["penalties"][0]["compile_s"]
  log(f"kernel-held-out {folds}-fold, {len(groups)} kernels: log compile-seconds R^2 {out['r2_log_compile_s']:.3f}")
  for r in out["penalties"]:
    log(f"cap {r['cap_s']:.1f} s weight {r['weight']:.1f}: top-{top} score {r['topk_score']:.4f}, top-1 {r['top1_score']:.4f}, "
        f"their compile seconds {r['compile_s']:.0f} ({r['compile_s']/base:.2f} of unpenalized), slowest per kernel {r['batch_wait_s']:.2f} s")
  return out

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("compile_cost", description=__doc__.split("\n")[0])
  ap.add_argument("dataset"); ap.add_argument("model", help="the cost model to attach the compile model to (NAME.txt)")
  ap.add_argument("--tradeoff", action="store_true", help="only the held-out evaluation of the penalty; attaches nothing")
  ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--out", help="with --tradeoff: also write its results to this JSON file")
  a = ap.parse_args(argv)
  if a.out and (why := cannot_write(a.out)): print(f"compile_cost: error: {why}", file=sys.stderr); return 2
  try: cm = CostModel.load(a.model)
  except CostModelError as e: print(f"compile_cost: {e}", file=sys.stderr); return 2
  try: ds = load(a.dataset, device=cm.meta["device"])
  except (StoreError, ValueError) as e: print(f"compile_cost: error: {e}", file=sys.stderr); return 2
  if a.tradeoff:
    res = tradeoff(ds, {**ranker_params(a.model), "n_estimators": 300}, threads=a.threads, masked=cm.meta.get("masked_features", []))
    if a.out: Path(a.out).write_text(json.dumps({"model": a.model, "dataset": a.dataset, "date": datetime.date.today().isoformat(),
                                                  "command": "python -m models.compile_cost " + " ".join(sys.argv[1:] if argv is None else argv), **res}, indent=1))
    return 0
  attach(Path(a.model), fit(ds.X, ds.compile_s, a.threads), int(np.isfinite(ds.compile_s).sum()))
  print(f"attached {compile_path(Path(a.model))} to {a.model}")
  return 0

if __name__ == "__main__": sys.exit(main())
