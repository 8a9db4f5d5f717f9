"""tinygrad's own BEAM search on one kernel, unchanged (its candidates, timing protocol and exit rule), with hooks that count what it
compiles and times. Search compares against it (search.baselines.TinygradBeam); the dataset measures its pick and every prefix of
it (generate-dataset --tinygrad-beam): on ResNet-50 b32 the store's climbs never reached BEAM's region, whose configs replay on the
corpus kernels of the same loop nests but had never been measured."""
from __future__ import annotations
from typing import Callable
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler

def tinygrad_beam(base:Scheduler, device:str, amt:int=2, on_compiled:Callable[[int], None]=lambda n: None,
                  on_timed:Callable[[], None]=lambda: None) -> tuple[Opt, ...]:
  """The opts BEAM=amt picks for `base`, relative to base's own. Compiles in tinygrad's pool (PARALLEL), times on `device`."""
  from tinygrad.codegen.opt import search as S
  from tinygrad.codegen.opt.postrange import args_from_ast
  orig_actions, orig_time = S.get_kernel_actions, S._time_program
  def counted_actions(*a, **kw):
    acted = orig_actions(*a, **kw); on_compiled(len(acted) - (1 if kw.get("include_0", True) else 0)); return acted
  def counted_time(*a, **kw): on_timed(); return orig_time(*a, **kw)
  S.get_kernel_actions, S._time_program = counted_actions, counted_time
  try:
    rawbufs, var_vals = args_from_ast(base.ast, device)
    k = S.beam_search(base.copy(), rawbufs, var_vals, amt, disable_cache=True)
  finally: S.get_kernel_actions, S._time_program = orig_actions, orig_time
  return tuple(k.applied_opts[len(base.applied_opts):])
