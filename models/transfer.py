"""How a cost model carries to another device's data, and what that data adds to its training (the corpus issue's H100 questions).

  python -m models.transfer dataset/data/cuda.sqlite dataset/data/cuda_h100.sqlite.gz --no-shards --model models/cost_model_sm_90.txt \
    --out results/transfer_h100

1. The model as shipped, scored on every kernel of the other dataset (per-kernel ranking metrics, models.evaluate).
2. The other dataset's kernels cut in two halves (seeded); for each half held out: a ranker (the model's parameters) trained on the
   base dataset alone, and one trained on the base plus the other half's rows, capped at --max-share of the base's rows (whole
   kernels, drawn at random), both scored on the held-out half. Rows of the other device form their own query groups.
Written: OUT.json and OUT.md, with the device names, date and this command."""
from __future__ import annotations
import argparse, json, shlex, sys, time
from pathlib import Path
import numpy as np
from dataset.paths import cannot_write
from dataset.store import StoreError
from models.cost_model import CostModel, CostModelError
from models.data import Dataset, concat, load
from models.evaluate import METRICS, average, per_kernel
from models.ranker import Ranker
from models.resources import augment

def _capped(ds:Dataset, rows:np.ndarray, cap:int, rng:np.random.Generator) -> np.ndarray:
  """`rows` cut to at most `cap` rows, by whole kernels in a random order."""
  keep, n = np.zeros(len(ds), bool), 0
  for k in rng.permutation(np.unique(ds.kernel[rows])):
    m = rows & (ds.kernel == k)
    if n + m.sum() > cap: continue
    keep |= m; n += int(m.sum())
  return keep

def run(base:str, other:str, model:str, max_share:float, seed:int, threads:int, base_shards:bool=True, log=print) -> dict:
  cm = CostModel.load(model)
  b, o = load(base, shards=base_shards), load(other)
  log(f"base {b.device}: {len(b)} rows, {len(np.unique(b.kernel))} kernels; other {o.device}: {len(o)} rows, {len(np.unique(o.kernel))} kernels")
  A = lambda X: augment(X, cm.resource_model)
  res: dict = {"base": {"path": base, "device": b.device, "rows": len(b)}, "other": {"path": other, "device": o.device, "rows": len(o)},
               "model": model, "model_device": cm.meta.get("device"), "max_share": max_share, "seed": seed,
               "shipped_on_other": average(per_kernel(cm.score(o.X), o.time_s, o.kernel)), "halves": []}
  log(f"shipped model on {o.device}: " + " ".join(f"{k}={v:.3f}" for k, v in res["shipped_on_other"].items()))
  params = {k: v for k, v in cm.ranker.get_params().items() if k not in ("seed", "threads")}
  rng = np.random.default_rng(seed)
  ks = rng.permutation(np.unique(o.kernel))
  alone = Ranker(seed=0, threads=threads, **params).fit(A(b.X), b.time_s, b.kernel)
  for h in range(2):
    test = np.isin(o.kernel, ks[h::2])
    add = _capped(o, ~test, int(max_share*len(b)), rng)
    d = concat(b, [o.subset(add)])
    both = Ranker(seed=0, threads=threads, **params).fit(A(d.X), d.time_s, d.kernel)
    row = {"test_kernels": int(len(np.unique(o.kernel[test]))), "added_rows": int(add.sum()), "added_kernels": int(len(np.unique(o.kernel[add]))),
           "base_only": average(per_kernel(alone.predict(A(o.X[test])), o.time_s[test], o.kernel[test])),
           "with_other": average(per_kernel(both.predict(A(o.X[test])), o.time_s[test], o.kernel[test]))}
    res["halves"].append(row)
    log(f"half {h}: +{row['added_rows']} rows; " + " ".join(f"{m} {row['base_only'][m]:.3f}->{row['with_other'][m]:.3f}" for m in METRICS))
  return res

def markdown(res:dict) -> str:
  f = lambda d: " | ".join(f"{d[m]:.3f}" for m in METRICS)
  lines = [f"# The {res['model_device']} cost model on {res['other']['device']} data", "", f"{res['date']}, `{res['command']}`", "",
           f"Base: `{res['base']['path']}` ({res['base']['device']}, {res['base']['rows']:,} rows); other: `{res['other']['path']}` "
           f"({res['other']['device']}, {res['other']['rows']:,} rows). Per-kernel ranking metrics, averaged over kernels.", "",
           "| model, scored on | " + " | ".join(METRICS) + " |", "|---|" + "---:|"*len(METRICS),
           f"| `{res['model']}` as shipped, every kernel of the other data | {f(res['shipped_on_other'])} |"]
  for i, h in enumerate(res["halves"]):
    lines += [f"| ranker on the base alone, half {i} of the other's kernels ({h['test_kernels']}) | {f(h['base_only'])} |",
              f"| ranker on the base + {h['added_rows']:,} rows of the other half ({h['added_kernels']} kernels, <= {res['max_share']:.0%} of the base) | {f(h['with_other'])} |"]
  return "\n".join(lines) + "\n"

def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  ap = argparse.ArgumentParser("models.transfer", description=__doc__.split("\n")[0])
  ap.add_argument("base"); ap.add_argument("other")
  ap.add_argument("--model", required=True, help="the shipped cost model (trained on base)")
  ap.add_argument("--max-share", type=float, default=0.1, help="the other device's rows added to training, at most this share of the base's")
  ap.add_argument("--no-shards", action="store_true", help="the base without its shards (the shipped model's training data)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--out", required=True, help="OUT.json and OUT.md")
  a = ap.parse_args(argv)
  if not 0 < a.max_share <= 1: ap.error(f"--max-share: in (0, 1], got {a.max_share}")
  for p in (Path(a.out + ".json"), Path(a.out + ".md")):
    if why := cannot_write(p): print(f"models.transfer: error: {why}", file=sys.stderr); return 2
  try: res = run(a.base, a.other, a.model, a.max_share, a.seed, a.threads, not a.no_shards, lambda s: print(s, file=sys.stderr, flush=True))
  except (OSError, ValueError, StoreError, CostModelError) as e: print(f"models.transfer: error: {e}", file=sys.stderr); return 2
  res.update(date=time.strftime("%Y-%m-%d"), command="python -m models.transfer " + " ".join(shlex.quote(x) for x in argv))
  Path(a.out + ".json").write_text(json.dumps(res, indent=1)); Path(a.out + ".md").write_text(markdown(res))
  print(markdown(res))
  return 0

if __name__ == "__main__": sys.exit(main())
