"""Held-out evaluation: grouped splits (never random rows) and per-kernel ranking metrics, averaged over kernels.

Metrics of one kernel, from the scores a model gave its measured configs (higher = predicted faster):
  kendall_tau    Kendall's tau-b between score and -runtime
  pairwise_acc   share of config pairs with different runtimes that the scores order correctly (score ties count half)
  top1_score     best runtime / runtime of the top-scored config                    (TenSet's top-k score)
  top5_score     best runtime / best runtime among the 5 top-scored configs
References on the same kernels: tinygrad's hand-coded choice as the only pick (its top-1 and top-5 score are best/hand time; a
single pick has no tau), and a uniformly random ranking."""
from __future__ import annotations
from typing import Callable, Iterator
import numpy as np
from scipy.stats import kendalltau

METRICS = ("kendall_tau", "pairwise_acc", "top1_score", "top5_score")

def kernel_metrics(score:np.ndarray, t:np.ndarray) -> dict[str, float]:
  best = t.min()
  order = np.argsort(-score, kind="stable")
  dt, ds = np.sign(t[:, None] - t[None, :]), np.sign(score[None, :] - score[:, None])   # dt>0: i slower; ds>0: j scored higher than i
  pairs = np.triu(dt != 0, 1)
  agree = np.where(ds == 0, 0.5, (dt == ds).astype(np.float64))
  tau = kendalltau(score, -t).statistic if len(t) > 1 else np.nan
  return {"kendall_tau": float(0.0 if np.isnan(tau) else tau), "pairwise_acc": float(agree[pairs].mean()) if pairs.any() else np.nan,
          "top1_score": float(best/t[order[0]]), "top5_score": float(best/t[order[:5]].min())}

def per_kernel(score:np.ndarray, t:np.ndarray, kernel:np.ndarray) -> dict[str, dict[str, float]]:
  return {k: kernel_metrics(score[m], t[m]) for k in np.unique(kernel) if (m := kernel == k).sum() >= 2}

def average(pk:dict[str, dict[str, float]]) -> dict[str, float]:
  return {m: float(np.nanmean([v[m] for v in pk.values()])) for m in METRICS} if pk else {m: float("nan") for m in METRICS}

def hand_reference(t:np.ndarray, kernel:np.ndarray, source:np.ndarray) -> dict[str, dict[str, float]]:
  """Per kernel with a hand-coded measurement: best / hand-coded time (its top-1 = top-5 score), and the share of the kernel's
  configs the hand-coded choice beats."""
  out = {}
  for k in np.unique(kernel):
    m = kernel == k
    if m.sum() < 2 or not (h := m & (source == "hand")).any(): continue
    th = t[h].min()
    out[k] = {"top1_score": float(t[m].min()/th), "top5_score": float(t[m].min()/th), "percentile": float((t[m] > th).mean())}
  return out

def step_accuracy(score:np.ndarray, t:np.ndarray, kernel:np.ndarray, opts:np.ndarray, noise:float=0.03, level:float=1.1) -> dict[str, dict[str, float]]:
  """Per opt type: over the measured configs whose parent (the same opts less the last) is measured on the same kernel, with times
  more than `noise` apart (in log), the share of (parent, child) pairs the scores order right ("right"), the share where they favour
  the child ("child_up": the step a model-guided descent takes), and of those the share slower in fact ("up_slower"); "pairs" counts
  them. A type whose steps the model orders at chance steers a descent by noise, however good its ranking over whole configs. From
  the times alone: the share of children faster ("faster") and the share of steps that move the time by less than a factor `level`
  ("within_level": the ranker's relevance step, models.ranker's label_base, so its loss barely sees them)."""
  import json
  canon = [json.loads(o) for o in opts.tolist()]
  row = {(k, json.dumps(o)): i for i, (k, o) in enumerate(zip(kernel.tolist(), canon))}
  acc: dict[str, list[tuple[bool, bool, bool, bool]]] = {}   # (ordered right, scored up, faster, within a level)
  for i, (k, o) in enumerate(zip(kernel.tolist(), canon)):
    if not o or (j := row.get((k, json.dumps(o[:-1])))) is None or abs(np.log(t[j]/t[i])) <= noise: continue
    up = bool(score[i] > score[j])
    acc.setdefault(str(o[-1][0]), []).append((up == bool(t[i] < t[j]), up, bool(t[i] < t[j]), abs(np.log(t[i]/t[j])) < np.log(level)))
  return {op: {"pairs": len(v), "right": float(np.mean([x[0] for x in v])), "child_up": float(np.mean([x[1] for x in v])),
               "up_slower": float(np.mean([not x[0] for x in v if x[1]])) if any(x[1] for x in v) else float("nan"),
               "faster": float(np.mean([x[2] for x in v])), "within_level": float(np.mean([x[3] for x in v]))} for op, v in sorted(acc.items())}

