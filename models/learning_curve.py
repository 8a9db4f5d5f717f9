"""train-cost-model --learning-curve: how the cost model's held-out accuracy grows with training data, and whether choosing the
measurements by the model's uncertainty (active learning) beats choosing them at random; with --against kernels, whether the same
measurements buy more spread over more kernels or over more configs of fewer kernels (what the next measurements should be). A
pool-based simulation on the measurements a store already holds: a strategy picks which of them the model may learn from, and no GPU
is needed.

For every fold of the kernel k-fold (models.evaluate.kernel_kfold: a held-out kernel is in no training selection) and every
fraction f of the fold's training rows, each training kernel gets the same row budget under both strategies, min(n, max(2, round(f*n)))
of its n rows (at least a pair to rank):
  random  the kernel's rows in a uniformly shuffled order, the first `budget` of them (nested: f's rows hold every smaller f's)
  active  the first START of that order, then rounds that grow each kernel's budget by GROWTH at a time up to f: a committee of
          rankers (different seeds, bagging and feature subsampling) fit on the labelled rows scores the pool (the training kernels'
          unlabelled rows), and each kernel labels the rows whose rank within the kernel the members disagree on most (std of the
          members' rank-normalized scores), TOP_SHARE of its new rows the committee's top-predicted instead: top-1 is decided among
          the fast configs, and a search measures those. One active run per fold goes up to the largest fraction below 1, and is
          evaluated where it crosses each fraction.
  kernels every row of a share f of the fold's training kernels (a shuffled order's first ceil(f*K); nested), so about the rows
          `random` has at f, on fewer kernels: its curve is what more kernels buy, at the rows' own rate per kernel.
At each (fold, fraction, strategy) the default ranker is fit on the selection and scored on the held-out kernels with the project's
metrics (models.evaluate). At f = 1 both strategies are every training row, one fit. The register-pressure model (models.resources)
is fit per fold on its training kernels' compile labels, all of them: those come from compiling, not from the GPU."""
from __future__ import annotations
import argparse, datetime, json, os, time
from pathlib import Path
from typing import Callable
import numpy as np
from dataset.kernel import TINYGRAD_VERSION
from models.data import Dataset
from models.evaluate import METRICS, average, kernel_kfold, per_kernel
from models.features import FEATURES, SCHEMA_VERSION
from models.heldout import resource_model
from models.ranker import Ranker
from models.resources import augment

FRACTIONS = (0.05, 0.1, 0.2, 0.4, 1.0)
START, GROWTH, TOP_SHARE, COMMITTEE = 0.02, 1.5, 0.3, 3
MEMBER = dict(bagging_fraction=0.7, feature_fraction=0.5)   # a member's own subsamples: the committee's spread is what disagrees
KEYS = ("device", "date", "command", "tinygrad", "feature_schema", "n_features", "dataset", "folds", "seeds", "fractions", "protocol",
        "curve", "paired", "wall_s", "notes")
LABELS = {"kendall_tau": "Kendall tau", "pairwise_acc": "pairwise acc", "top1_score": "top-1 score", "top5_score": "top-5 score"}

def budget(sizes:np.ndarray, f:float) -> np.ndarray:
  """Rows per kernel at fraction f: a share of its rows, at least a pair, at most all."""
  return np.minimum(sizes, np.maximum(2, np.round(f*sizes).astype(np.int64)))

def schedule(fractions:list[float], start:float=START, growth:float=GROWTH) -> list[float]:
  """The active run's labelled fractions: from `start`, steps of at most `growth` that land on every fraction in (start, 1)."""
  out, a = [start], start
  for b in sorted(f for f in fractions if start < f < 1):
    n = int(np.ceil(np.log(b/a)/np.log(growth) - 1e-9))
    out += [a*(b/a)**(i/n) for i in range(1, n)] + [b]
    a = b
  return out

def kernel_ranks(s:np.ndarray) -> np.ndarray:
  """(members, n) scores of one kernel's rows -> each member's rank of every row, 0 (slowest predicted) to 1 (fastest)."""
  n = s.shape[1]
  return np.argsort(np.argsort(s, axis=1, kind="stable"), axis=1, kind="stable")/max(n - 1, 1)

