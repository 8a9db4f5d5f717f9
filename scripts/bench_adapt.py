"""What the online correction (search/adapt.py) buys, measured offline on the GPU data: searches replayed on kernels whose configs
the store has measured, each kernel's configs scored by a cost model that never saw its network or op family.

Each held-out kernel is a pool of measured configs. A search measures the hand-coded config and the model's 8 best first (the
beam's first batch), then rounds of 6, until a budget of measurements; a policy picks each round's configs from the pool:
  model      the model's next best scores;
  corrected  the next best after search.adapt.Correction refits the scores on the configs measured so far (the beam's rule);
  knn        the model's scores plus its measured errors smoothed over feature space (knn_scores);
  random     uniform (the floor).
Reported per budget: best found / the pool's best (1.0: found it), geomean over kernels, and Kendall's tau of the policy's scores
with the unmeasured configs' times. The pool is what the store measured, not every config: the beam's tree (a round expands the
fastest measured configs) is not replayed, so this measures the ranking a round picks from, not the whole search.
  python scripts/bench_adapt.py dataset/data/cuda.sqlite --folds 4 --threads 1 --out results"""
from __future__ import annotations
import argparse, json, math, sys, time
from pathlib import Path
import numpy as np

POLICIES = ("model", "corrected", "random")   # corrected@A: the correction with ridge strength A (search.adapt.Correction's alpha)

def knn_scores(scores:np.ndarray, X:np.ndarray, times:np.ndarray, m:np.ndarray, lam:float=1.0) -> np.ndarray:
  """The model's scores mapped to -log(time) by a line fitted on the measured configs `m`, plus the measured residuals smoothed over
  feature space (an RBF of the standardized features, its width the median distance to the measured; `lam` shrinks it to 0 where
  no measured config is near): the model's errors are alike on similar configs."""
  y = -np.log(times[m])
  a, b = np.polyfit(scores[m], y, 1) if np.ptp(scores[m]) > 0 else (0.0, y.mean())
  fit = a*scores + b
  sd = X.std(0); Z = (X[:, sd > 0] - X[:, sd > 0].mean(0))/sd[sd > 0]
  d2 = ((Z[:, None, :] - Z[None, m, :])**2).mean(-1)
  w = np.exp(-d2/(2*np.median(d2[d2 > 0]) if (d2 > 0).any() else 1.0))
  return fit + (w @ (y - fit[m]))/(w.sum(1) + lam)

def group_folds(labels:np.ndarray, folds:int, seed:int) -> list[tuple[np.ndarray, np.ndarray]]:
  """Held out by whole label (a network, or an op family for the single ops): no kernel's network or family is in its training."""
  labs = np.unique(labels); np.random.default_rng(seed).shuffle(labs)
  fold_of = {l: i % folds for i, l in enumerate(labs)}
  f = np.array([fold_of[l] for l in labels])
  return [(f != i, f == i) for i in range(folds)]

def simulate(scores:np.ndarray, terms:np.ndarray, times:np.ndarray, hand:int|None, policy:str, budgets:list[int], rng:np.random.Generator,
             X:np.ndarray|None=None, first:int=8, k:int=6) -> dict[int, tuple[float, float]]:
  """{budget: (best found / pool best, tau of the policy's scores on the unmeasured configs before the round that crosses it)}."""
  from search.adapt import Correction, kendall
  n, best = len(times), times.min()
  measured: list[int] = [] if hand is None else [hand]
  order = np.argsort(-scores, kind="stable") if policy != "random" else rng.permutation(n)
  measured += [int(i) for i in order if i != hand][:first]
  out, tau = {}, math.nan
  while True:
    for b in budgets:
      if b not in out and len(measured) >= min(b, n): out[b] = (float(times[measured[:b]].min()/best), tau)
    if len(measured) >= min(max(budgets), n): break
    left = np.setdiff1d(np.arange(n), measured)
    if policy == "random": pick = rng.permutation(left)
    else:
      m = np.array(measured)
      alpha = float(policy.split("@")[1]) if "@" in policy else Correction().alpha
      s = (Correction(alpha).fit(scores[m], terms[m], times[m])(scores, terms) if policy.startswith("corrected") else
           knn_scores(scores, X, times, m) if policy == "knn" else scores)
      tau = kendall(s[left], -np.log(times[left]))
      pick = left[np.argsort(-s[left], kind="stable")]
    measured += [int(i) for i in pick[:k]]
  return out

