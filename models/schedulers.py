"""Candidates as Schedulers: what both the data loader (featurizing a store) and the cost model (scoring a search's candidates) build
from an AST and opt sequences."""
from __future__ import annotations
from tinygrad.uop.ops import UOp
from tinygrad.codegen.opt import Opt, KernelOptError
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.renderer import Renderer
from dataset.kernel import scheduler

APPLY_ERRORS = (KernelOptError, AssertionError, IndexError, ValueError, ZeroDivisionError)  # what dataset.sampler.try_apply treats as invalid

def schedulers(ast:UOp, ren:Renderer, opts_list:list[tuple[Opt, ...]]) -> list[Scheduler|None]:
  """The Scheduler of every candidate (None where the opts do not apply). Candidates share prefixes (search extends parents by one
  action), so each is built from its longest already-built prefix: copy() plus the missing apply_opt calls, as dataset.sampler.replay
  does."""
  cache: dict[tuple[Opt, ...], Scheduler|None] = {(): scheduler(ast, ren)}
  out = []
  for opts in opts_list:
    opts = tuple(opts)
    i = len(opts)
    while opts[:i] not in cache: i -= 1
    k = cache[opts[:i]]
    for j in range(i, len(opts)):
      if k is None: break
      k2 = k.copy()
      try: k2.apply_opt(opts[j])
      except APPLY_ERRORS: k2 = None
      cache[opts[:j+1]] = k = k2
    out.append(k)
  return out
