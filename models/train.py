"""train-cost-model: train the runtime cost model on a measurement store, evaluate it on held-out kernels, and write it under models/.

  train-cost-model dataset/data/cuda.sqlite                       # tune (if --trials) and train; quick held-out check; write the model
  train-cost-model dataset/data/cuda.sqlite --evaluate --seeds 3   # + the full evaluation, written to results/
  train-cost-model dataset/data/cuda.sqlite --no-shards           # the base alone: what the shipped model was trained on
  train-cost-model dataset/data/cuda.sqlite --learning-curve --folds 5 --seeds 1  # accuracy vs training rows, active vs random

A store is read with the shards beside it (dataset.shard: dataset/data/shards/, those of the store's device).

The held-out evaluations: models.heldout; the learning curve: models.learning_curve; scoring speed: models.speed; the results written: models.report."""
from __future__ import annotations
import argparse, datetime, json, os, shlex, sys, time
from pathlib import Path
import numpy as np
from dataset.argtypes import at_least, count, natural
from dataset.store import Store, StoreError
from dataset.kernel import TINYGRAD_VERSION
from dataset.paths import cannot_write
from dataset.history import History, HistoryError
from dataset.shard import resolve
from models.data import CACHE, Dataset, concat, load
from models.features import FEATURES, FEATURE_GROUPS, SCHEMA_VERSION, group_features
from models.evaluate import kernel_kfold, per_kernel, average, run_splits, METRICS
from models.ranker import Ranker
from models.compile_cost import attach, fit as fit_compile
from models.mlp import MLPRanker
from models.blend import Blend, WEIGHT
from models.tune import tune, STORAGE
from models.cost_model import CostModel, CostModelError, default_model_path, file_sha256, mask_columns
from models.resources import WithResources, augment, labels_path
from models.heldout import ablation, holdout_eval, kfold_eval, resource_model, study_name
from models.speed import GPU_LOG, measure_speed, speed_kernels
from models.report import write_results
from models import learning_curve as lc

class TrainError(RuntimeError): pass

def default_out(ds:Dataset) -> Path: return default_model_path(ds.backend, ds.arch)

