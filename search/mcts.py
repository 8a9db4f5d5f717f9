"""MCTS over opt sequences: UCT with progressive widening, the cost model's scores as priors, measured runtimes as rewards."""
from __future__ import annotations
import math
from dataclasses import dataclass, field
import numpy as np
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from dataset.sampler import children
from search.measure import BudgetExhausted
from search.context import Context

@dataclass
class _Node:
  opts: tuple[Opt, ...]
  sched: Scheduler
  prior: float = 1.0
  n: int = 0
  best: float = math.inf                      # best measured time in this subtree
  time: float|None = None
  pending: list[tuple[float, tuple[Opt, ...], Scheduler]]|None = None   # unexpanded children, best prior first
  kids: list[_Node] = field(default_factory=list)

@dataclass
class MCTS:
  """UCT/PUCT with progressive widening: a node may have ceil(pw_c * n^pw_alpha) expanded children, taken in order of the
  model's prior; each simulation measures the one node it expands; the value of a subtree is best_time_overall / its best time.
  `batch` simulations are selected at once (a visit counts when selected: a virtual loss that spreads them) and their nodes
  measured together, so that they compile in parallel: one compile latency per batch, not per simulation."""
  c_puct: float = 1.5
  pw_c: float = 1.0
  pw_alpha: float = 0.5
  temperature: float = 1.0
  max_depth: int = 10
  batch: int = 6
  name: str = "mcts"
  def _expand_list(self, ctx:Context, node:_Node, depth:int):
    kids = children(node.sched, ctx.actions) if depth < self.max_depth else []
    if not kids: node.pending = []; return
    if ctx.score is not None:
      s = np.asarray(ctx.score([k for _, k in kids]), dtype=np.float64)
      p = np.exp((s - s.max()) / (self.temperature * (s.std() + 1e-9)))
    else: p = np.array([ctx.rng.random() for _ in kids])
    p = p / p.sum()
    node.pending = sorted([(float(pi), node.opts + (a,), k) for pi, (a, k) in zip(p, kids)], key=lambda x: -x[0])

  def _select(self, ctx:Context, root:_Node) -> list[_Node]|None:
    """One simulation's path down to the child it adds (not measured yet), or None if it ends on a node with nothing left."""
    node, path, depth = root, [root], 0
    while True:
      if node.pending is None: self._expand_list(ctx, node, depth)
      if node.pending and len(node.kids) < math.ceil(self.pw_c * max(node.n, 1) ** self.pw_alpha):
        prior, opts, sched = node.pending.pop(0)
        node.kids.append(child := _Node(opts, sched, prior))
        path.append(child)
        break
      if not node.kids: path = None; break
      best = min(ctx.measurer.best, min(c.best for c in node.kids))
      node = max(node.kids, key=lambda c: (best / c.best if c.best < math.inf else 0.0)
                                         + self.c_puct * c.prior * math.sqrt(node.n + 1) / (1 + c.n))
      path.append(node); depth += 1
    for nd in (path or []): nd.n += 1
    return path

  def _backup(self, ctx:Context, paths:list[list[_Node]]):
    """Measured leaves update their path; a leaf the budget cut off, or whose compile straggled, goes back to its parent's pending
    list, visits undone (it is selected again soon: it heads the list)."""
    for path in reversed(paths):
      leaf, parent = path[-1], path[-2]
      if (t := ctx.measurer.times.get(leaf.opts)) is None:
        parent.kids.remove(leaf)
        parent.pending.insert(0, (leaf.prior, leaf.opts, leaf.sched))
        for nd in path: nd.n -= 1
        continue
      leaf.time = leaf.best = t
      for nd in path: nd.best = min(nd.best, t)

  def step(self, ctx:Context) -> bool:
    """One batch of simulations measured; False once the budget is spent or 32 batches in a row found nothing new. Called again
    with a larger budget, it goes on with the same tree."""
    st = ctx.state
    root = st.setdefault("root", _Node((), ctx.base))
    while ctx.measurer.has_budget() and st.get("stalls", 0) < 32:
      if not (paths := [p for _ in range(self.batch) if (p := self._select(ctx, root)) is not None]):
        st["stalls"] = st.get("stalls", 0) + 1; continue
      st["stalls"] = 0
      try: ctx.measurer.measure([p[-1].opts for p in paths], cut=True)   # a straggler's leaf goes back to pending
      except BudgetExhausted: return False
      finally: self._backup(ctx, paths)
      return True
    st["stopped"] = st.get("stalls", 0) >= 32
    return False

  def run(self, ctx:Context):
    while self.step(ctx): pass