def pick(s:np.ndarray, need:int, top_share:float=TOP_SHARE) -> np.ndarray:
  """Positions of `need` of one kernel's unlabelled rows from the committee's (members, n) scores: round(top_share*need) of the
  highest mean rank, the rest of the highest rank std. Ties keep the given order (the caller's shuffle)."""
  if need >= s.shape[1]: return np.arange(s.shape[1])
  r = kernel_ranks(s)
  top = np.argsort(-r.mean(0), kind="stable")[:int(round(top_share*need))]
  rest = np.setdiff1d(np.arange(s.shape[1]), top)
  return np.concatenate([top, rest[np.argsort(-r[:, rest].std(0), kind="stable")[:need - len(top)]]])

def fit_score(X:np.ndarray, t:np.ndarray, kern:np.ndarray, rows:np.ndarray, te:np.ndarray, seed:int, threads:int, params:dict) -> dict:
  """The default ranker fit on `rows`, its per-kernel metrics on the test rows averaged over the test kernels."""
  s = Ranker(seed=seed, threads=threads, **params).fit(X[rows], t[rows], kern[rows]).predict(X[te])
  return average(per_kernel(s, t[te], kern[te]))

def active_run(X:np.ndarray, t:np.ndarray, kern:np.ndarray, order:list[np.ndarray], fractions:list[float], seed:int, threads:int,
               params:dict, committee:int=COMMITTEE, start:float=START, growth:float=GROWTH, top_share:float=TOP_SHARE,
               on_round:Callable[[np.ndarray, np.ndarray, int], None]|None=None):
  """Yields (fraction, labelled rows) at each fraction of `fractions` below 1. `order`: each training kernel's rows, shuffled (the
  start and the tie order). on_round(labelled rows before, picked rows, how many of them by top prediction) sees every round."""
  sizes = np.array([len(o) for o in order])
  lab = [o[:n] for o, n in zip(order, budget(sizes, start))]
  targets = set(f for f in fractions if f < 1)
  steps = schedule(fractions, start, growth)
  for nxt in steps[1:]:
    rows = np.concatenate(lab)
    if (budget(sizes, nxt) <= np.array([len(l) for l in lab])).all():   # no kernel grows this round: no committee to fit
      if nxt in targets: yield nxt, rows
      continue
    Xl = X[rows]
    members = [Ranker(seed=seed*100 + m, threads=threads, **{**params, **MEMBER}).fit(Xl, t[rows], kern[rows]) for m in range(committee)]
    have = set(rows.tolist())
    unl = [np.array([r for r in o if r not in have], np.int64) for o in order]
    pool = np.concatenate(unl)
    Xp = X[pool]
    S = np.stack([m.predict(Xp) for m in members]) if len(pool) else np.zeros((committee, 0))
    picked, ntop, at = [], 0, 0
    for k, (u, n) in enumerate(zip(unl, budget(sizes, nxt))):
      if (need := int(n) - len(lab[k])) > 0:
        picked.append(p := u[pick(S[:, at:at + len(u)], need, top_share)])
        lab[k] = np.concatenate([lab[k], p])
        ntop += int(round(top_share*need)) if need < len(u) else 0
      at += len(u)
    if on_round is not None: on_round(rows, np.concatenate(picked) if picked else np.zeros(0, np.int64), ntop)
    if nxt in targets: yield nxt, np.concatenate(lab)

def _spread(v:list[float]) -> dict: return {"mean": float(np.mean(v)), "std": float(np.std(v)), "runs": [float(x) for x in v]}

AGAINST = ("active", "kernels")

def kernel_share(order:list[np.ndarray], perm:np.ndarray, f:float) -> np.ndarray:
  """Every row of the first ceil(f*K) training kernels in the order `perm` (nested in f)."""
  return np.concatenate([order[k] for k in perm[:int(np.ceil(f*len(order) - 1e-9))]])