def parse_args(argv=None) -> argparse.Namespace:
  ap = argparse.ArgumentParser("train-cost-model", description=__doc__.split("\n")[0])
  ap.add_argument("dataset", help="measurement store (SQLite), e.g. dataset/data/cuda.sqlite")
  ap.add_argument("--device", default=None, help="device the model is for: a measured device name ('NVIDIA H200'), an arch (sm_90) or "
                  "a backend (CUDA, CPU). Picks that device's measurements; a dataset of another device is an error")
  ap.add_argument("--allow-device-mismatch", action="store_true", help="train on the dataset's device even if --device names another")
  ap.add_argument("--out", default=None, help="model path (default: models/cost_model_<arch>.txt, models/cost_model_cpu.txt on the CPU)")
  ap.add_argument("--trials", type=count, default=0, help="optuna trials per study (0: default parameters)")
  ap.add_argument("--params", default=None, metavar="JSON", help="the ranker's parameters from a cost model's metadata (e.g. "
                  "models/cost_model_sm_90.json) instead of a study: the shipped recipe on new data")
  ap.add_argument("--no-check", action="store_true", help="skip the quick held-out check (its figures are then absent from the metadata)")
  ap.add_argument("--eval-trials", type=count, default=None, help="trials per nested study in --evaluate (default: --trials)")
  ap.add_argument("--storage", default=STORAGE, help=f"optuna storage (default {STORAGE}); studies resume from it")
  ap.add_argument("--evaluate", action="store_true", help="full held-out evaluation: k-fold x seeds for every model, leave-one-network-out, "
                  "leave-one-family-out, speed; written to --results")
  ap.add_argument("--seeds", type=natural, default=3)
  ap.add_argument("--folds", type=at_least(2), default=5)
  ap.add_argument("--no-mlp", action="store_true", help="skip the torch challenger (and the blend) in --evaluate")
  ap.add_argument("--mask", action="append", default=[], choices=sorted(FEATURE_GROUPS), metavar="GROUP", help="train the ranker, MLP and "
                  "register model with this feature group's columns held at 0 (the model records them and scores so): e.g. opts, the opt "
                  "sequence (how a config was reached, not the kernel it is), which biases a model toward SWAP steps (repeatable)")
  ap.add_argument("--blend", type=float, default=None, metavar="W", help="ship the ranker blended with the MLP (models.blend), the "
                  "ranker's weight W (e.g. 0.6); the held-out figures in the model's metadata are then the blend's")
  ap.add_argument("--ablation", action="store_true", help="also drop each feature group in turn (with --evaluate)")
  ap.add_argument("--ablation-seeds", type=natural, default=2, help="seeds of the ablation's k-fold (default 2)")
  ap.add_argument("--learning-curve", action="store_true", help="instead of training: held-out accuracy against training rows, with "
                  "the rows chosen at random and by active learning (models.learning_curve), written to --results; no model is written")
  ap.add_argument("--fractions", default=",".join(f"{f:g}" for f in lc.FRACTIONS), help="--learning-curve: shares of each training "
                  "kernel's rows, comma-separated, in (0, 1] (default %(default)s)")
  ap.add_argument("--against", choices=lc.AGAINST, default="active", help="--learning-curve: random rows of every kernel against "
                  "active learning's rows, or against every row of fewer kernels (kernels: what more kernels buy) (default %(default)s)")
  ap.add_argument("--committee", type=int, default=lc.COMMITTEE, help="--learning-curve: rankers in the active learner's committee (default %(default)s)")
  ap.add_argument("--results", default="results", help="where --evaluate (--learning-curve) writes NAME.json, NAME.md and the plots")
  ap.add_argument("--results-name", default=None, help="default: cost_model (learning_curve) for CUDA, cost_model_cpu (learning_curve_cpu) for the CPU")
  ap.add_argument("--compile-log", default=None, help=f"generate-dataset log whose summary gives the compile+time rate (default {GPU_LOG} for CUDA)")
  ap.add_argument("--threads", type=count, default=0, help="LightGBM/torch threads (0: all cores)")
  ap.add_argument("--exclude-keys", default=None, help="file of kernel AST keys (hex, one per line, '#' comments) whose measurements "
                  "are left out of everything: a model for benchmarking on those kernels must not have seen them")
  ap.add_argument("--no-shards", action="store_true", help="the store alone, without the shards beside it (dataset.shard): the data "
                  "a model trained before them saw")
  ap.add_argument("--with", dest="also", action="append", default=[], metavar="STORE", help="also learn from this store's "
                  "measurements (with its shards), of another card of the same arch (e.g. dataset/data/cuda_h100.sqlite.gz): its kernels join "
                  "as query groups of their own; the model is still the dataset's device's (repeatable)")
  ap.add_argument("--no-cache", action="store_true", help=f"featurize again instead of using the feature cache ({CACHE}; $KERNTUNE_CACHE_DIR moves it)")
  ap.add_argument("--quiet", action="store_true")
  a = ap.parse_args(argv)
  if a.blend is not None and not 0.0 <= a.blend <= 1.0: ap.error(f"--blend: the ranker's weight must be in [0, 1], got {a.blend}")
  if a.learning_curve and a.evaluate: ap.error("--learning-curve and --evaluate are separate runs: pass one")
  if a.params is not None:
    if a.trials: ap.error("--params and --trials both choose the ranker's parameters: pass one")
    try: a.params = {k: v for k, v in json.loads(Path(a.params).read_text())["params"].items() if k in Ranker.DEFAULTS}
    except (OSError, ValueError, KeyError, AttributeError) as e: ap.error(f"--params: no cost model parameters in {a.params} ({e})")
  try: a.fractions = sorted({float(x) for x in a.fractions.split(",") if x.strip()})
  except ValueError: ap.error(f"--fractions: numbers separated by commas, got {a.fractions!r}")
  if not a.fractions or not all(0 < f <= 1 for f in a.fractions): ap.error(f"--fractions: each in (0, 1], got {a.fractions}")
  if a.committee < 2: ap.error(f"--committee: at least 2 rankers to disagree, got {a.committee}")
  return a

