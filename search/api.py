"""The search as a library: load the cost model for a device, and search kernels with any strategy (what `search`, drop-in tuning
(search.dropin) and the benchmarks call)."""
from __future__ import annotations
import dataclasses, random, sys, time
from pathlib import Path
from typing import Callable
from dataset.kernel import Kernel, scheduler
from search.measure import Budget, Measurer
from search.context import Context
from search.strategies import STRATEGIES, Outcome, finish, interleave

def load_model(path:str|None, device:str, dev_name:str, arch:str, allow_mismatch:bool,
               note:Callable[[str], None]=lambda s: print(s, file=sys.stderr)):
  """The cost model for this device: its arch must match; another device of the same arch (an H100 with an H200 model) is
  allowed with a note, and a model of another arch only with allow_mismatch. `note`: where the note goes (a caller that checks
  more input after this keeps it until then, so that a bad input's error is the only line)."""
  from models.cost_model import CostModel, default_model_path
  p = Path(path) if path else default_model_path(device, arch)
  model = CostModel.load(p, arch=None if allow_mismatch else arch)
  if model.meta.get("device") != dev_name: note(f"search: note: {p.name} was trained on {model.meta.get('device')}, this is {dev_name}")
  return model, str(p)

def search_kernels(kernels:list[Kernel], device:str, strategy:str, budget:Budget, scorer, seed:int, workers:int, progress=None,
                   history=None, actions:list|None=None, **strategy_args) -> list[tuple[Outcome, Measurer]]:
  """A workload's kernels searched together (strategies.interleave: one kernel's round is timed while the others' compile), each
  under its own copy of `budget`. Every Outcome's search_s is the wall time of the whole search, which the kernels share."""
  # tinygrad's BEAM compiles in its own pool (PARALLEL): it must not start ours, which a learned strategy run after it would then get free
  ms = [Measurer(k, device, dataclasses.replace(budget), workers=0 if strategy == "tinygrad-beam" else workers, on_timed=progress) for k in kernels]
  ctxs = [Context(scheduler(k.ast, m.ren), m, scorer, random.Random(seed)) for k, m in zip(kernels, ms)]
  for k, c in zip(kernels, ctxs):
    c.history = history.candidates(c.base, k.key) if history is not None else []   # dataset.history
    if actions is not None: c.actions = actions
  # each kernel's answer is verified as its search ends, while the others' compiles go on, not after the last one's: on unseen
  # splits 6 and 7, searched 3-11 kernels at a time, each group's wall went on 0.0-5.5 s after its last timing, verifying every
  # kernel in turn (9.0 s of the learned 92.8 s, and 2.8 of 72.4 s)
  st, outs = time.perf_counter(), {}
  interleave(STRATEGIES[strategy](**strategy_args), ctxs, lambda i: outs.__setitem__(i, finish(ctxs[i], strategy, 0.0)))
  wall = time.perf_counter() - st
  return [(dataclasses.replace(outs[i], search_s=wall), c.measurer) for i, c in enumerate(ctxs)]   # interleave stops every kernel

def tune_kernel(kernel:Kernel, device:str, strategy:str, budget:Budget, scorer, seed:int, workers:int, progress=None,
                **strategy_args) -> tuple[Outcome, Measurer]:
  return search_kernels([kernel], device, strategy, budget, scorer, seed, workers, progress, **strategy_args)[0]