def learning_curve(ds:Dataset, fractions:tuple[float, ...]|list[float]=FRACTIONS, folds:int=5, seeds:tuple[int, ...]|list[int]=(0,), threads:int=1,
                   committee:int=COMMITTEE, params:dict|None=None, log:Callable[[str], None]=lambda s: None,
                   trace:list|None=None, against:str="active") -> dict:
  """`random` and `against` (active or kernels) at every fraction, on every fold of every seed's kernel k-fold. Returns {"curve":
  {strategy: [{fraction, rows, metric: {mean, std, runs}}]}, "paired": [{fraction, metric: against - random {mean, std, runs,
  wins}}], "protocol"}: runs are the (seed, fold) pairs, std their spread (ddof=0). `trace`, if given, gets every selection and
  every active round (the tests')."""
  assert against in AGAINST, against
  params, fractions = params or {}, sorted(fractions)
  X, t, kern = ds.X, ds.time_s, ds.kernel
  runs: dict[str, dict[float, list]] = {s: {f: [] for f in fractions} for s in ("random", against)}
  mix = {"top": 0, "disagreement": 0}   # the active rounds' picks by reason (a kernel that takes all its remaining rows counts as disagreement)
  for seed in seeds:
    for i, (tr, te) in enumerate(kernel_kfold(kern, folds, seed)):
      st = time.perf_counter()
      Xa = augment(X, resource_model(ds, tr, threads))
      rng = np.random.default_rng([seed, i])
      idx = np.flatnonzero(tr)
      _, inv = np.unique(kern[idx], return_inverse=True)
      order = [rng.permutation(g) for g in np.split(idx[np.argsort(inv, kind="stable")], np.cumsum(np.bincount(inv))[:-1])]
      sizes = np.array([len(o) for o in order])
      def record(strategy:str, f:float, rows:np.ndarray):
        m = fit_score(Xa, t, kern, rows, te, seed, threads, params)
        for s in (("random", against) if strategy == "both" else (strategy,)): runs[s][f].append({**m, "rows": len(rows)})
        if trace is not None: trace.append({"seed": seed, "fold": i, "strategy": strategy, "fraction": f, "rows": rows, "test": te})
        log(f"  seed {seed} fold {i} {strategy:<6} f={f:<5} rows={len(rows):<6} " + " ".join(f"{k}={v:.4f}" for k, v in m.items()) +
            f"  ({time.perf_counter()-st:.0f} s)")
      for f in fractions:
        record("both" if f >= 1 else "random", f, np.concatenate([o[:n] for o, n in zip(order, budget(sizes, f))]))
      def on_round(before:np.ndarray, got:np.ndarray, ntop:int):
        mix["top"] += ntop; mix["disagreement"] += len(got) - ntop
        if trace is not None: trace.append({"seed": seed, "fold": i, "strategy": "round", "before": before, "picked": got, "train": tr, "test": te})
      if against == "kernels":
        perm = rng.permutation(len(order))
        for f in (f for f in fractions if f < 1): record("kernels", f, kernel_share(order, perm, f))
      else:
        for f, rows in active_run(Xa, t, kern, order, fractions, seed, threads, params, committee, on_round=on_round): record("active", f, rows)
  curve = {s: [{"fraction": f, "rows": _spread([r["rows"] for r in v]), **{m: _spread([r[m] for r in v]) for m in METRICS}}
               for f, v in runs[s].items()] for s in runs}
  paired = []
  for f in fractions:
    if f >= 1: continue
    d = {m: [a[m] - r[m] for a, r in zip(runs[against][f], runs["random"][f])] for m in METRICS}
    paired.append({"fraction": f, **{m: {**_spread(v), "wins": int(sum(x > 0 for x in v))} for m, v in d.items()}})
  protocol = {"against": against, "start": START, "growth": GROWTH, "top_share": TOP_SHARE, "committee": committee, "member_params": MEMBER,
              "schedule": schedule(fractions), "picked": mix, "ranker_params": {**Ranker.DEFAULTS, **params}, "resource_model": ds.regs is not None}
  return {"curve": curve, "paired": paired, "protocol": protocol}

# *** train-cost-model --learning-curve: the run and its results ***

def results_name(a:argparse.Namespace, ds:Dataset) -> str:
  base = "learning_curve" + ("_kernels" if a.against == "kernels" else "")
  return a.results_name or (base if ds.backend == "CUDA" else f"{base}_{ds.backend.lower()}")
def outputs(a:argparse.Namespace, ds:Dataset) -> list[Path]: return [Path(a.results)/f"{results_name(a, ds)}.{e}" for e in ("json", "md", "png")]