def run(a) -> dict:
  from dataset.kernel import Kernel, opts_from_json, scheduler
  from dataset.sampler import replay
  from dataset.shard import resolve
  from dataset.store import Store
  from models.data import load, renderer
  from models.evaluate import run_splits
  from models.ranker import Ranker
  from search.adapt import shape_terms
  t0 = time.perf_counter()
  ds = load(a.dataset)
  labels = np.where(ds.network != "", ds.network, ds.family)
  scores = run_splits(lambda i, tr: Ranker(seed=a.seed, threads=a.threads), ds.X, ds.time_s, ds.kernel, group_folds(labels, a.folds, a.seed))
  print(f"scored {len(ds)} configs of {len(np.unique(ds.kernel))} kernels out of fold in {time.perf_counter() - t0:.0f} s", flush=True)
  s = Store(resolve(a.dataset).path, readonly=True)
  try: asts = {r["key"]: r["ast"] for r in s.kernels()}
  finally: s.close()
  ren, rng, budgets = renderer(ds.backend, ds.arch), np.random.default_rng(a.seed), sorted(a.budgets)
  per: dict[str, dict[int, list]] = {p: {b: [] for b in budgets} for p in a.policies}
  kernels = [k for k in np.unique(ds.kernel) if (ds.kernel == k).sum() >= a.min_configs]
  for ki, key in enumerate(kernels):
    rows = np.flatnonzero(ds.kernel == key)
    base = scheduler(Kernel.ast_from_blob(asts[key]), ren)
    ks = [replay(base, opts_from_json(json.loads(o))) for o in ds.opts[rows]]
    keep = np.array([x is not None for x in ks])
    rows, ks = rows[keep], [x for x in ks if x is not None]
    terms = np.array([shape_terms(x) for x in ks], np.float64)
    hand = next((i for i, r in enumerate(rows) if ds.source[r] == "hand"), None)
    for p in a.policies:
      for b, v in simulate(scores[rows], terms, ds.time_s[rows], hand, p, budgets, rng, ds.X[rows].astype(np.float64)).items(): per[p][b].append((labels[rows[0]], *v))
    if ki % 100 == 0: print(f"  {ki}/{len(kernels)} kernels", flush=True)
  geo = lambda xs: float(np.exp(np.mean(np.log(xs)))) if xs else math.nan
  res = {"dataset": a.dataset, "dataset_hash": ds.hash, "device": ds.device, "date": time.strftime("%Y-%m-%d"),
         "command": "python scripts/bench_adapt.py " + " ".join(a.argv), "kernels": len(kernels), "folds": a.folds,
         "minutes": round((time.perf_counter() - t0)/60, 1), "budgets": budgets, "policies": {}}
  for p in a.policies:
    res["policies"][p] = {str(b): {"found_vs_best": geo([v[1] for v in per[p][b]]),
                                   "found_best": float(np.mean([v[1] <= 1.0 + 1e-12 for v in per[p][b]])),
                                   "tau_unmeasured": float(np.nanmean([v[2] for v in per[p][b]])) if p != "random" and b > 9 else None,
                                   "by_label": {l: geo([v[1] for v in per[p][b] if v[0] == l]) for l in sorted({v[0] for v in per[p][b]})}}
                          for b in budgets}
  return res

def summary(res:dict, at:str="24") -> list[str]:
  """The result in a sentence: which policy finds the pool's best most often at `at` measurements, against the model's own order."""
  if at not in res["policies"]["model"]: at = str(res["budgets"][-1])
  share = {p: v[at]["found_best"] for p, v in res["policies"].items()}
  best = max(share, key=lambda p: (share[p], p == "model"))
  return [f"Result: at {at} measurements the model's own order finds the pool's best on {share['model']:.0%} of kernels; "
          + ("no correction does better (" if best == "model" else f"{best} does better, {share[best]:.0%} (")
          + ", ".join(f"{p} {v:.0%}" for p, v in share.items() if p != "model") + ")."]

