"""Writing an evaluation out: results/NAME.json (every number), results/NAME.md (the table), and two plots: predicted vs measured,
and Kendall tau per family."""
from __future__ import annotations
import argparse, datetime, json, os
from pathlib import Path
from typing import Callable
import numpy as np
from dataset.kernel import TINYGRAD_VERSION
from dataset.stats import stats
from models.data import Dataset
from models.features import FEATURES, SCHEMA_VERSION
from models.evaluate import hand_reference, METRICS
from models.ranker import kernel_best
from models.speed import GPU_LOG, compile_rate

TARGETS = {"kendall_tau": 0.75, "pairwise_acc": 0.85, "top1_score": 0.90, "top5_score": 0.97}
MODEL_LABELS = {"ranker": "LightGBM LambdaRank (main)", "regressor": "LightGBM regressor of log runtime (baseline)",
                "mlp": "torch MLP, ListNet (challenger)", "blend": "ranker + MLP blend, fixed scales (models.blend)",
                "random": "random ranking (reference)"}

def _pm(s:dict|None, key:str, digits:int=3) -> str:
  if s is None or key not in s: return "n/a"
  v = s[key]
  return f"{v['mean']:.{digits}f} ± {v['std']:.{digits}f}" if isinstance(v, dict) else f"{v:.{digits}f}"

def write_json(path:Path, res:dict): path.write_text(json.dumps(res, indent=1) + "\n")