def run(a:argparse.Namespace, ds:Dataset, command:str, threads:int, log:Callable[[str], None]) -> dict:
  """The learning curve of `ds` as train-cost-model's arguments `a` ask, written to a.results (whose writability the caller checked)."""
  name = results_name(a, ds)
  seeds = list(range(a.seeds))
  log(f"learning curve: kernel-held-out {a.folds}-fold, seeds {seeds}, fractions {a.fractions}, random against {a.against}, {threads} threads")
  st = time.perf_counter()
  res = learning_curve(ds, a.fractions, a.folds, seeds, threads, a.committee, log=log, against=a.against)
  other = {"active": "Each training kernel gets the same rows at a fraction f under both strategies: min(n, max(2, round(f*n))).",
           "kernels": "kernels: every row of a share f of the training kernels (ceil(f*K), a shuffled order's first, nested in f); random: "
                      "min(n, max(2, round(f*n))) rows of every training kernel. The two hold about the same rows at each f."}[a.against]
  out = {"device": f"{ds.device} ({ds.arch})", "date": datetime.date.today().isoformat(), "command": command, "tinygrad": TINYGRAD_VERSION,
         "feature_schema": SCHEMA_VERSION, "n_features": len(FEATURES),
         "dataset": {"path": str(a.dataset), "shards": ds.shards, "hash": ds.hash, "rows": len(ds), "kernels": int(len(np.unique(ds.kernel)))},
         "folds": a.folds, "seeds": seeds, "fractions": a.fractions, **res, "wall_s": round(time.perf_counter() - st, 1),
         "notes": [f"Splits are by kernel (AST key): kernels shuffled into {a.folds} folds per seed; a held-out kernel is in no training selection.",
                   other,
                   "Metrics are per held-out kernel over all its measured configs, averaged over the fold's held-out kernels; mean and std "
                   f"(ddof=0) over the (seed, fold) runs. paired: {a.against} - random in the same run; wins: runs where {a.against} is higher.",
                   "The model evaluated is the default ranker (no tuning), the same for both strategies" +
                   ("; the committee only chooses rows." if a.against == "active" else "."),
                   "At fraction 1 both strategies are every training row (one fit, listed under both)."]}
  rd = Path(a.results)
  (rd/f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
  write_markdown(rd/f"{name}.md", out)
  plot(out, rd/f"{name}.png")
  log(f"wrote {rd}/{name}.json, {name}.md, {name}.png ({out['wall_s']:.0f} s)")
  return out

def _pm(s:dict, digits:int=3) -> str: return f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f}"

def _against(res:dict) -> str: return res["protocol"].get("against", "active")

def verdict(res:dict) -> str:
  """The result in words, from the paired differences: where the other strategy is higher in every run, lower in every run, or neither."""
  o = _against(res)
  n = len(res["curve"]["random"][0]["kendall_tau"]["runs"])
  parts = []
  for m in METRICS:
    up = [p["fraction"] for p in res["paired"] if p[m]["wins"] == n]
    down = [p["fraction"] for p in res["paired"] if p[m]["wins"] == 0 and max(p[m]["runs"]) < 0]
    d = [p[m]["mean"] for p in res["paired"]]
    where = [f"higher in all {n} runs at f = {', '.join(map(str, up))}"]*bool(up) + [f"lower in all {n} runs at f = {', '.join(map(str, down))}"]*bool(down)
    parts.append(f"{LABELS[m]} {' and '.join(where) or f'neither higher nor lower in all {n} runs at any f'} (mean {min(d):+.4f} to {max(d):+.4f})")
  r = {p["fraction"]: p for p in res["curve"]["random"]}
  lo, hi = r[min(r)], r[max(r)]
  return (f"Random choice: Kendall tau goes from {lo['kendall_tau']['mean']:.3f} at f = {min(r)} ({lo['rows']['mean']:.0f} rows) to "
          f"{hi['kendall_tau']['mean']:.3f} at f = {max(r)} ({hi['rows']['mean']:.0f} rows), top-1 from {lo['top1_score']['mean']:.3f} to "
          f"{hi['top1_score']['mean']:.3f}. " + ("Active against random on the same rows per kernel" if o == "active" else
          "A share of the kernels with all their rows against every kernel with that share of its rows") + ", run by run: " + "; ".join(parts) + ".")

