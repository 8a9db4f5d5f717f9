"""Search strategies over opt sequences. One interface: `run(ctx) -> None` explores, measuring through ctx.measurer (which counts
and enforces the budget); the answer is the fastest verified config measured, never slower than tinygrad's hand-coded choice.

- beam:   model-guided beam; children of every beam entry are scored by the cost model, and only the top-k per round are compiled
          and timed (k=0: pure-model mode, nothing measured until the final verification).
- mcts:   UCT with progressive widening; the cost model supplies the priors, measured runtimes the reward.
- random: random walks of depth 1-8 (the dataset's sampler).
- tpe:    optuna's TPE over fixed-length sequences of action indices.
- tinygrad-beam: tinygrad's own BEAM search, unchanged, with its compiled and timed candidates counted."""
from __future__ import annotations
import math, random
from dataclasses import dataclass, field
from typing import Callable
import numpy as np
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from dataset.sampler import ACTIONS, hand_coded, random_walk, replay
from search.measure import BudgetExhausted, Measurer
from search.space import children

Scorer = Callable[[list[Scheduler]], np.ndarray]   # higher = predicted faster; comparable within one kernel

@dataclass
class Context:
  base: Scheduler
  measurer: Measurer
  score: Scorer|None = None
  rng: random.Random = field(default_factory=lambda: random.Random(0))
  actions: list[Opt] = field(default_factory=lambda: ACTIONS)
  final_picks: list[tuple[Opt, ...]] = field(default_factory=list)  # model's picks left for the final verification
  state: dict = field(default_factory=dict)   # where a search stopped, so that a later run() with more budget goes on from there

def _argsort_desc(x:np.ndarray) -> np.ndarray: return np.argsort(-np.asarray(x), kind="stable")