def write_markdown(path:Path, res:dict):
  kf = res["kfold"]
  data = " + ".join(f"`{x}`" for x in [res["dataset"]["path"], *res["dataset"].get("shards", [])])   # the base and its shards read
  lines = [f"# Cost model evaluation: {res['device']}", "",
           f"Date: {res['date']}. Dataset: {data} (sha256 of its measurements `{res['dataset']['hash'][:16]}`, "
           f"{res['dataset']['rows']} ok measurements over {res['dataset']['kernels']} kernels), tinygrad {res['tinygrad']}, "
           f"feature schema v{res['feature_schema']} ({res['n_features']} features).", "",
           "Reproduce with:", "", "```", res["command"], "```", "",
           f"## Kernel-held-out: group {res['folds']}-fold by kernel, {res['seeds']} seeds (mean ± spread over seeds)", "",
           "Metrics are computed per held-out kernel over its measured configs, then averaged over kernels. "
           "top-k score = best measured time / best time among the model's top-k picks (TenSet).", "",
           "| model | Kendall tau | pairwise acc | top-1 score | top-5 score |", "|---|---|---|---|---|"]
  for m in ("ranker", "regressor", "mlp", "blend", "random"):
    label = MODEL_LABELS[m] + (f", ranker weight {kf['blend_weight']}" if m == "blend" and "blend_weight" in kf else "")
    if m in kf: lines.append(f"| {label} | {_pm(kf[m], 'kendall_tau')} | {_pm(kf[m], 'pairwise_acc')} | "
                             f"{_pm(kf[m], 'top1_score')} | {_pm(kf[m], 'top5_score')} |")
  h = res["hand_coded"]
  if "blend_by_weight" in kf:
    lines += ["| (blend at the ranker's weight w, same fits) | | | | |"]
    lines += [f"| w = {w} | {_pm(v, 'kendall_tau')} | {_pm(v, 'pairwise_acc')} | {_pm(v, 'top1_score')} | {_pm(v, 'top5_score')} |"
              for w, v in kf["blend_by_weight"].items()]
  lines += [f"| tinygrad hand-coded choice (reference, one pick) | n/a | n/a | {h['top1_score']:.3f} | {h['top5_score']:.3f} |", "",
            f"The hand-coded choice is a single config, so it has no ranking (tau, pairwise); it beats {h['percentile']:.1%} of its "
            f"kernel's measured configs on average ({h['kernels']} kernels have one).", "",
            f"Targets (issue): tau >= 0.75, pairwise >= 0.85, top-1 >= 0.90, top-5 >= 0.97. "
            f"Met: {', '.join(f'{k} {v}' for k, v in res['targets_met'].items())}.", ""]
  if steps := kf.get("steps"):
    ops = sorted({op for v in steps.values() for op in v})
    lines += ["## Single steps (seed 0, out of fold)", "",
              "Measured (parent, child) pairs, the child one opt more, times over 3% apart: the share each model orders right, and of the "
              "steps it scores up (what a model-guided descent takes), the share slower in fact.", "",
              "| model | " + " | ".join(f"{op}: right / up slower" for op in ops) + " |", "|---|" + "---|"*len(ops)]
    lines += [f"| {MODEL_LABELS[m]} | " + " | ".join(f"{v[op]['right']:.2f} / {v[op]['up_slower']:.2f} ({v[op]['pairs']})" if op in v else "-"
              for op in ops) + " |" for m, v in steps.items()]
    first = next(iter(steps.values()))   # the times alone, the same for every model
    lines += ["| (measured: child faster / within one relevance level) | " + " | ".join(f"{first[op]['faster']:.2f} / {first[op]['within_level']:.2f}"
              if op in first and "faster" in first[op] else "-" for op in ops) + " |", ""]
  for split, title in (("lono", "Leave-one-network-out"), ("lofo", "Leave-one-family-out (op families)")):
    s = res[split]
    lines += [f"## {title} (default ranker parameters, {res['seeds']} seeds)", "",
              "| held out | kernels | Kendall tau | pairwise acc | top-1 score | top-5 score | random top-1 | hand-coded top-1 |",
              "|---|---|---|---|---|---|---|---|"]
    for g, v in s["by_label"].items():
      lines.append(f"| {g} | {v['kernels']} | {_pm(v, 'kendall_tau')} | {_pm(v, 'pairwise_acc')} | {_pm(v, 'top1_score')} | "
                   f"{_pm(v, 'top5_score')} | {_pm(s['random_by_label'][g], 'top1_score')} | "
                   f"{s['hand_by_label'][g]['top1_score']:.3f} |" if g in s["hand_by_label"] else
                   f"| {g} | {v['kernels']} | {_pm(v, 'kendall_tau')} | {_pm(v, 'pairwise_acc')} | {_pm(v, 'top1_score')} | "
                   f"{_pm(v, 'top5_score')} | {_pm(s['random_by_label'][g], 'top1_score')} | n/a |")
    a = s["all"]
    lines += [f"| **all held-out kernels** | {a['kernels']} | {_pm(a, 'kendall_tau')} | {_pm(a, 'pairwise_acc')} | "
              f"{_pm(a, 'top1_score')} | {_pm(a, 'top5_score')} | | |", ""]
  lines += ["## Kendall tau per family (kernel-held-out, ranker)", "", "| family | kernels | tau | top-1 |", "|---|---|---|---|"]
  for g, v in kf["ranker_by_family"].items(): lines.append(f"| {g} | {v['kernels']} | {_pm(v, 'kendall_tau')} | {_pm(v, 'top1_score')} |")
  sp, comp = res["speed"], res["compile_time_per_s"]
  lines += ["", "## Speed", "",
            f"- featurize + predict, here ({sp['host']}): **{res['featurize_predict_per_s']:.0f} candidates/s** ({sp['headline']}). "
            f"One process: {sp['one_core_per_s']:.0f}/s; one process rebuilding every candidate's Scheduler from scratch and scoring it "
            f"alone: {sp['scratch_per_s']:.0f}/s."]
  if comp: lines += [f"- compile + time on the GPU host: **{comp:.1f} candidates/s** ({sp['compile_note']}).",
                     f"- ratio, machine to machine: **{res['featurize_predict_per_s']/comp:.0f}x** (target >= 20x); one process here against "
                     f"the whole GPU host: {sp['one_core_per_s']/comp:.0f}x (from scratch {sp['scratch_per_s']/comp:.0f}x); per core "
                     f"({sp['per_core']['featurize_predict']:.0f}/s against {sp['per_core']['compile_time']:.2f}/s per compile worker): "
                     f"{sp['per_core']['featurize_predict']/sp['per_core']['compile_time']:.0f}x."]
  else: lines += ["- compile + time rate: no generation log given (--compile-log)."]
  lines += [""]
  if res.get("ablation"):
    lines += [f"## Feature groups (kernel-held-out, default ranker, drop one group at a time, {res['ablation_seeds']} seeds)", "",
              "| features | count | Kendall tau | top-1 score | top-5 score |", "|---|---|---|---|---|"]
    for g, v in res["ablation"].items():
      lines.append(f"| {g} | {v['n_features']} | {_pm(v, 'kendall_tau')} | {_pm(v, 'top1_score')} | {_pm(v, 'top5_score')} |")
    lines.append("")
  lines += ["## Protocol", "", *[f"- {n}" for n in res["notes"]], ""]
  path.write_text("\n".join(lines))

