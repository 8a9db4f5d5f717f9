"""train-cost-model: train the runtime cost model on a measurement store, evaluate it on held-out kernels, and write it under models/.

  train-cost-model dataset/data/cuda.sqlite                       # tune (if --trials) and train; quick held-out check; write the model
  train-cost-model dataset/data/cuda.sqlite --evaluate --seeds 3   # + the full evaluation, written to results/"""
from __future__ import annotations
import argparse, datetime, json, multiprocessing, os, shlex, sys, tempfile, time
from pathlib import Path
import numpy as np
from threadpoolctl import threadpool_limits
from dataset.store import Store, StoreError
from dataset.kernel import Kernel, TINYGRAD_VERSION, scheduler, opts_from_json
from dataset.stats import stats
from dataset.paths import cannot_write
from dataset.history import History, HistoryError
from models.data import Dataset, load, renderer
from models.features import FEATURES, FEATURE_GROUPS, SCHEMA_VERSION, featurize
from models.evaluate import (kernel_kfold, leave_one_out, per_kernel, average, hand_reference, run_splits, summarize, group_metrics,
                             METRICS)
from models.ranker import Ranker
from models.baselines import Regressor, RandomRanker
from models.compile_cost import attach, fit as fit_compile
from models.mlp import MLPRanker
from models.mlp_forward import NumpyMLP
from models.blend import Blend, WEIGHT
from models.tune import tune, STORAGE
from models.cost_model import CostModel, CostModelError, schedulers, default_model_path, file_sha256
from models.resources import ResourceModel, WithResources, augment, labels_path

TARGETS = {"kendall_tau": 0.75, "pairwise_acc": 0.85, "top1_score": 0.90, "top5_score": 0.97}
ROOT = Path(__file__).resolve().parents[1]
GPU_LOG = ROOT / "dataset" / "logs" / "gpu_run3_generate.log"   # the H200 generation run whose summary gives the compile+time rate

class TrainError(RuntimeError): pass

def log(*a): print(*a, file=sys.stderr, flush=True)

def default_out(ds:Dataset) -> Path: return default_model_path(ds.backend, ds.arch)

def study_name(ds:Dataset, what:str) -> str: return f"ranker-{ds.hash[:12]}-v{SCHEMA_VERSION}-{what}"

# *** evaluation ***

def resource_model(ds:Dataset, rows:np.ndarray, threads:int) -> ResourceModel|None:
  """The register-pressure model fit on the compile labels of `rows` (a split's training side), or None if the store has none."""
  if ds.regs is None: return None
  return ResourceModel(threads=threads).fit(ds.X[rows], ds.regs[rows], ds.frame[rows])

BLEND_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)

def kfold_eval(ds:Dataset, seeds:list[int], folds:int, trials:int, storage:str, threads:int, with_mlp:bool,
               blend_weight:float=WEIGHT) -> tuple[dict, dict]:
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

def ablation(ds:Dataset, seeds:list[int], folds:int, threads:int) -> dict:
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

# *** speed: featurize + predict here, against compile + time on the GPU host ***

def _speed_worker(args) -> dict:
  """In a fresh process (cold caches), score held-out candidates end to end from (AST blob, opts JSON) to a score."""
  mode, model_path, rm_path, mlp_path, backend, arch, props, work = args
  threadpool_limits(1, user_api="blas")   # one core per process, as in search's compile workers (dataset.compile)
  ranker, rm = Ranker.load(model_path, threads=1), ResourceModel.load(rm_path) if rm_path else None
  models = [ranker] + ([NumpyMLP.load(mlp_path)] if mlp_path else [])   # a blend scores with both (the shipped MLP: numpy)
  def predict(X:np.ndarray):
    Xa = augment(X, rm)   # the register model's predictions, once for both models
    for m in models: m.predict(Xa)
  ren = renderer(backend, arch)
  n, st = 0, time.perf_counter()
  for blob, opts in work:
    ast = Kernel.ast_from_blob(blob)
    ol = [opts_from_json(json.loads(o)) for o in opts]
    if mode == "batched":   # how search calls it: a kernel's candidates at once, Schedulers built from shared prefixes
      predict(np.stack([featurize(k, props) for k in schedulers(ast, ren, ol) if k is not None]))
    else:                   # every candidate alone: its Scheduler rebuilt from the AST, one prediction per call
      for o in ol: predict(featurize(scheduler(ast, ren, o), props)[None])
    n += len(ol)
  return {"mode": mode, "candidates": n, "seconds": time.perf_counter() - st}

def speed_kernels(ds:Dataset, folds:int, seed:int) -> list[str]:
  """The kernels speed is measured on: the test side of the seed's first kernel fold (held out from the model that scores them)."""
  return np.unique(ds.kernel[next(kernel_kfold(ds.kernel, folds, seed))[1]]).tolist()