@dataclass
class Beam:
  """Model-guided beam. Per round: expand every beam entry, score all children, time the top-k; the next beam is the best `width`
  children by measured time, filled up by score. Stops after `patience`+1 rounds in a row without a better time, at max_depth,
  or when the budget runs out. k=0 (pure-model): descend by score alone and leave the top pick of every depth to the final
  verification. seed_picks > 0: time that many of those picks first, in one batch, and start the measured beam from the best."""
  width: int = 4
  k: int = 3
  seed_picks: int = 0   # 6 on the CPU (2026-11-21, 8 kernels, budget 12): worse on 5, better on 2; the GPU bench compares both
  max_depth: int = 12
  patience: int = 1
  name: str = "beam"

  def _expand(self, ctx:Context, beam:list, seen:set) -> tuple[list[tuple[tuple[Opt, ...], Scheduler]], float]:
    """Every new child of the beam, best score first, and the best score."""
    cands = [(o + (a,), s) for o, k in beam for a, s in children(k, ctx.actions) if s.ast.key not in seen]
    cands = list({s.ast.key: (o, s) for o, s in cands}.values())
    if not cands: return [], -math.inf
    seen.update(s.ast.key for _, s in cands)
    scores = ctx.score([s for _, s in cands])
    order = _argsort_desc(scores)
    return [cands[i] for i in order], float(scores[order[0]])

  def _model_pass(self, ctx:Context) -> list[tuple[tuple[Opt, ...], Scheduler]]:
    """Descend while the best score improves; the top pick of every depth, deepest first."""
    beam, seen, picks, best = [((), ctx.base)], {ctx.base.ast.key}, [], -math.inf
    for _ in range(self.max_depth):
      ranked, top = self._expand(ctx, beam, seen)
      if not ranked or top <= best: break
      best, beam = top, ranked[:self.width]
      picks.insert(0, ranked[0])
    return picks

  def run(self, ctx:Context):
    """Search until the budget runs out or the beam stops improving. Run again with a larger budget (tune-model's scheduler does),
    it goes on from the round it stopped in: nothing is expanded or measured twice."""
    assert ctx.score is not None, "model-guided beam needs a cost model"
    st = ctx.state
    if not st:
      picks = self._model_pass(ctx) if self.k == 0 or self.seed_picks else []
      if self.k == 0:
        ctx.final_picks = [o for o, _ in picks] + ctx.final_picks
        st["stopped"] = True
        return
      st.update(beam=[((), ctx.base)], best=math.inf, stale=0, depth=0, ranked=None, stopped=False, picks=picks[:self.seed_picks])
      st["seen"] = {ctx.base.ast.key}
    try:
      if st["picks"]:
        timed = sorted(zip(ctx.measurer.measure([o for o, _ in st["picks"]]), range(len(st["picks"]))))
        st["beam"] = [st["picks"][i] for t, i in timed if t < math.inf][:self.width] or st["beam"]
        st["best"], st["picks"] = timed[0][0], []
        st["seen"] |= {k.ast.key for _, k in st["beam"]}
      while not st["stopped"]:
        if st["depth"] >= self.max_depth: st["stopped"] = True; break
        if st["ranked"] is None: st["ranked"] = self._expand(ctx, st["beam"], st["seen"])[0]
        if not (ranked := st["ranked"]): st["stopped"] = True; break
        top = ranked[:self.k]
        timed = sorted(zip(ctx.measurer.measure([o for o, _ in top]), range(len(top))))   # BudgetExhausted: this round again next run
        beam = [top[i] for t, i in timed if t < math.inf][:self.width]
        st["beam"], st["ranked"], st["depth"] = beam + ranked[self.k:][:max(0, self.width - len(beam))], None, st["depth"] + 1
        if timed[0][0] < st["best"]: st["best"], st["stale"] = timed[0][0], 0
        elif st["stale"] >= self.patience: st["stopped"] = True
        else: st["stale"] += 1
    except BudgetExhausted: return

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
  model's prior; each simulation measures the one node it expands; the value of a subtree is best_time_overall / its best time."""
  c_puct: float = 1.5
  pw_c: float = 1.0
  pw_alpha: float = 0.5
  temperature: float = 1.0
  max_depth: int = 10
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
  def run(self, ctx:Context):
    """Simulate until the budget runs out or 32 in a row find nothing new; run again with a larger budget, it goes on with the
    same tree."""
    root, stalls = ctx.state.setdefault("root", _Node((), ctx.base)), 0
    try:
      while ctx.measurer.has_budget() and stalls < 32:
        node, path, depth, grew = root, [root], 0, False
        while True:
          if node.pending is None: self._expand_list(ctx, node, depth)
          if node.pending and len(node.kids) < math.ceil(self.pw_c * max(node.n, 1) ** self.pw_alpha):
            prior, opts, sched = node.pending[0]
            t = ctx.measurer.measure([opts])[0]   # before the pop: a child the budget cut off stays pending
            node.pending.pop(0)
            child = _Node(opts, sched, prior)
            child.time = child.best = t
            node.kids.append(child); path.append(child); grew = True
            break
          if not node.kids: break   # nothing left below this node
          best = min(ctx.measurer.best, min(c.best for c in node.kids))
          node = max(node.kids, key=lambda c: (best / c.best if c.best < math.inf else 0.0)
                                             + self.c_puct * c.prior * math.sqrt(node.n + 1) / (1 + c.n))
          path.append(node); depth += 1
        stalls = 0 if grew else stalls + 1
        for nd in path:
          nd.n += 1
          nd.best = min(nd.best, path[-1].best)
      ctx.state["stopped"] = stalls >= 32
    except BudgetExhausted: return

@dataclass
class RandomSearch:
  batch: int = 4
  name: str = "random"
  def run(self, ctx:Context):
    tries = 0
    try:
      while ctx.measurer.has_budget() and tries < 100:
        walks = [w for w in (random_walk(ctx.base, ctx.rng, ctx.rng.randint(1, 8)) for _ in range(self.batch)) if w]
        new = [w for w in dict.fromkeys(walks) if w not in ctx.measurer.times]
        tries = tries + 1 if not new else 0
        if new: ctx.measurer.measure(new)
    except BudgetExhausted: return

