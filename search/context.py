"""The search context every strategy works in: a kernel's base schedule, its Measurer, the cost model's scorer and where its search
stopped; and the scored expansion of configs (their children scored by the model), here or in the compile pool's workers."""
from __future__ import annotations
import random
from dataclasses import dataclass, field
from typing import Callable
import numpy as np
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from dataset.sampler import ACTIONS, children, neighbors, replay
from dataset.compile import worker_base
from search.measure import Measurer
from search.adapt import shape_terms

Scorer = Callable[[list[Scheduler]], np.ndarray]   # higher = predicted faster; comparable within one kernel
# (score, opts, AST key of the kernel they schedule, adapt.shape_terms, the scorer's second opinion: models.cost_model.Scorer.pair)
Scored = tuple[float, tuple[Opt, ...], bytes, tuple[float, ...], float|None]

# the Schedulers of the children scored last, by (kernel, opts): a descent's next parents are among them, and replaying a parent
# from the root cost 13% of a dilated conv's descent (1.3 of 9.6 s, 33 parents 3-8 opts deep). A depth's children (4 parents',
# 160-240 on a conv) fit; more costs: ~27 KB of UOps each, and at 1,024 kept the drop-in, tune-model and network tests took 76 s
# against 62 s without the cache (the cyclic GC walks them), 66 s at 256
_KIDS: dict[tuple[bytes, tuple[Opt, ...]], Scheduler] = {}
KIDS_KEPT = 256

def _scored(base:Scheduler, score:Scorer, actions:list[Opt], parent:tuple[Opt, ...], near:bool=False) -> list[Scored]:
  """Every child of `parent` (a config of `base`), scored; near: every neighbour of it instead (dataset.sampler.neighbors)."""
  if near: cands = neighbors(base, parent, actions)
  else:
    k = _KIDS.get((base.ast.key, parent)) or replay(base, parent)
    cands = [(parent + (a,), c) for a, c in children(k, actions)] if k is not None else []
  if not cands: return []
  if len(_KIDS) + len(cands) > KIDS_KEPT: _KIDS.clear()
  _KIDS.update(((base.ast.key, o), c) for o, c in cands)
  ks = [c for _, c in cands]
  sc, alt = score.pair(ks) if hasattr(score, "pair") else (score(ks), None)
  alt = [None]*len(ks) if alt is None else np.asarray(alt).tolist()   # None: the scorer has no second opinion
  return [(float(x), o, c.ast.key, shape_terms(c), y) for x, y, (o, c) in zip(np.asarray(sc), alt, cands)]

def scored_children(args:tuple[bytes, str, Scorer, list[Opt], tuple[Opt, ...], bool]) -> list[Scored]:
  """_scored in a compile worker (AST blob, kernel key, scorer, actions, parent, near)."""
  blob, key, score, actions, parent, near = args
  return _scored(worker_base(blob, key), score, actions, parent, near)

class Expansion:
  """The scored children of some configs (near: their neighbours instead, dataset.sampler.neighbors): enumerating and
  featurizing a convolution's children costs ~0.15 s of CPU per parent, so with a compile pool (and a scorer that can travel to
  it) the parents are expanded in workers, in parallel, and the caller may go on meanwhile; without one they are expanded here,
  when asked. Workers a parent each would leave idle (a descent has 4
  parents, the pool 15 workers) split each parent's actions between them: a depth costs a third of a parent's expansion."""
  def __init__(self, ctx:Context, parents:list[tuple[Opt, ...]], near:bool=False, alongside:int=1, actions:list[Opt]|None=None):
    self.ctx, self.futs, self.rows, self.near = ctx, None, None, near   # alongside: expansions started with it, as many parents each
    actions = ctx.actions if actions is None else actions
    m, portable = ctx.measurer, getattr(ctx.score, "portable", lambda: False)()
    # a config's neighbours are a job each: they cost a few replays, not a scan of the action space
    chunks = 1 if near else max(1, (m.workers if m is not None else 0) // max(1, len(parents)*alongside*ctx.share))
    n = len(actions)
    cuts = [n*i//chunks for i in range(chunks + 1)]   # contiguous slices, in order: the same children, in the same order, as one
    self.jobs = [(p, actions[a:b]) for p in parents for a, b in zip(cuts, cuts[1:])]
    # one job alone (a config's neighbours) runs here, as fast, unless other kernels' searches share this thread (ctx.share, set
    # where they are searched together): there a neighbourhood's 9-102 ms of replays and scoring hold up their rounds
    if m is not None and m.pool is not None and (len(self.jobs)*alongside > 1 or ctx.share > 1) and portable:
      try: self.futs = [m.pool.submit(scored_children, (m.blob, m.kernel.key, ctx.score, acts, p, near)) for p, acts in self.jobs]
      except Exception: self.futs = None   # a broken pool: here, then
  def done(self) -> bool: return self.futs is None or all(f.done() for f in self.futs)
  def result(self) -> list[Scored]:
    if self.rows is None:
      local = lambda p, acts: _scored(self.ctx.base, self.ctx.score, acts, p, self.near)
      self.rows = []
      for i, (p, acts) in enumerate(self.jobs):
        try: self.rows += self.futs[i].result() if self.futs is not None else local(p, acts)
        except Exception: self.rows += local(p, acts)   # a worker that failed: the same here
    return self.rows

class Joined:
  """Expansions of single parents as one (Expansion's interface): Beam reuses a speculated parent's whatever the others are."""
  def __init__(self, parts:list): self.parts = parts
  def done(self) -> bool: return all(p.done() for p in self.parts)
  def result(self) -> list: return [r for p in self.parts for r in p.result()]

@dataclass
class Context:
  base: Scheduler
  measurer: Measurer|None          # None: scoring only (a compile worker computing a seed batch)
  score: Scorer|None = None
  rng: random.Random = field(default_factory=lambda: random.Random(0))
  actions: list[Opt] = field(default_factory=lambda: ACTIONS)
  final_picks: list[tuple[Opt, ...]] = field(default_factory=list)  # model's picks left for the final verification
  state: dict = field(default_factory=dict)   # where a search stopped, so that a later run() with more budget goes on from there
  share: int = 1                   # kernels expanding in the compile pool at once: a parent's actions split over the rest
  round_size: int|None = None      # candidates of Beam's next later round, if not its k (tune-model's scheduler sets it)
  history: list[tuple[Opt, ...]] = field(default_factory=list)   # configs measured fast on kernels of this loop nest (dataset.history)
  first_batch: list[tuple[Opt, ...]] = field(default_factory=list)   # the first batch, as compiled ahead (drop-in reports what of it went untimed)
  seed_picks: int|None = None      # the model's picks in this kernel's first batch, if not the beam's own (task_scheduler.first_effort)
  descent_width: int|None = None   # its model descent's width, if not the beam's own (likewise)
  again: bool = True               # a round after this one is expected (task_scheduler.schedule's again): worth guessing it ahead
  alt: dict[bytes, tuple[float, tuple[Opt, ...]]] = field(default_factory=dict)   # the descent's configs by key: (second opinion, opts)
  def expand(self, parents:list[tuple[Opt, ...]], near:bool=False, alongside:int=1, actions:list[Opt]|None=None) -> Expansion:
    return Expansion(self, parents, near, alongside, actions)
