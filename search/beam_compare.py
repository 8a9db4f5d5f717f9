"""tinygrad's BEAM=N on a model's kernels, kernel by kernel, for tune-model's comparison (--compare-beam): as BEAM=N runs it inside
tinygrad's pipeline; the latency is then measured with its opts applied through the same cache hook as the tuned ones."""
from __future__ import annotations
import time
from typing import Callable
from dataset.errors import one_line
from dataset.device import renderer_for
from dataset.kernel import Kernel, opts_to_json, scheduler
from dataset.sampler import hand_coded
from search.api import tune_kernel
from search.cache import TunedCache
from search.measure import Budget

def beam_kernels(kernels:list[Kernel], device:str, cache:TunedCache, amt:int, workers:int, search:bool=True,
                 log:Callable=lambda s: None) -> list[dict]:
  """tinygrad's BEAM=amt (search.baselines.TinygradBeam: its beam_search, unchanged) on each kernel the cache lacks, one at a time,
  as BEAM=amt does inside tinygrad's pipeline; every result is cached as found with its search seconds, so a run cut off resumes
  where it stopped and the tuning time is the sum over kernels. A pick that fails the correctness check is replaced by the
  fastest config that passes (hand-coded at worst), which can only flatter BEAM. search=False: only what the cache has.
  One row per kernel: key, beam_us (None: not searched yet), beam_s."""
  rows = []
  for k in kernels:
    if (hit := cache.get(k.key, device)) is None and search:
      st = time.perf_counter()
      try:
        o, m = tune_kernel(k, device, "tinygrad-beam", Budget(), None, 0, workers, amt=amt)
        m.close()
        opts, t, status = (o.opts, o.time_s, "ok") if o.verified else (o.hand_opts, o.hand_time_s, f"failed: {o.check}")
        hit = dict(opts=opts_to_json(opts), time_us=t*1e6, tune_s=o.search_s, timed=o.timed, compiled=o.compiled, status=status, ts=time.time())
      except Exception as e:   # tinygrad's own run would stop here; the kernel keeps its default and the seconds still count
        hit = dict(opts=opts_to_json(hand_coded(scheduler(k.ast, renderer_for(device)))), time_us=None,
                   tune_s=time.perf_counter() - st, timed=0, compiled=0, status=f"failed: {one_line(e, 300)}")
      cache.put(k.key, device, name=k.name, strategy=f"tinygrad BEAM={amt}", **hit)
      log(f"  BEAM={amt} {k.name}: {hit['status']}, {hit['timed']} timed, {hit['tune_s']:.1f} s")
    rows.append({"key": k.key, "beam_us": None if hit is None else hit["time_us"], "beam_s": None if hit is None else hit["tune_s"],
                 "beam_timed": None if hit is None else hit["timed"], "done": hit is not None})
  return rows