def steps_by_tc(score:np.ndarray, t:np.ndarray, kernel:np.ndarray, opts:np.ndarray, **kw) -> dict[str, dict[str, dict[str, float]]]:
  """step_accuracy among the configs that use a tensor core ("tc") and among those that do not ("no_tc"): a step's parent and child
  are on one side (the TC step itself is in neither). On held-out H200 stores an UNROLL after TC is scored up and is mostly slower,
  where without TC the model orders UNROLL steps better than chance (results/model_steps_heldout_sm_90.json)."""
  import json
  tc = np.array([any(o[0] == "TC" for o in json.loads(x)) for x in opts.tolist()], dtype=bool)
  return {n: step_accuracy(score[m], t[m], kernel[m], opts[m], **kw) for n, m in (("tc", tc), ("no_tc", ~tc))}

def random_scores(n:int, seed:int) -> np.ndarray: return np.random.default_rng(seed).random(n)

# *** splits: arrays of row masks (train, test), grouped by kernel ***

def kernel_kfold(kernel:np.ndarray, folds:int, seed:int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
  """Group k-fold over kernels: every config of a kernel is on the same side; kernels are shuffled into folds by `seed`."""
  ks = np.unique(kernel)
  np.random.default_rng(seed).shuffle(ks)
  fold_of = {k: i % folds for i, k in enumerate(ks)}
  f = np.array([fold_of[k] for k in kernel])
  for i in range(folds): yield f != i, f == i

def leave_one_out(labels:np.ndarray) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
  """One split per distinct non-empty label (network or op family): train on every other kernel, test on this label's kernels."""
  for lab in sorted(set(labels.tolist()) - {""}): yield lab, labels != lab, labels == lab

def cross_predict(fit_predict:Callable[[np.ndarray, np.ndarray], np.ndarray], splits) -> np.ndarray:
  """Out-of-split scores for every row that some split tests. fit_predict(train_mask, test_mask) -> scores of the test rows."""
  out = None
  for tr, te in splits:
    s = fit_predict(tr, te)
    if out is None: out = np.full(len(tr), np.nan)
    out[te] = s
  return out

# *** running the models over splits ***

def summarize(per_seed:list[dict[str, float]]) -> dict[str, dict[str, float]]:
  """{metric: {"mean", "std", "seeds": [...]}} over seeds (std with ddof=0: the spread of the seeds run, not an estimate)."""
  return {m: {"mean": float(np.mean([s[m] for s in per_seed])), "std": float(np.std([s[m] for s in per_seed])),
              "seeds": [float(s[m]) for s in per_seed]} for m in per_seed[0]}

def fit_predict(make, X:np.ndarray, t:np.ndarray, kernel:np.ndarray, tr:np.ndarray, te:np.ndarray) -> np.ndarray:
  return make().fit(X[tr], t[tr], kernel[tr]).predict(X[te])

def run_splits(make, X:np.ndarray, t:np.ndarray, kernel:np.ndarray, splits) -> np.ndarray:
  """Out-of-split scores. `make(i, train_mask)` builds a fresh estimator for split i (so tuning can see the training rows only)."""
  out = np.full(len(t), np.nan)
  for i, (tr, te) in enumerate(splits): out[te] = fit_predict(lambda: make(i, tr), X, t, kernel, tr, te)
  return out

def out_of_fold(make, ds, folds:int=5, seed:int=0, rows:np.ndarray|None=None) -> np.ndarray:
  """Every row of dataset `ds` scored by a fresh `make()` fitted on the other folds' kernels (kernel_kfold); `rows` (a mask), if
  given, limits what each fold trains on."""
  splits = [(tr if rows is None else tr & rows, te) for tr, te in kernel_kfold(ds.kernel, folds, seed)]
  return run_splits(lambda i, tr: make(), ds.X, ds.time_s, ds.kernel, splits)

def group_metrics(score:np.ndarray, t:np.ndarray, kernel:np.ndarray, labels:np.ndarray, source:np.ndarray|None=None) -> dict:
  """Per-kernel metrics averaged within each label (family or network), and over all kernels; with the references."""
  pk = per_kernel(score, t, kernel)
  lab = dict(zip(kernel.tolist(), labels.tolist()))
  out = {"all": average(pk), "by_label": {}}
  for g in sorted(set(lab[k] for k in pk)):
    out["by_label"][g] = {**average({k: v for k, v in pk.items() if lab[k] == g}), "kernels": sum(lab[k] == g for k in pk)}
  return out