def markdown(res:dict) -> str:
  b = [str(x) for x in res["budgets"]]
  lines = [f"# Online correction, replayed offline: {res['device']} data, {res['date']}", "", f"`{res['command']}`", "",
           f"Dataset `{res['dataset']}` (hash {res['dataset_hash'][:16]}): {res['kernels']} kernels, each scored by a LightGBM "
           f"ranker that never saw its network or op family ({res['folds']} folds by label); {res['minutes']} min on this machine. "
           "A policy picks each round's configs from the kernel's measured pool (method: the script's docstring).", "",
           *summary(res), "",
           "Best found / the pool's best runtime (geomean over kernels; 1.000 = found it, 1.05 = 5% slower), by measurements:", "",
           "| policy | " + " | ".join(b) + " |", "|---|" + "---:|"*len(b)]
  for p, v in res["policies"].items(): lines.append(f"| {p} | " + " | ".join(f"{v[x]['found_vs_best']:.3f}" for x in b) + " |")
  lines += ["",
            "Share of kernels whose pool best is found:", "", "| policy | " + " | ".join(b) + " |", "|---|" + "---:|"*len(b)]
  for p, v in res["policies"].items(): lines.append(f"| {p} | " + " | ".join(f"{v[x]['found_best']:.2f}" for x in b) + " |")
  lines += ["", "Kendall's tau of the policy's scores with the times of the configs not yet measured, before a round:", "",
            "| policy | " + " | ".join(x for x in b if int(x) > 9) + " |", "|---|" + "---:|"*sum(int(x) > 9 for x in b)]
  for p, v in res["policies"].items():
    if p != "random": lines.append(f"| {p} | " + " | ".join(f"{v[x]['tau_unmeasured']:.3f}" for x in b if int(x) > 9) + " |")
  last = b[-1]
  labs = sorted(res["policies"]["model"][last]["by_label"])
  lines += ["", f"Per held-out group at {last} measurements (found / pool best):", "", "| group | " + " | ".join(res["policies"]) + " |",
            "|---|" + "---:|"*len(res["policies"])]
  for l in labs: lines.append(f"| {l} | " + " | ".join(f"{res['policies'][p][last]['by_label'][l]:.3f}" for p in res["policies"]) + " |")
  if res.get("logs"): lines += ["", "Log: " + ", ".join(f"`{l}`" for l in res["logs"])]
  return "\n".join(lines) + "\n"

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("bench_adapt", description=__doc__.split("\n")[0])
  ap.add_argument("dataset")
  ap.add_argument("--folds", type=int, default=4)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--budgets", type=lambda s: [int(x) for x in s.split(",")], default=[9, 15, 21, 24, 33, 48])
  ap.add_argument("--min-configs", type=int, default=48, help="kernels with at least this many measured configs")
  ap.add_argument("--policies", type=lambda s: s.split(","), default=list(POLICIES), help="comma list of: model, corrected, "
                  "corrected@ALPHA, knn, random")
  ap.add_argument("--out", default="results")
  ap.add_argument("--replot", metavar="JSON", help="write the markdown of an existing result again and exit")
  a = ap.parse_args(argv)
  if a.replot: Path(a.replot).with_suffix(".md").write_text(markdown(json.loads(Path(a.replot).read_text()))); return 0
  a.argv = sys.argv[1:] if argv is None else argv
  out = Path(a.out)
  try: out.mkdir(parents=True, exist_ok=True); (out / ".w").touch(); (out / ".w").unlink()
  except OSError as e: print(f"bench_adapt: error: cannot write to {out}: {e}", file=sys.stderr); return 2
  res = run(a)
  (out / "adapt_offline.json").write_text(json.dumps(res, indent=1))
  (out / "adapt_offline.md").write_text(markdown(res))
  print(markdown(res))
  return 0

if __name__ == "__main__": sys.exit(main())
