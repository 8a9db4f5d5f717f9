"""The held-out evaluations of train-cost-model --evaluate: every model on the kernel-grouped k-fold (the ranker's parameters from
nested studies), leave one label (network or op family) out, and the feature-group ablation. Splits are by kernel, never by row."""
from __future__ import annotations
import time
from typing import Callable
import numpy as np
from models.data import Dataset
from models.features import FEATURES, FEATURE_GROUPS, SCHEMA_VERSION
from models.evaluate import kernel_kfold, leave_one_out, per_kernel, average, hand_reference, run_splits, summarize, group_metrics, step_accuracy
from models.ranker import Ranker
from models.baselines import Regressor, RandomRanker
from models.mlp import MLPRanker
from models.blend import Blend, WEIGHT
from models.tune import tune
from models.resources import ResourceModel, WithResources, augment

def study_name(ds:Dataset, what:str) -> str: return f"ranker-{ds.hash[:12]}-v{SCHEMA_VERSION}-{what}"

def resource_model(ds:Dataset, rows:np.ndarray, threads:int) -> ResourceModel|None:
  """The register-pressure model fit on the compile labels of `rows` (a split's training side), or None if the store has none."""
  if ds.regs is None: return None
  return ResourceModel(threads=threads).fit(ds.X[rows], ds.regs[rows], ds.frame[rows])

BLEND_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)

def kfold_eval(ds:Dataset, seeds:list[int], folds:int, trials:int, storage:str, threads:int, with_mlp:bool,
               blend_weight:float=WEIGHT, log:Callable[[str], None]=lambda s: None) -> tuple[dict, dict]:
  """Every model on the kernel-grouped k-fold of every seed. The ranker's parameters come from a study on each fold's training
  rows (nested; defaults when trials=0). "blend" is the ranker + MLP blend at `blend_weight`; "blend_by_weight" the same fits
  blended at each weight of BLEND_SWEEP (what the weight trades). Returns the summary and seed 0's out-of-fold scores (for plots)."""
  X, t, kern = ds.X, ds.time_s, ds.kernel
  per: dict[str, list] = {m: [] for m in ("ranker", "regressor", "mlp", "blend", "random") if m not in ("mlp", "blend") or with_mlp}
  fam: dict[str, list] = {m: [] for m in per}
  oof: dict = {"time_s": t, "kernel": kern}
  tuned, sweep = [], {w: [] for w in BLEND_SWEEP}
  for seed in seeds:
    splits = list(kernel_kfold(kern, folds, seed))
    rms = [resource_model(ds, tr, threads) for tr, _ in splits]   # one per split, from its training kernels only; every model sees it
    def make_ranker(i, tr):
      p = tune(augment(X[tr], rms[i]), t[tr], kern[tr], trials, study_name(ds, f"kfold{folds}-s{seed}-f{i}"), storage, seed, threads=threads)
      tuned.append({"seed": seed, "fold": i, **p})
      return WithResources(Ranker(seed=seed, threads=threads, **p), rms[i])
    makers = {"ranker": make_ranker, "regressor": lambda i, tr: WithResources(Regressor(seed=seed, threads=threads), rms[i]),
              "mlp": lambda i, tr: WithResources(MLPRanker(seed=seed, threads=threads), rms[i]), "random": lambda i, tr: RandomRanker(seed=seed*100 + i)}
    scores, secs = {}, {}
    if with_mlp:   # one fit of the ranker and of the MLP per split scores the ranker, the MLP and their blend
      st = time.perf_counter()
      scores = {m: np.full(len(t), np.nan) for m in ("ranker", "mlp", "blend")}
      by_w = {w: np.full(len(t), np.nan) for w in BLEND_SWEEP}
      for i, (tr, te) in enumerate(splits):
        b = Blend(make_ranker(i, tr), makers["mlp"](i, tr), blend_weight).fit(X[tr], t[tr], kern[tr])
        for m, s in b.parts(X[te]).items(): scores[m][te] = s
        for w in BLEND_SWEEP: by_w[w][te] = Blend(b.ranker, b.mlp, w, b.scales).combine(scores["ranker"][te], scores["mlp"][te])
      secs = dict.fromkeys(scores, time.perf_counter() - st)
      for w, s in by_w.items():
        sweep[w].append(average(per_kernel(s, t, kern)))
        log(f"  seed {seed} blend w={w:.1f} " + " ".join(f"{k}={v:.4f}" for k, v in sweep[w][-1].items()))
    for m in per:
      st = time.perf_counter()
      s = scores[m] if m in scores else run_splits(makers[m], X, t, kern, splits)
      g = group_metrics(s, t, kern, ds.family)
      per[m].append(g["all"]); fam[m].append(g["by_label"])
      log(f"  seed {seed} {m:<9} " + " ".join(f"{k}={v:.4f}" for k, v in g["all"].items()) + f"  ({secs.get(m, time.perf_counter()-st):.0f} s)")
      if seed == seeds[0]: oof[m] = s
    if seed == seeds[0]: oof["regressor_log_time"] = -oof["regressor"]   # the regressor's score is its negated log-runtime prediction
  out: dict = {m: summarize(v) for m, v in per.items()}
  for m, v in fam.items():
    out[f"{m}_by_family"] = {f: {**summarize([s[f] for s in v]), "kernels": v[0][f]["kernels"]} for f in v[0]}
  out["ranker_params"] = tuned
  # seed 0's out-of-fold scores on single steps (parent -> child): what a model-guided descent acts on
  out["steps"] = {m: step_accuracy(oof[m], t, kern, ds.opts) for m in per if m in oof}
  if with_mlp: out["blend_weight"], out["blend_by_weight"] = blend_weight, {str(w): summarize(v) for w, v in sweep.items()}
  return out, oof

