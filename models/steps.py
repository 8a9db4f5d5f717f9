"""python -m models.steps STORE MODEL: how MODEL orders single steps (a config against its parent, one opt less) per opt type, over
every ok measurement of STORE and its shards (models.evaluate.step_accuracy). On the store a model was trained on the scores are
in-sample; train-cost-model --evaluate reports the same out of fold."""
from __future__ import annotations
import argparse, json, sys
from dataset.store import StoreError
from models.cost_model import CostModel, CostModelError
from models.data import load
from models.evaluate import step_accuracy

def main(argv:list[str]|None=None) -> int:
  ap = argparse.ArgumentParser(prog="python -m models.steps", description=__doc__)
  ap.add_argument("store"); ap.add_argument("model")
  ap.add_argument("--no-shards", action="store_true", help="the base store alone")
  a = ap.parse_args(argv)
  try: model = CostModel.load(a.model); ds = load(a.store, shards=not a.no_shards)   # the model first: it fails in a moment, the store's features take minutes
  except (CostModelError, StoreError, OSError, ValueError) as e: print(f"models.steps: error: {e}", file=sys.stderr); return 2
  print(json.dumps({"store": a.store, "model": a.model, "rows": len(ds.time_s), "steps": step_accuracy(model.score(ds.X), ds.time_s, ds.kernel, ds.opts)}, indent=1))
  return 0

if __name__ == "__main__": raise SystemExit(main())
