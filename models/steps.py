"""python -m models.steps STORE MODEL: how MODEL orders single steps (a config against its parent, one opt more) per opt type, over
every ok measurement of STORE and its shards (models.evaluate.step_accuracy), and apart among the configs with a tensor core ("tc")
and without ("no_tc"). On the store a model was trained on the scores are
in-sample; train-cost-model --evaluate reports the same out of fold. `python -m models.steps STORE --kfold K [--mask GROUP]`: a
ranker at its default parameters instead, kernel-grouped K-fold (seed 0), out of fold, with the whole-config metrics beside: what a
feature group does to the step order without a full --evaluate."""
from __future__ import annotations
import argparse, json, sys
from dataset.store import StoreError
from models.cost_model import CostModel, CostModelError, mask_columns
from models.data import load
from models.evaluate import average, kernel_kfold, per_kernel, run_splits, step_accuracy, steps_by_tc
from models.features import FEATURE_GROUPS, group_features
from models.ranker import Ranker

def main(argv:list[str]|None=None) -> int:
  ap = argparse.ArgumentParser(prog="python -m models.steps", description=__doc__)
  ap.add_argument("store"); ap.add_argument("model", nargs="?", help="a cost model (in-sample on its own store); or --kfold")
  ap.add_argument("--kfold", type=int, default=0, metavar="K", help="train a default ranker K-fold by kernel instead of scoring MODEL")
  ap.add_argument("--mask", action="append", default=[], choices=sorted(FEATURE_GROUPS), metavar="GROUP", help="with --kfold: this feature group held at 0 (repeatable)")
  ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--no-shards", action="store_true", help="the base store alone")
  a = ap.parse_args(argv)
  if (a.model is None) == (a.kfold == 0) or a.kfold == 1 or a.kfold < 0: ap.error("give one of MODEL and --kfold K (K >= 2)")
  if a.mask and not a.kfold: ap.error("--mask needs --kfold (a trained model records its own masked columns)")
  try:
    model = CostModel.load(a.model) if a.model else None   # the model first: it fails in a moment, the store's features take minutes
    ds = load(a.store, shards=not a.no_shards)
  except (CostModelError, StoreError, OSError, ValueError) as e: print(f"models.steps: error: {e}", file=sys.stderr); return 2
  out: dict = {"store": a.store, "rows": len(ds.time_s)}
  if model is not None:
    s = model.score(ds.X)
    out.update(model=a.model, steps=step_accuracy(s, ds.time_s, ds.kernel, ds.opts), **steps_by_tc(s, ds.time_s, ds.kernel, ds.opts))
  else:
    X = mask_columns(ds.X, group_features(a.mask)) if a.mask else ds.X
    s = run_splits(lambda i, tr: Ranker(seed=0, threads=a.threads), X, ds.time_s, ds.kernel, list(kernel_kfold(ds.kernel, a.kfold, 0)))
    out.update(kfold=a.kfold, mask=a.mask, metrics=average(per_kernel(s, ds.time_s, ds.kernel)), steps=step_accuracy(s, ds.time_s, ds.kernel, ds.opts),
               **steps_by_tc(s, ds.time_s, ds.kernel, ds.opts))
  print(json.dumps(out, indent=1))
  return 0

if __name__ == "__main__": raise SystemExit(main())