def write_markdown(path:Path, res:dict):
  data = " + ".join(f"`{x}`" for x in [res["dataset"]["path"], *res["dataset"].get("shards", [])])
  p, o = res["protocol"], _against(res)
  lines = [f"# Learning curve and {'active learning' if o == 'active' else 'more kernels against more rows per kernel'}: {res['device']}", "",
           f"Date: {res['date']}. Dataset: {data} (sha256 of its measurements `{res['dataset']['hash'][:16]}`, {res['dataset']['rows']} ok "
           f"measurements over {res['dataset']['kernels']} kernels), tinygrad {res['tinygrad']}, feature schema v{res['feature_schema']} "
           f"({res['n_features']} features). Wall time {res['wall_s']/60:.0f} min.", "",
           "Reproduce with:", "", "```", res["command"], "```", "",
           f"## Kernel-held-out: group {res['folds']}-fold by kernel, seeds {res['seeds']} (mean ± spread over the {len(res['seeds'])*res['folds']} "
           "(seed, fold) runs)", "",
           ("A fraction f is f of each training kernel's measured rows (at least 2); both strategies label the same rows per kernel. "
            if o == "active" else "A fraction f is f of each training kernel's measured rows (random) or every row of f of the training kernels (kernels). ") +
           "Metrics are per held-out kernel, averaged over kernels (models.evaluate; top-k score as in TenSet).", "",
           "| f | rows | strategy | Kendall tau | pairwise acc | top-1 score | top-5 score |", "|---|---|---|---|---|---|---|"]
  for r, a in zip(res["curve"]["random"], res["curve"][o]):
    for s, v in (("random", r), (o, a)) if r["fraction"] < 1 else (("both (every row)", r),):
      lines.append(f"| {v['fraction']} | {v['rows']['mean']:.0f} | {s} | " + " | ".join(_pm(v[m]) for m in METRICS) + " |")
  n = len(res["seeds"])*res["folds"]
  lines += ["", f"## {o.capitalize()} - random, paired by run (mean ± spread; wins: runs of {n} where {o} is higher)", "",
            "| f | Kendall tau | pairwise acc | top-1 score | top-5 score |", "|---|---|---|---|---|"]
  for q in res["paired"]:
    lines.append(f"| {q['fraction']} | " + " | ".join(f"{q[m]['mean']:+.4f} ± {q[m]['std']:.4f} ({q[m]['wins']}/{n})" for m in METRICS) + " |")
  lines += ["", "## Result", "", verdict(res), "", "## Protocol", ""] + [
            f"- Active: start at f = {p['start']} of each kernel's rows (the random order's first rows), then rounds to the fractions "
            f"{', '.join(f'{x:.3g}' for x in p['schedule'])} (steps of at most x{p['growth']}). Each round fits a committee of {p['committee']} "
            f"default rankers (seeds differ; {', '.join(f'{k} {v}' for k, v in p['member_params'].items())}) on the labelled rows, scores the "
            f"training kernels' unlabelled rows, and labels per kernel {p['top_share']:.0%} of its new rows by the committee's mean "
            f"rank (top-predicted) and {1-p['top_share']:.0%} by the std of the members' ranks (disagreement), rounded per kernel: over all "
            f"rounds {p['picked']['top']} rows by top prediction and {p['picked']['disagreement']} by disagreement."]*(o == "active") + [
            f"- Register-pressure model: {'fit per fold on its training kernels, all their compile labels (no GPU needed for those)' if p['resource_model'] else 'none (no compile labels)'}.",
            *[f"- {x}" for x in res["notes"]], ""]
  path.write_text("\n".join(lines))

def plot(res:dict, path:Path):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  from matplotlib.ticker import NullFormatter
  fig, axs = plt.subplots(1, len(METRICS), figsize=(16, 4.2))
  for ax, m in zip(axs, METRICS):
    for s, c in (("random", "tab:blue"), (_against(res), "tab:orange")):
      v = res["curve"][s]
      ax.errorbar([x["rows"]["mean"] for x in v], [x[m]["mean"] for x in v], yerr=[x[m]["std"] for x in v], marker="o", ms=4,
                  capsize=3, color=c, label=s)
    ax.set_xscale("log"); ax.set_xlabel("training rows (measurements)"); ax.set_title(LABELS[m]); ax.grid(alpha=0.3)
    ax.xaxis.set_minor_formatter(NullFormatter())   # the log axis' own labels overlap or go missing: label the measured sizes
    ax.set_xticks(rs := [x["rows"]["mean"] for x in res["curve"]["random"]], [f"{r/1000:.1f}k" if r < 1e4 else f"{r/1000:.0f}k" for r in rs], fontsize=8)
    for x in res["curve"]["random"]: ax.annotate(f"{x['fraction']:g}", (x["rows"]["mean"], x[m]["mean"]), fontsize=7, xytext=(3, -10), textcoords="offset points")
  axs[0].legend()
  fig.suptitle(f"Held-out accuracy vs training rows, {res['device']}, kernel {res['folds']}-fold, seeds {res['seeds']} "
               f"(bars: spread over the runs; labels: fraction f)")
  fig.tight_layout(); fig.savefig(path, dpi=120); plt.close(fig)