def plot(res:dict, oof:dict, out_dir:Path, name:str):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  t, kernel = oof["time_s"], oof["kernel"]
  rel = np.log2(t/kernel_best(t, kernel))
  fig, axs = plt.subplots(1, 2, figsize=(12, 5))
  # the ranker's scores carry no unit: center them per kernel; the regressor predicts log runtime itself
  s = oof["ranker"].copy()
  for k in np.unique(kernel): s[kernel == k] -= s[kernel == k].max()
  axs[0].hexbin(rel, -s, gridsize=60, bins="log", mincnt=1, cmap="viridis")
  axs[0].set_xlabel("measured log2(time / best time of its kernel)"); axs[0].set_ylabel("ranker: top score of its kernel - score")
  axs[0].set_title(f"ranker, held-out kernels (tau {res['kfold']['ranker']['kendall_tau']['mean']:.3f})")
  if "regressor_log_time" in oof:
    axs[1].hexbin(np.log10(t), oof["regressor_log_time"]/np.log(10), gridsize=60, bins="log", mincnt=1, cmap="viridis")
    lo, hi = np.log10(t).min(), np.log10(t).max()
    axs[1].plot([lo, hi], [lo, hi], "r--", lw=1)
    axs[1].set_xlabel("measured log10(runtime s)"); axs[1].set_ylabel("predicted log10(runtime s)")
    axs[1].set_title("regressor baseline, held-out kernels")
  fig.suptitle(f"Predicted vs measured, {res['device']}, seed {res['seed_list'][0]}")
  fig.tight_layout(); fig.savefig(out_dir / f"{name}_pred_vs_measured.png", dpi=120); plt.close(fig)

  fams = list(res["kfold"]["ranker_by_family"])
  fig, ax = plt.subplots(figsize=(12, 4.5))
  shown = [m for m in ("ranker", "regressor", "mlp", "blend", "random") if res["kfold"].get(f"{m}_by_family") is not None]
  w = 0.8/len(shown)
  for i, m in enumerate(shown):
    bf = res["kfold"][f"{m}_by_family"]
    ax.bar(np.arange(len(fams)) + (i-(len(shown)-1)/2)*w, [bf[f]["kendall_tau"]["mean"] for f in fams], w,
           yerr=[bf[f]["kendall_tau"]["std"] for f in fams], label=MODEL_LABELS[m], capsize=2)
  ax.set_xticks(np.arange(len(fams))); ax.set_xticklabels([f"{f}\n({res['kfold']['ranker_by_family'][f]['kernels']})" for f in fams], fontsize=8)
  ax.axhline(0.75, color="k", ls="--", lw=0.8); ax.set_ylabel("Kendall tau (per kernel, averaged)")
  ax.set_title(f"Kendall tau per family, kernel-held-out {res['folds']}-fold, {res['seeds']} seeds, {res['device']}")
  ax.legend(fontsize=7, loc="upper center", ncol=5, bbox_to_anchor=(0.5, -0.14)); fig.tight_layout(); fig.savefig(out_dir / f"{name}_tau_per_family.png", dpi=120); plt.close(fig)