@dataclass
class TPE:
  """optuna's TPE over sequences: a depth and one categorical action index per position; sequences that do not apply are
  pruned without a measurement."""
  max_depth: int = 6
  name: str = "tpe"
  def run(self, ctx:Context):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=ctx.rng.randrange(2**31), multivariate=True))
    idx = list(range(len(ctx.actions)))
    def objective(trial):
      depth = trial.suggest_int("depth", 1, self.max_depth)
      opts = tuple(ctx.actions[trial.suggest_categorical(f"a{i}", idx)] for i in range(self.max_depth))[:depth]
      if replay(ctx.base, opts, limits=True) is None: raise optuna.TrialPruned()
      t = ctx.measurer.measure([opts])[0]
      return math.log(t) if t < math.inf else 10.0
    trials = 0
    while ctx.measurer.has_budget() and trials < 5000:
      try: study.optimize(objective, n_trials=25, catch=())
      except BudgetExhausted: return
      trials += 25

@dataclass
class TinygradBeam:
  """tinygrad's BEAM, unchanged (its own candidates, timing protocol and exit rule); counted by wrapping the two functions its
  loop calls in this process. The budget does not apply: BEAM runs to its own end."""
  amt: int = 2
  name: str = "tinygrad-beam"
  def run(self, ctx:Context):
    from tinygrad.codegen.opt import search as S
    from tinygrad.codegen.opt.postrange import args_from_ast
    m = ctx.measurer
    orig_actions, orig_time = S.get_kernel_actions, S._time_program
    def counted_actions(*a, **kw):
      acted = orig_actions(*a, **kw); m.compiled += len(acted) - (1 if kw.get("include_0", True) else 0); return acted
    def counted_time(*a, **kw): m.timed += 1; return orig_time(*a, **kw)
    S.get_kernel_actions, S._time_program = counted_actions, counted_time
    try:
      rawbufs, var_vals = args_from_ast(ctx.base.ast, m.device)
      k = S.beam_search(ctx.base.copy(), rawbufs, var_vals, self.amt, disable_cache=True)
    finally: S.get_kernel_actions, S._time_program = orig_actions, orig_time
    ctx.final_picks = [tuple(k.applied_opts[len(ctx.base.applied_opts):])]

STRATEGIES: dict[str, Callable[..., object]] = {"beam": Beam, "mcts": MCTS, "random": RandomSearch, "tpe": TPE,
                                                 "tinygrad-beam": TinygradBeam, "pure-model": lambda **kw: Beam(k=0, name="pure-model", **kw)}

@dataclass
class Outcome:
  strategy: str
  opts: tuple[Opt, ...]
  time_s: float
  hand_opts: tuple[Opt, ...]
  hand_time_s: float
  verified: bool
  check: str|None
  compiled: int
  timed: int
  search_s: float
  trajectory: list

def finish(ctx:Context, strategy:str, search_s:float) -> Outcome:
  """The answer: the model's final picks and tinygrad's hand-coded choice are measured too (outside the search budget, and
  counted), then the fastest measured config that passes the correctness check wins. A config that fails is never the answer."""
  m = ctx.measurer
  hand = hand_coded(ctx.base)
  m.budget.measurements = m.budget.seconds = None   # final verification is not search
  m.measure(list(dict.fromkeys([hand, *ctx.final_picks])))
  for opts in sorted((o for o, t in m.times.items() if t < math.inf), key=lambda o: m.times[o]):
    if (err := m.verify(opts)) is None:
      return Outcome(strategy, opts, m.times[opts], hand, m.times[hand], True, None, m.compiled, m.timed, search_s, m.trajectory)
    m.times[opts] = math.inf   # wrong: never the answer
  return Outcome(strategy, (), math.inf, hand, m.times.get(hand, math.inf), False, "no measured config passed the check",
                 m.compiled, m.timed, search_s, m.trajectory)
