"""Scoring speed against measuring speed: candidates featurized and scored per second here (held-out kernels' candidates, fresh
processes), and candidates compiled and timed per second on the GPU host (from a generate-dataset log's summary)."""
from __future__ import annotations
import json, multiprocessing, os, tempfile, time
from pathlib import Path
from typing import Callable
import numpy as np
from threadpoolctl import threadpool_limits
from dataset.store import Store
from dataset.kernel import Kernel, scheduler, opts_from_json
from models.data import Dataset, renderer
from models.features import featurize
from models.evaluate import kernel_kfold
from models.ranker import Ranker
from models.mlp import MLPRanker
from models.mlp_forward import NumpyMLP
from models.cost_model import schedulers
from models.resources import ResourceModel, augment
from models.heldout import resource_model

ROOT = Path(__file__).resolve().parents[1]
GPU_LOG = ROOT / "dataset" / "logs" / "gpu_run3_generate.log"   # the H200 generation run whose summary gives the compile+time rate

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

def measure_speed(ds:Dataset, store_path:str, kernels:list[str], seed:int, threads:int, max_candidates:int=3000, blend:bool=False,
                  log:Callable[[str], None]=lambda s: None) -> dict:
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