def run(a:argparse.Namespace, argv:list[str]) -> dict:
  log = (lambda s: None) if a.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
  # the outputs, before the work rather than after it (every default model is in models/, whatever its arch)
  for p, is_dir in ((None if a.learning_curve else a.out or default_model_path("CPU").parent, not a.out),
                    (a.results if a.evaluate or a.learning_curve else None, True)):
    if p is not None and (why := cannot_write(p, is_dir)): raise TrainError(why)
  st = time.perf_counter()
  try:
    src = resolve(a.dataset, not a.no_shards)
    s = Store(src.path, readonly=True)
    try: devs = s.devices()
    finally: s.close()
  except StoreError as e: raise TrainError(str(e)) from None
  # pick the device's measurements: --device may name the measured device, its arch or its backend
  chosen = None
  if a.device is not None:
    hits = [d for d, p in devs.items() if a.device in (d, p["arch"], "CUDA" if p["arch"].startswith("sm_") else "CPU")]
    if hits: chosen = hits[0]
    elif not a.allow_device_mismatch:
      have = ", ".join(f"{d} ({p['arch']})" for d, p in devs.items())
      raise TrainError(f"{a.dataset} has no measurements of device {a.device!r} (it has {have}); pass --allow-device-mismatch to train on it anyway")
  parts: list = []
  try:
    for i, p in enumerate([a.dataset, *a.also]):   # a shard once: stores of one device side by side share their shards/
      parts.append(load(p, device=chosen if i == 0 else None, cache=not a.no_cache, shards=not a.no_shards,
                        skip=frozenset(s for d in parts for s in d.shards)))
  except (ValueError, StoreError) as e: raise TrainError(str(e)) from None
  excluded = []
  if a.exclude_keys:
    try: keys = {l.split("#")[0].strip() for l in Path(a.exclude_keys).read_text().splitlines()} - {""}
    except OSError as e: raise TrainError(f"--exclude-keys: {e}") from None
    excluded = sorted(keys & {k for d in parts for k in d.kernel.tolist()})
    parts = [d.subset(~np.isin(d.kernel, list(keys))) for d in parts]
    log(f"excluded {len(keys)} kernel keys from {a.exclude_keys}: {len(excluded)} of them were in the dataset")
  try: ds = concat(parts[0], parts[1:]) if a.also else parts[0]
  except ValueError as e: raise TrainError(str(e)) from None
  if len(np.unique(ds.kernel)) < 2 * max(a.folds, 2): raise TrainError(f"{a.dataset}: {len(np.unique(ds.kernel))} kernels with 2+ ok measurements is too few")
  log(f"dataset {a.dataset}{f' with {a.also}' if a.also else ''}{f' with shards {ds.shards}' if ds.shards else ''}: {len(ds)} ok measurements, {len(np.unique(ds.kernel))} "
      f"kernels, {ds.device} ({ds.arch}), "
      f"{len(FEATURES)} features, loaded in {time.perf_counter()-st:.0f} s")
  threads = a.threads or (os.cpu_count() or 1)
  X_all, masked = ds.X, group_features(a.mask)   # the compile model keeps every column (compile time is no ranking)
  if masked: ds.X = mask_columns(ds.X, masked); log(f"masked {len(masked)} feature columns ({', '.join(a.mask)})")
  command = "train-cost-model " + " ".join(shlex.quote(x) for x in argv)
  if a.learning_curve:
    for p in lc.outputs(a, ds):   # the files themselves, now that the device names them
      if why := cannot_write(p): raise TrainError(why)
    return lc.run(a, ds, command, threads, log)
  seeds = list(range(a.seeds))
  res: dict = {}
  et = a.trials if a.eval_trials is None else a.eval_trials   # trials per nested study in --evaluate
  if a.evaluate:
    # speed first, while nothing else of this run competes for the cores: the test kernels of seed 0's first fold
    log("speed"); speed = measure_speed(ds, str(src.path), speed_kernels(ds, a.folds, seeds[0]), seeds[0], threads, blend=a.blend is not None, log=log)
    log(f"kernel-held-out {a.folds}-fold, seeds {seeds}, {et} trials per nested study")
    kf, oof = kfold_eval(ds, seeds, a.folds, et, a.storage, threads, not a.no_mlp, WEIGHT if a.blend is None else a.blend, log)
    log("leave-one-network-out"); lono = holdout_eval(ds, ds.network, seeds, threads) if (ds.network != "").any() else None
    fam = np.where(ds.network == "", ds.family, "")
    log("leave-one-family-out"); lofo = holdout_eval(ds, fam, seeds, threads) if len(set(fam.tolist()) - {""}) > 1 else None
    abl = ablation(ds, seeds[:a.ablation_seeds], a.folds, threads, log) if a.ablation else None
    res = dict(kfold=kf, oof=oof, lono=lono, lofo=lofo, ablation=abl, speed=speed)
  elif a.no_check: log("no held-out check (--no-check)")
  else:
    # a quick held-out check with default parameters (tuned ones would have seen every kernel): one seed of the kernel k-fold
    splits = list(kernel_kfold(ds.kernel, a.folds, 0))
    rms = [resource_model(ds, tr, threads) for tr, _ in splits]
    make = lambda i, tr: WithResources(Ranker(seed=0, threads=threads), rms[i])
    if a.blend is not None:
      make = lambda i, tr: Blend(WithResources(Ranker(seed=0, threads=threads), rms[i]), WithResources(MLPRanker(seed=0, threads=threads), rms[i]), a.blend)
    s = run_splits(make, ds.X, ds.time_s, ds.kernel, splits)
    res = {"quick": average(per_kernel(s, ds.time_s, ds.kernel))}
    log("held-out check (default parameters, 1 seed): " + " ".join(f"{k}={v:.4f}" for k, v in res["quick"].items()))
  # the shipped model: parameters from a study over every kernel (its inner folds are its validation), trained on everything
  rm = resource_model(ds, np.ones(len(ds), bool), threads)
  # a CUDA store copied elsewhere without its compile labels beside it trains a model without the register-pressure inputs: say so
  if rm is None and str(ds.arch).startswith("sm_"): log(f"no compile labels at {labels_path(a.dataset)}: the model has no register-pressure inputs (python -m dataset.resources makes them)")
  Xa = augment(ds.X, rm)
  params = a.params or tune(Xa, ds.time_s, ds.kernel, a.trials, study_name(ds, "final"), a.storage, 0, threads=threads)
  model, blend = Ranker(seed=0, threads=threads, **params), None
  if a.blend is not None: blend = Blend(model, MLPRanker(seed=0, threads=threads), a.blend).fit(Xa, ds.time_s, ds.kernel)
  else: model.fit(Xa, ds.time_s, ds.kernel)
  out = Path(a.out) if a.out else default_out(ds)
  tuning = f"nested tuning ({et} trials per study)" if et > 0 else "default parameters"
  # the shipped model's held-out figures: the blend's if it is shipped and was evaluated
  shipped = res["shipped"] = "blend" if blend is not None and a.evaluate and "blend" in res["kfold"] else "ranker"
  metrics = ({"protocol": f"kernel-grouped {a.folds}-fold x {len(seeds)} seeds, {tuning}", "model": shipped, **{m: res["kfold"][shipped][m] for m in METRICS},
              "lono_kendall_tau": res["lono"]["all"]["kendall_tau"] if res["lono"] else None} if a.evaluate else
             {"protocol": f"kernel-grouped {a.folds}-fold, 1 seed, default parameters", **res["quick"]} if "quick" in res else
             {"protocol": "none (--no-check)"})
  meta = {"model": Blend.name if blend is not None else Ranker.name, "params": model.get_params(), "feature_schema": SCHEMA_VERSION, "features": FEATURES,
          "tinygrad": TINYGRAD_VERSION, "device": ds.device, "arch": ds.arch, "backend": ds.backend, "device_props": ds.props,
          "dataset": {"path": str(a.dataset), "with": a.also, "shards": ds.shards, "hash": ds.hash, "rows": len(ds),
                      "kernels": int(len(np.unique(ds.kernel))),
                      "excluded_keys_file": a.exclude_keys, "excluded_keys_in_dataset": excluded},
          "metrics": metrics, "trained": datetime.date.today().isoformat(), "command": command}
  if masked: meta["masked_features"] = masked
  if rm is not None:
    lp = labels_path(a.dataset)
    meta["resource_model"] = {"labels": str(lp), "labels_sha256": file_sha256(lp), "rows": int(np.isfinite(ds.regs).sum())}
  if blend is not None: meta["blend"] = {**blend.get_params(), "mlp_params": blend.mlp.get_params()}
  CostModel(model, meta, resource_model=rm, mlp=blend.mlp.numpy_forward() if blend is not None else None).save(out)
  try:   # the search's compile-time penalty (models.compile_cost); a dataset without compile times gets a model without it
    attach(out, fit_compile(X_all, ds.compile_s, threads), int(np.isfinite(ds.compile_s).sum()))
  except ValueError as e: log(f"no compile model: {e}")
  log(f"wrote {out} and {out.with_suffix('.json')}")
  # the search's measured history (dataset.history): the fastest configs of every kernel, by loop nest, next to the model
  try:
    h = History.build(a.dataset, ds.device, shards=not a.no_shards)
    # models/cost_model_<arch>.txt -> models/history_<arch>.json (where tune-model looks); any other name: NAME.history.json
    hp = out.with_name(out.stem.replace("cost_model", "history", 1) + ".json") if "cost_model" in out.stem else out.with_suffix(".history.json")
    h.save(hp)
    log(f"wrote {hp}: {h.meta['kernels']} kernels in {h.meta['nests']} loop nests")
  except HistoryError as e: log(f"no history: {e}")
  if a.evaluate: write_results(a, ds, res, params, command, log)
  return res

def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  a = parse_args(argv)
  try: run(a, argv)
  except (TrainError, CostModelError) as e:
    print(f"train-cost-model: error: {e}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