def holdout_eval(ds:Dataset, labels:np.ndarray, seeds:list[int], threads:int) -> dict:
  """Leave one label (network or op family) out at a time: train on every other kernel, test on that label's kernels. Default
  ranker parameters (tuning per held-out label would need a study for each). Per-kernel metrics, averaged per label and pooled."""
  X, t, kern = ds.X, ds.time_s, ds.kernel
  splits = [(tr, te) for _, tr, te in leave_one_out(labels)]
  held = np.zeros(len(t), bool)
  for _, te in splits: held |= te
  rms = [resource_model(ds, tr, threads) for tr, _ in splits]
  runs, rand = [], []
  for seed in seeds:
    s = run_splits(lambda i, tr: WithResources(Ranker(seed=seed, threads=threads), rms[i]), X, t, kern, splits)
    runs.append(group_metrics(s[held], t[held], kern[held], labels[held]))
    r = RandomRanker(seed).predict(X)
    rand.append(group_metrics(r[held], t[held], kern[held], labels[held]))
  hand = hand_reference(t[held], kern[held], ds.source[held])
  lab = dict(zip(kern.tolist(), labels.tolist()))
  out = {"all": {**summarize([r["all"] for r in runs]), "kernels": int(len(np.unique(kern[held])))}, "by_label": {}, "random_by_label": {},
         "hand_by_label": {}, "random_all": summarize([r["all"] for r in rand])}
  for g in runs[0]["by_label"]:
    out["by_label"][g] = {**summarize([r["by_label"][g] for r in runs]), "kernels": runs[0]["by_label"][g]["kernels"]}
    out["random_by_label"][g] = summarize([r["by_label"][g] for r in rand])
    hk = {k: v for k, v in hand.items() if lab[k] == g}
    if hk: out["hand_by_label"][g] = {m: float(np.mean([v[m] for v in hk.values()])) for m in ("top1_score", "top5_score", "percentile")}
  return out

def ablation(ds:Dataset, seeds:list[int], folds:int, threads:int, log:Callable[[str], None]=lambda s: None) -> dict:
  """Kernel-held-out ranker metrics with each feature group dropped in turn (default parameters, no resource model): what each
  group contributes."""
  out = {}
  for g, cols in [("all", [])] + [(f"without {g}", c) for g, c in FEATURE_GROUPS.items()]:
    keep = np.array([f not in set(cols) for f in FEATURES])
    per = []
    for seed in seeds:
      s = run_splits(lambda i, tr: Ranker(seed=seed, threads=threads), ds.X[:, keep], ds.time_s, ds.kernel, list(kernel_kfold(ds.kernel, folds, seed)))
      per.append(average(per_kernel(s, ds.time_s, ds.kernel)))
    out[g] = {**summarize(per), "n_features": int(keep.sum())}
    log(f"  ablation {g:<24} " + " ".join(f"{k}={v['mean']:.4f}" for k, v in out[g].items() if isinstance(v, dict)))
  return out