def measure_speed(ds:Dataset, store_path:str, kernels:list[str], seed:int, threads:int, max_candidates:int=3000, blend:bool=False) -> dict:
  """Featurize + predict per second on `kernels`' measured candidates, by a ranker (and with `blend`, the MLP a blend adds) fit on
  the other kernels: one process batched as search scores, one rebuilding every candidate alone, and every core batched."""
  s = Store(store_path, readonly=True)
  try: blobs = {r["key"]: r["ast"] for r in s.kernels()}
  finally: s.close()
  rng = np.random.default_rng(seed)
  work, n = [], 0
  for k in rng.permutation(kernels):
    if n >= max_candidates: break
    o = ds.opts[ds.kernel == k].tolist()
    work.append((blobs[k], o)); n += len(o)
  tr = ~np.isin(ds.kernel, kernels)
  rm = resource_model(ds, tr, threads)
  Xa = augment(ds.X[tr], rm)
  r = Ranker(seed=seed, threads=threads).fit(Xa, ds.time_s[tr], ds.kernel[tr])
  ncpu = os.cpu_count() or 1
  with tempfile.TemporaryDirectory() as d:
    r.save(p := Path(d) / "m.txt")
    if rm is not None: rm.save(rp := Path(d) / "m.resources.json")
    if blend: MLPRanker(seed=seed, threads=threads).fit(Xa, ds.time_s[tr], ds.kernel[tr]).numpy_forward().save(mp := Path(d) / "m.mlp.npz")
    res = {}
    for mode, procs in (("batched", 1), ("scratch", 1), ("batched_all_cores", ncpu)):
      # every process takes every procs-th kernel; the machine's rate is all candidates over the slowest process's time
      parts = [(mode.split("_")[0], str(p), str(rp) if rm is not None else None, str(mp) if blend else None, ds.backend, ds.arch, ds.props,
                work[i::procs]) for i in range(procs)]
      with multiprocessing.get_context("spawn").Pool(procs) as pool: out = pool.map(_speed_worker, parts, chunksize=1)
      res[mode] = {"mode": mode, "processes": procs, "candidates": sum(o["candidates"] for o in out), "seconds": max(o["seconds"] for o in out)}
      log(f"  speed {mode}: {res[mode]['candidates']} candidates in {res[mode]['seconds']:.1f} s ({procs} processes)")
  res["models"] = "ranker + MLP (blend)" if blend else "ranker"
  return res

def compile_rate(path:Path) -> dict|None:
  """Candidates compiled and timed per second on the GPU host, from a generate-dataset log's final summary line."""
  if not path.is_file(): return None
  summ = None
  for line in path.read_text().splitlines():
    if line.startswith('{"summary"'): summ = json.loads(line)["summary"]
  if summ is None: return None
  timed = summ["ok"] + summ["failed"]
  return {"per_s": timed/summ["seconds"], "timed": timed, "ok": summ["ok"], "failed": summ["failed"], "duplicates": summ["duplicates"],
          "seconds": summ["seconds"], "workers": summ["workers"], "device": summ["device"], "log": str(path)}

# *** command line ***

def parse_args(argv=None) -> argparse.Namespace:
  ap = argparse.ArgumentParser("train-cost-model", description=__doc__.split("\n")[0])
  ap.add_argument("dataset", help="measurement store (SQLite), e.g. dataset/data/cuda.sqlite")
  ap.add_argument("--device", default=None, help="device the model is for: a measured device name ('NVIDIA H200'), an arch (sm_90) or "
                  "a backend (CUDA, CPU). Picks that device's measurements; a dataset of another device is an error")
  ap.add_argument("--allow-device-mismatch", action="store_true", help="train on the dataset's device even if --device names another")
  ap.add_argument("--out", default=None, help="model path (default: models/cost_model_<arch>.txt, models/cost_model_cpu.txt on the CPU)")
  ap.add_argument("--trials", type=int, default=0, help="optuna trials per study (0: default parameters)")
  ap.add_argument("--eval-trials", type=int, default=None, help="trials per nested study in --evaluate (default: --trials)")
  ap.add_argument("--storage", default=STORAGE, help=f"optuna storage (default {STORAGE}); studies resume from it")
  ap.add_argument("--evaluate", action="store_true", help="full held-out evaluation: k-fold x seeds for every model, leave-one-network-out, "
                  "leave-one-family-out, speed; written to --results")
  ap.add_argument("--seeds", type=int, default=3)
  ap.add_argument("--folds", type=int, default=5)
  ap.add_argument("--no-mlp", action="store_true", help="skip the torch challenger (and the blend) in --evaluate")
  ap.add_argument("--blend", type=float, default=None, metavar="W", help="ship the ranker blended with the MLP (models.blend), the "
                  "ranker's weight W (e.g. 0.6); the held-out figures in the model's metadata are then the blend's")
  ap.add_argument("--ablation", action="store_true", help="also drop each feature group in turn (with --evaluate)")
  ap.add_argument("--ablation-seeds", type=int, default=2, help="seeds of the ablation's k-fold (default 2)")
  ap.add_argument("--results", default="results", help="where --evaluate writes NAME.json, NAME.md and the plots")
  ap.add_argument("--results-name", default=None, help="default: cost_model for CUDA, cost_model_cpu for the CPU")
  ap.add_argument("--compile-log", default=None, help=f"generate-dataset log whose summary gives the compile+time rate (default {GPU_LOG} for CUDA)")
  ap.add_argument("--threads", type=int, default=0, help="LightGBM/torch threads (0: all cores)")
  ap.add_argument("--exclude-keys", default=None, help="file of kernel AST keys (hex, one per line, '#' comments) whose measurements "
                  "are left out of everything: a model for benchmarking on those kernels must not have seen them")
  ap.add_argument("--no-cache", action="store_true", help="featurize again instead of using models/cache/")
  ap.add_argument("--quiet", action="store_true")
  a = ap.parse_args(argv)
  if a.blend is not None and not 0.0 <= a.blend <= 1.0: ap.error(f"--blend: the ranker's weight must be in [0, 1], got {a.blend}")
  return a