def write_results(a:argparse.Namespace, ds:Dataset, res:dict, params:dict, command:str, log:Callable[[str], None]=lambda s: None):
  """train-cost-model --evaluate's results (`res`: run's k-fold, holdouts, ablation and speed) to a.results/NAME.json, .md and plots."""
  kf, sp = res["kfold"], res["speed"]
  name = a.results_name or ("cost_model" if ds.backend == "CUDA" else f"cost_model_{ds.backend.lower()}")
  comp = compile_rate(Path(a.compile_log) if a.compile_log else GPU_LOG) if (a.compile_log or ds.backend == "CUDA") else None
  rate = lambda m: sp[m]["candidates"]/sp[m]["seconds"]
  hand = hand_reference(ds.time_s, ds.kernel, ds.source)
  hmean = {m: float(np.mean([v[m] for v in hand.values()])) for m in ("top1_score", "top5_score", "percentile")}
  main = res["shipped"]   # the shipped model's figures head the report
  means = {m: kf[main][m]["mean"] for m in METRICS}
  dev = f"{ds.device} ({ds.arch})"
  out = {"device": dev, "split": "kernel_group_kfold", "folds": a.folds, "seeds": a.seeds, "seed_list": list(range(a.seeds)), "model": main,
         **{m: kf[main][m]["mean"] for m in METRICS}, **{f"{m}_std": kf[main][m]["std"] for m in METRICS},
         "lono_kendall_tau": res["lono"]["all"]["kendall_tau"]["mean"] if res["lono"] else None,
         "lono_kendall_tau_std": res["lono"]["all"]["kendall_tau"]["std"] if res["lono"] else None,
         "lofo_kendall_tau": res["lofo"]["all"]["kendall_tau"]["mean"] if res["lofo"] else None,
         "hand_coded_top1_score": hmean["top1_score"], "hand_coded_top5_score": hmean["top5_score"],
         "random_top1_score": kf["random"]["top1_score"]["mean"], "random_top5_score": kf["random"]["top5_score"]["mean"],
         "random_kendall_tau": kf["random"]["kendall_tau"]["mean"], "random_pairwise_acc": kf["random"]["pairwise_acc"]["mean"],
         "featurize_predict_per_s": rate("batched_all_cores"), "featurize_predict_one_core_per_s": rate("batched"),
         "featurize_predict_scratch_one_core_per_s": rate("scratch"),
         "compile_time_per_s": comp["per_s"] if comp else None,
         "targets_met": {m: bool(means[m] >= v) for m, v in TARGETS.items()},
         "date": datetime.date.today().isoformat(), "command": command, "tinygrad": TINYGRAD_VERSION, "feature_schema": SCHEMA_VERSION, "n_features": len(FEATURES),
         "dataset": {"path": str(a.dataset), "shards": ds.shards, "hash": ds.hash, "rows": len(ds), "kernels": int(len(np.unique(ds.kernel)))},
         "hand_coded": {**hmean, "kernels": len(hand)}, "kfold": {k: v for k, v in kf.items()}, "lono": res["lono"], "lofo": res["lofo"],
         "ablation": res["ablation"], "ablation_seeds": min(a.ablation_seeds, a.seeds) if res["ablation"] else None, "final_params": params,
         "speed": {"host": f"this machine, {os.cpu_count()} vCPUs", **sp, "one_core_per_s": rate("batched"), "scratch_per_s": rate("scratch"),
                   "compile": comp, "per_core": {"featurize_predict": rate("batched"), "compile_time": comp["per_s"]/comp["workers"] if comp else None},
                   "headline": f"held-out kernels' candidates from (AST, opts JSON) to a score by the {sp['models']}, one call per kernel (Schedulers built from "
                               f"shared prefixes, AST unpickling and preparation included), fresh processes, all {os.cpu_count()} vCPUs of this machine",
                   "compile_note": (f"{comp['device']} host, {comp['workers']} compile workers: (ok {comp['ok']} + failed {comp['failed']}) "
                                    f"timed candidates / {comp['seconds']} s of the generation run in {comp['log']}; the {comp['duplicates']} "
                                    "duplicates (compiled or proposed, never timed) are not counted") if comp else "n/a"},
         "notes": [
           "Only ok measurements are ranked; kernels with fewer than 2 are left out. Early-stopped rows (one run, > 4x the best known) keep their measured time.",
           f"Splits are by kernel (AST key), never by row. k-fold: kernels shuffled into {a.folds} folds per seed; every model sees the same folds.",
           f"Ranker parameters in the k-fold come from an optuna study per (seed, fold) on that fold's training kernels only (inner 3-fold by kernel), "
           f"{a.trials if a.eval_trials is None else a.eval_trials} trials each, defaults enqueued first; the defaults themselves were chosen "
           "while developing the features on this dataset.",
           "Leave-one-network-out / leave-one-family-out use the default ranker parameters (the ranker alone, also where a blend is shipped).",
           "pairwise_acc counts pairs of one kernel's configs with different runtimes; a score tie counts half.",
           "Hand-coded reference: tinygrad's hand_coded_optimizations as measured (source 'hand'); random reference: uniform random scores, same folds.",
           relabel_note(a.dataset, not getattr(a, "no_shards", False)),
           "std is the spread (ddof=0) of the per-seed means."]}
  rd = Path(a.results); rd.mkdir(parents=True, exist_ok=True)
  write_json(rd / f"{name}.json", out)
  write_markdown(rd / f"{name}.md", out)
  plot(out, res["oof"], rd, name)
  log(f"wrote {rd}/{name}.json, {name}.md, {name}_pred_vs_measured.png, {name}_tau_per_family.png")

def relabel_note(store:str, shards:bool=True) -> str:
  """What the labels are: how many rows dataset.retime timed again (the rest are as the generation measured them)."""
  n = stats(store, shards)["retimed"]
  if not any(n.values()): return "Labels as the generation measured them (no row timed again by dataset.retime)."
  return (f"Labels as stored: {n['retimed']:,} early-stopped rows were timed again in full and {n['consolidated']:,} rows (each kernel's "
          "fastest stored configs, with a held-out model's top picks and random ones) were timed again together in one run, scaled "
          "to the kernel's other rows (dataset.retime; each row's old time is kept in the store's error column).")
