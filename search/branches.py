"""The first batch's branches: a config of an action family the model ranks low, timed anyway, one pick each, the best of a model
descent from that family's best-scored first actions (Beam.group_branch: a grouped reduction; Beam.tc_branch: a tensor-core axis
the picks do not use). search.first_batches runs the branches' descents beside each kernel's own; Beam.prepare merges them."""
from __future__ import annotations
from tinygrad.codegen.opt import Opt, OptOps
from search.context import Context
from search.picks import grouped, rank, second

Cands = list[tuple[tuple[Opt, ...], bytes]]

def _first_actions(ctx:Context, pool:list, keep) -> Cands:
  """The depth-one configs `keep` takes, best-scored first: the pool's (a descent from the root scored them), or the root's children."""
  return [c for c in pool if len(c[0]) == 1 and keep(c[0])] or [c for c in rank(ctx.expand([()]).result(), {ctx.base.ast.key})[0] if keep(c[0])]

def group_candidates(beam, ctx:Context, pool:list=()) -> Cands:
  """The model's configs that group a reduction, best first: a descent from the best-scored GROUP/GROUPTOP first actions, then
  those actions. Empty if the kernel has no reduction to group."""
  roots = _first_actions(ctx, pool, grouped)[:ctx.descent_width or beam.descent_width]
  if not roots: return []
  picks, _ = beam._descent(ctx, [o for o, _ in roots], {ctx.base.ast.key} | {key for _, key in roots}, beam.max_depth, None)
  return picks + roots

def tc_candidates(beam, ctx:Context, pool:list=()) -> Cands:
  """tc_branch's configs, best first: where the kernel takes tensor cores on more than one axis, a descent from the best-scored TC
  action on an axis other than the best-scored TC action's, then that action. Empty where there is one axis or none."""
  tcs = _first_actions(ctx, pool, lambda o: o[0].op is OptOps.TC)
  if not (roots := [c for c in tcs if c[0][0].axis != tcs[0][0][0].axis]): return []
  picks, _ = beam._descent(ctx, [roots[0][0]], {ctx.base.ast.key, roots[0][1]}, beam.max_depth, None)
  return picks[:1] + roots[:1]

def second_opinions(beam, ctx:Context, seeds:list) -> Cands:
  """The beam's second_opinion best configs of its descent by the scorer's second opinion (ctx.alt) not among the seeds, best
  first: timed beside the first batch, not in it (Beam.prepare), so their compiles (the slow ones the compile penalty keeps out
  of the model's picks) hold none of its timings, and they take no pick's place."""
  keys = {key for _, key in seeds}
  mine = sorted(((y, o, key) for key, (y, o) in ctx.alt.items() if key not in keys and y is not None), key=lambda r: -r[0])
  return [(o, key) for _, o, key in mine[:beam.second_opinion]]

def _with(ctx:Context, seeds:list, c, size:int) -> list:
  if c is None: return seeds
  if ctx.measurer is not None: ctx.measurer.prefetch([c[0]])
  return second(seeds, c, size)   # after the hand-coded one, in place of the model's last pick

def with_group(beam, ctx:Context, seeds:list, cands:Cands|None, size:int, pool:list=()) -> list:
  """With group_branch, where no seed groups a reduction: the seeds with the first of `cands` (group_candidates', computed here if
  None) not among them. With group_best, where no seed is the first of `cands` (a shallow grouped pick does not stand in for it)."""
  if not beam.group_branch or (not beam.group_best and any(grouped(o) for o, _ in seeds)): return seeds
  keys, cands = {key for _, key in seeds}, group_candidates(beam, ctx, pool) if cands is None else cands
  if beam.group_best: cands = cands[:1]
  return _with(ctx, seeds, next((c for c in cands if c[1] not in keys), None), size)

def with_tc_axis(beam, ctx:Context, seeds:list, cands:Cands|None, size:int, pool:list=()) -> list:
  """With tc_branch, where the seeds take tensor cores: the seeds with the first of `cands` (tc_candidates', computed here if None)
  on an axis none of them uses."""
  axes = {o.axis for c, _ in seeds for o in c if o.op is OptOps.TC}
  if not beam.tc_branch or not axes: return seeds
  keys, on = {key for _, key in seeds}, lambda c: {o.axis for o in c[0] if o.op is OptOps.TC}
  cands = tc_candidates(beam, ctx, pool) if cands is None else cands
  return _with(ctx, seeds, next((c for c in cands if not on(c) & axes and c[1] not in keys), None), size)