def run(a:argparse.Namespace, argv:list[str]) -> dict:
  global log
  if a.quiet: log = lambda *_: None
  # the outputs, before the work rather than after it (every default model is in models/, whatever its arch)
  for p, is_dir in ((a.out or default_model_path("CPU").parent, not a.out), (a.results if a.evaluate else None, True)):
    if p is not None and (why := cannot_write(p, is_dir)): raise TrainError(why)
  st = time.perf_counter()
  try:
    s = Store(a.dataset, readonly=True)
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
  try: ds = load(a.dataset, device=chosen, cache=not a.no_cache)
  except ValueError as e: raise TrainError(str(e)) from None
  excluded = []
  if a.exclude_keys:
    try: keys = {l.split("#")[0].strip() for l in Path(a.exclude_keys).read_text().splitlines()} - {""}
    except OSError as e: raise TrainError(f"--exclude-keys: {e}") from None
    excluded = sorted(keys & set(ds.kernel.tolist()))
    ds = ds.subset(~np.isin(ds.kernel, list(keys)))
    log(f"excluded {len(keys)} kernel keys from {a.exclude_keys}: {len(excluded)} of them were in the dataset")
  if len(np.unique(ds.kernel)) < 2 * max(a.folds, 2): raise TrainError(f"{a.dataset}: {len(np.unique(ds.kernel))} kernels with 2+ ok measurements is too few")
  log(f"dataset {a.dataset}: {len(ds)} ok measurements, {len(np.unique(ds.kernel))} kernels, {ds.device} ({ds.arch}), "
      f"{len(FEATURES)} features, loaded in {time.perf_counter()-st:.0f} s")
  threads = a.threads or (os.cpu_count() or 1)
  seeds = list(range(a.seeds))
  res: dict = {}
  et = a.trials if a.eval_trials is None else a.eval_trials   # trials per nested study in --evaluate
  if a.evaluate:
    # speed first, while nothing else of this run competes for the cores: the test kernels of seed 0's first fold
    log("speed"); speed = measure_speed(ds, a.dataset, speed_kernels(ds, a.folds, seeds[0]), seeds[0], threads, blend=a.blend is not None)
    log(f"kernel-held-out {a.folds}-fold, seeds {seeds}, {et} trials per nested study")
    kf, oof = kfold_eval(ds, seeds, a.folds, et, a.storage, threads, not a.no_mlp, WEIGHT if a.blend is None else a.blend)
    log("leave-one-network-out"); lono = holdout_eval(ds, ds.network, seeds, threads) if (ds.network != "").any() else None
    fam = np.where(ds.network == "", ds.family, "")
    log("leave-one-family-out"); lofo = holdout_eval(ds, fam, seeds, threads) if len(set(fam.tolist()) - {""}) > 1 else None
    abl = ablation(ds, seeds[:a.ablation_seeds], a.folds, threads) if a.ablation else None
    res = dict(kfold=kf, oof=oof, lono=lono, lofo=lofo, ablation=abl, speed=speed)
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
  Xa = augment(ds.X, rm)
  params = tune(Xa, ds.time_s, ds.kernel, a.trials, study_name(ds, "final"), a.storage, 0, threads=threads)
  model, blend = Ranker(seed=0, threads=threads, **params), None
  if a.blend is not None: blend = Blend(model, MLPRanker(seed=0, threads=threads), a.blend).fit(Xa, ds.time_s, ds.kernel)
  else: model.fit(Xa, ds.time_s, ds.kernel)
  out = Path(a.out) if a.out else default_out(ds)
  command = "train-cost-model " + " ".join(shlex.quote(x) for x in argv)
  tuning = f"nested tuning ({et} trials per study)" if et > 0 else "default parameters"
  # the shipped model's held-out figures: the blend's if it is shipped and was evaluated
  shipped = res["shipped"] = "blend" if blend is not None and a.evaluate and "blend" in res["kfold"] else "ranker"
  metrics = ({"protocol": f"kernel-grouped {a.folds}-fold x {len(seeds)} seeds, {tuning}", "model": shipped, **{m: res["kfold"][shipped][m] for m in METRICS},
              "lono_kendall_tau": res["lono"]["all"]["kendall_tau"] if res["lono"] else None} if a.evaluate else
             {"protocol": f"kernel-grouped {a.folds}-fold, 1 seed, default parameters", **res["quick"]})
  meta = {"model": Blend.name if blend is not None else Ranker.name, "params": model.get_params(), "feature_schema": SCHEMA_VERSION, "features": FEATURES,
          "tinygrad": TINYGRAD_VERSION, "device": ds.device, "arch": ds.arch, "backend": ds.backend, "device_props": ds.props,
          "dataset": {"path": str(a.dataset), "hash": ds.hash, "rows": len(ds), "kernels": int(len(np.unique(ds.kernel))),
                      "excluded_keys_file": a.exclude_keys, "excluded_keys_in_dataset": excluded},
          "metrics": metrics, "trained": datetime.date.today().isoformat(), "command": command}
  if rm is not None:
    lp = labels_path(a.dataset)
    meta["resource_model"] = {"labels": str(lp), "labels_sha256": file_sha256(lp), "rows": int(np.isfinite(ds.regs).sum())}
  if blend is not None: meta["blend"] = {**blend.get_params(), "mlp_params": blend.mlp.get_params()}
  CostModel(model, meta, resource_model=rm, mlp=blend.mlp.numpy_forward() if blend is not None else None).save(out)
  try:   # the search's compile-time penalty (models.compile_cost); a dataset without compile times gets a model without it
    attach(out, fit_compile(ds.X, ds.compile_s, threads), int(np.isfinite(ds.compile_s).sum()))
  except ValueError as e: log(f"no compile model: {e}")
  log(f"wrote {out} and {out.with_suffix('.json')}")
  # the search's measured history (dataset.history): the fastest configs of every kernel, by loop nest, next to the model
  try:
    h = History.build(a.dataset, ds.device)
    # models/cost_model_<arch>.txt -> models/history_<arch>.json (where tune-model looks); any other name: NAME.history.json
    hp = out.with_name(out.stem.replace("cost_model", "history", 1) + ".json") if "cost_model" in out.stem else out.with_suffix(".history.json")
    h.save(hp)
    log(f"wrote {hp}: {h.meta['kernels']} kernels in {h.meta['nests']} loop nests")
  except HistoryError as e: log(f"no history: {e}")
  if a.evaluate: write_results(a, ds, res, params, command)
  return res

def write_results(a, ds:Dataset, res:dict, params:dict, command:str):
  from models.report import write_json, write_markdown, plot
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
         "dataset": {"path": str(a.dataset), "hash": ds.hash, "rows": len(ds), "kernels": int(len(np.unique(ds.kernel)))},
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
           relabel_note(a.dataset),
           "std is the spread (ddof=0) of the per-seed means."]}
  rd = Path(a.results); rd.mkdir(parents=True, exist_ok=True)
  write_json(rd / f"{name}.json", out)
  write_markdown(rd / f"{name}.md", out)
  plot(out, res["oof"], rd, name)
  log(f"wrote {rd}/{name}.json, {name}.md, {name}_pred_vs_measured.png, {name}_tau_per_family.png")

def relabel_note(store:str) -> str:
  """What the labels are: how many rows dataset.retime timed again (the rest are as the generation measured them)."""
  n = stats(store)["retimed"]
  if not any(n.values()): return "Labels as the generation measured them (no row timed again by dataset.retime)."
  return (f"Labels as stored: {n['retimed']:,} early-stopped rows were timed again in full and {n['consolidated']:,} rows (each kernel's "
          "fastest stored configs, with a held-out model's top picks and random ones) were timed again together in one run, scaled "
          "to the kernel's other rows (dataset.retime; each row's old time is kept in the store's error column).")

def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  a = parse_args(argv)
  try: run(a, argv)
  except (TrainError, CostModelError) as e:
    print(f"train-cost-model: error: {e}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
