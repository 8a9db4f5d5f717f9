"""Search strategies over opt sequences. One interface: `run(ctx) -> None` explores, measuring through ctx.measurer (which counts
and enforces the budget); the answer is the fastest verified config measured, never slower than tinygrad's hand-coded choice.

- beam:   model-guided beam; children of every beam entry are scored by the cost model, and only the top-k per round are compiled
          and timed (k=0: pure-model mode, nothing measured until the final verification).
- mcts:   UCT with progressive widening; the cost model supplies the priors, measured runtimes the reward.
- random: random walks of depth 1-8 (the dataset's sampler).
- tpe:    optuna's TPE over fixed-length sequences of action indices.
- tinygrad-beam: tinygrad's own BEAM search, unchanged, with its compiled and timed candidates counted."""
from __future__ import annotations
import contextlib, math, random
from dataclasses import dataclass, field, fields
from typing import Callable
import numpy as np
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from dataset.sampler import ACTIONS, children, hand_coded, random_walk, replay
from dataset.compile import worker_base
from dataset.kernel import opts_to_json
from dataset.tinygrad_beam import tinygrad_beam
from search.measure import BudgetExhausted, Measurer
from search.adapt import Correction, kendall, shape_terms

Scorer = Callable[[list[Scheduler]], np.ndarray]   # higher = predicted faster; comparable within one kernel
Scored = tuple[float, tuple[Opt, ...], bytes, tuple[float, ...]]   # (score, opts, AST key of the kernel they schedule, adapt.shape_terms)

def _scored(base:Scheduler, score:Scorer, actions:list[Opt], parent:tuple[Opt, ...]) -> list[Scored]:
  """Every child of `parent` (a config of `base`), scored."""
  if (k := replay(base, parent)) is None or not (kids := children(k, actions)): return []
  return [(float(x), parent + (a,), c.ast.key, shape_terms(c)) for x, (a, c) in zip(np.asarray(score([c for _, c in kids])), kids)]

def scored_children(args:tuple[bytes, str, Scorer, list[Opt], tuple[Opt, ...]]) -> list[Scored]:
  """_scored in a compile worker (AST blob, kernel key, scorer, actions, parent)."""
  blob, key, score, actions, parent = args
  return _scored(worker_base(blob, key), score, actions, parent)

class Expansion:
  """The scored children of some configs: enumerating and featurizing a convolution's children costs ~0.15 s of CPU per parent,
  so with a compile pool (and a scorer that can travel to it) the parents are expanded in workers, in parallel, and the caller
  may go on meanwhile; without one they are expanded here, when asked. Workers a parent each would leave idle (a descent has 4
  parents, the pool 15 workers) split each parent's actions between them: a depth costs a third of a parent's expansion."""
  def __init__(self, ctx:Context, parents:list[tuple[Opt, ...]]):
    self.ctx, self.futs, self.rows = ctx, None, None
    m, portable = ctx.measurer, getattr(ctx.score, "portable", lambda: False)()
    chunks = max(1, (m.workers if m is not None else 0) // max(1, len(parents)*ctx.share))
    n = len(ctx.actions)
    cuts = [n*i//chunks for i in range(chunks + 1)]   # contiguous slices, in order: the same children, in the same order, as one
    self.jobs = [(p, ctx.actions[a:b]) for p in parents for a, b in zip(cuts, cuts[1:])]
    if m is not None and m.pool is not None and len(self.jobs) > 1 and portable:
      try: self.futs = [m.pool.submit(scored_children, (m.blob, m.kernel.key, ctx.score, acts, p)) for p, acts in self.jobs]
      except Exception: self.futs = None   # a broken pool: here, then
  def done(self) -> bool: return self.futs is None or all(f.done() for f in self.futs)
  def result(self) -> list[Scored]:
    if self.rows is None:
      local = lambda p, acts: _scored(self.ctx.base, self.ctx.score, acts, p)
      self.rows = []
      for i, (p, acts) in enumerate(self.jobs):
        try: self.rows += self.futs[i].result() if self.futs is not None else local(p, acts)
        except Exception: self.rows += local(p, acts)   # a worker that failed: the same here
    return self.rows

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
  def expand(self, parents:list[tuple[Opt, ...]]) -> Expansion: return Expansion(self, parents)

def _rank(rows:list[Scored], seen:set[bytes], fix:Correction|None=None, info:dict|None=None) -> tuple[list[tuple[tuple[Opt, ...], bytes]], np.ndarray]:
  """The children not seen before, one per distinct kernel (different actions often give the same one), best score first, and
  their sorted scores; marks them seen. fix: the kernel's online correction of the model's scores; info: where each child's model
  score and shape terms are kept (opts -> (score, terms)), for the correction's next fit."""
  new: dict[bytes, Scored] = {}
  for r in rows:
    if r[2] not in seen and r[2] not in new: new[r[2]] = r
  seen.update(new)
  kept = list(new.values())
  if info is not None: info.update((o, (sc, terms)) for sc, o, _, terms in kept)
  sc = np.array([r[0] for r in kept], np.float64)
  if fix is not None and kept: sc = fix(sc, np.array([r[3] for r in kept], np.float64))
  order = np.argsort(-sc, kind="stable")
  return [(kept[i][1], kept[i][2]) for i in order], sc[order]

def _round_robin(ranked:list, parents:list[tuple[Opt, ...]], k:int) -> list:
  """k children, each parent's best-scored in turn, fastest parent first: scores are most reliable among siblings, and the
  measured order of the parents is not the model's to overrule."""
  by_parent: dict[tuple[Opt, ...], list] = {p: [] for p in parents}
  for c in ranked: by_parent.setdefault(c[0][:-1], []).append(c)
  out, queues = [], [by_parent[p] for p in parents]
  while len(out) < k and any(queues):
    for q in queues:
      if q and len(out) < k: out.append(q.pop(0))
  return out

@dataclass
class Beam:
  """Model-guided beam, in few rounds of many candidates: on the GPU a round costs one compile latency (the candidates compile in
  parallel) and the rounds run one after another, so the wall time is the number of rounds, not of candidates.

  Round 0 (seed): a model-only descent (the best `descent_width` children per depth, until `descent_patience`+1 depths in a row
  bring no better score) proposes candidates; with ctx.history (configs measured fast on kernels of the same loop nest:
  dataset.history) it starts from the best `descent_width` of those (if there are as many) and goes `history_depths` deep, and
  `history_picks` of them take places in the first batch;
  tinygrad's hand-coded choice and the model's `seed_picks` best (its top pick of every depth first, then the best scores overall)
  are timed together; a budget too small for two rounds is all spent in this one, and the search ends there (one_round). Later
  rounds: the `width` fastest measured configs not yet expanded are expanded, their children scored, and `k` timed: each parent's
  best-scored child in turn, fastest parent first. A candidate whose compile straggles far behind its round's (Measurer.measure's
  cut) is not waited for: it joins the next round. Stops after `patience`+1 rounds in a row without a faster time, at max_depth
  rounds, or when the budget runs out. Adaptive (the default): the kernel's measurements re-rank later rounds' children
  (search.adapt.Correction); a first batch whose fastest config is the model's favourite (within confirm_gap) ends the search
  where that config leaves little headroom (it runs at no less than confirm_headroom x the hand-coded config's time: a steep
  first gain says the kernel has more to give, and a batch of the model's picks can all be poor ones);
  where the model's favourite measured unsure_gap slower than the fastest, rounds are of unsure_k and the search takes
  unsure_patience stale rounds more; a round must better the best by min_gain to count. k=0 is pure-model mode: the top pick of every depth, deepest
  first, is left to the final verification. Entries are (opts, AST key)."""
  width: int = 4
  k: int = 6
  seed_picks: int = 8
  max_depth: int = 12
  patience: int = 0
  descent_width: int = 4      # the model-only descent's beam
  descent_patience: int = 0   # depths it goes on without a better score before it stops
  history_picks: int = 3      # first-batch places for ctx.history's configs, taken from the model's picks
  history_depths: int = 1     # with ctx.history, the descent starts from its best configs and goes this deep (0: from the root)
  adaptive: bool = True       # the kernel's measurements correct the model (search.adapt) and decide when the search stops
  min_gain: float = 0.01      # adaptive: a round that betters the best by less is stale
  confirm_gap: float = 0.02   # adaptive: the first batch confirms the model if its top-scored config is within this of the fastest
  confirm_headroom: float = 0.5   # ... and the fastest is no faster than this x the hand-coded config's time (little left to find)
  unsure_gap: float = 0.15    # adaptive: the model is unsure here if its top-scored measured config is this much slower than the fastest
  unsure_patience: int = 1    # adaptive: stale rounds more where the model is unsure
  unsure_k: int = 10          # adaptive: a later round's candidates where the model is unsure
  name: str = "beam"

  def descend(self, ctx:Context) -> tuple[list, list]:
    """The model-only descent: the best `descent_width` children per depth (each depth's expansion in the pool, if any), until
    `descent_patience`+1 depths in a row bring no better score. Returns (the top pick of every depth that improved the best score,
    best first; every scored child, best first)."""
    beam, seen, picks, pool, best, stale = [()], {ctx.base.ast.key}, [], [], -math.inf, 0
    depths = self.max_depth
    if roots := self.history_roots(ctx):
      beam, depths = [o for o, _ in roots], self.history_depths
      seen.update(key for _, key in roots)
      if ctx.measurer is not None: ctx.measurer.prefetch(beam[:self.history_picks])   # the first batch's: compiling meanwhile
    for _ in range(depths):
      ranked, scores = _rank(ctx.expand(beam).result(), seen)
      if not ranked: break
      pool += zip(scores.tolist(), ranked)
      beam = [o for o, _ in ranked[:self.descent_width]]
      if scores[0] <= best:
        if (stale := stale + 1) > self.descent_patience: break
        continue
      best, stale = float(scores[0]), 0
      picks.insert(0, ranked[0])
      if ctx.measurer is not None:
        ctx.measurer.prefetch([ranked[0][0]])   # the top pick of each of the deepest depths is timed: it compiles meanwhile
        # a depth more than the first batch's picks above this one is not (_seed takes the deepest first): its compile, if it
        # still queues, is taken back (GPT-2's attention kernels descend 11 deep: 3 compiles each of ~1 s of a worker, for nothing)
        if len(picks) > (n := self.first_batch(ctx)) and self.k != 0: ctx.measurer.drop(picks[n][0])
    return picks, [c for _, c in sorted(pool, key=lambda x: -x[0])]

  def history_roots(self, ctx:Context) -> list[tuple[tuple[Opt, ...], bytes]]:
    """Where the descent starts instead of the root, if anywhere: the best descent_width of ctx.history's configs. Configs measured
    fast on this loop nest are better roots than the unoptimized kernel, and a descent of a depth or two from them costs a fraction
    of one from the root (GPT-2's attention kernels descend 11 deep). Fewer than descent_width of them is a weak match (GPT-2's
    largest GEMM, 3 configs of its nest: 257 us from them in two runs, 109 us descending from the root): none then."""
    if self.history_depths <= 0 or self.k == 0 or not ctx.history: return []
    roots = [(o, k.ast.key) for o in ctx.history[:self.descent_width] if (k := replay(ctx.base, o)) is not None]
    return roots if len(roots) >= self.descent_width else []

  def one_round(self, ctx:Context) -> bool:
    """Whether the measurement budget is too small to pay for two rounds of seed_picks: then the first batch takes all of it (less
    the hand-coded) and the search ends there, its stragglers not waited for. Each round costs a compile latency: in the H200
    benches of 2026-11-21 a second round of 6 found nothing faster on 13 of 18 kernels, 0.1-2.7% on 4 and 11% on one, for 0.3-3.8 s
    of an op's search (results/logs/search_bench_s6_call1.log), and one spending what stragglers left of a one-round budget found
    1-5% on 3 of 18 kernels (attention's) and nothing elsewhere, for 2.4-7.1 s (results/logs/search_bench_s7_call3.log)."""
    n = ctx.measurer.budget.measurements if ctx.measurer is not None else None
    return n is not None and 1 < n <= 2*(self.seed_picks + 1)

  def first_batch(self, ctx:Context) -> int:
    """Model picks in the first batch (see one_round)."""
    return ctx.measurer.budget.measurements - 1 if self.one_round(ctx) else self.seed_picks

  def _seed(self, ctx:Context) -> list:
    picks, pool = self.descend(ctx)
    if self.k == 0: return picks
    n = self.first_batch(ctx)
    hand = hand_coded(ctx.base)
    seeds = ([(hand, k.ast.key)] if (k := replay(ctx.base, hand)) is not None else []) + picks[:n]
    keys = {key for _, key in seeds}
    for o, key in pool:
      if len(seeds) >= n + 1: break
      if key not in keys: keys.add(key); seeds.append((o, key))
    return seeds

  def _with_history(self, ctx:Context, batch:list) -> list:
    """The first batch with up to history_picks of ctx.history's configs after the hand-coded one, in place of the model's last
    picks (the batch keeps its size, so its compile cost): measured evidence from kernels of the same nest outranks a score."""
    if self.k == 0 or not ctx.history or self.history_picks <= 0: return batch
    hand = ctx.measurer.hand if ctx.measurer is not None else hand_coded(ctx.base)
    head = [c for c in batch[:1] if c[0] == hand]
    keys, hist, room = {key for _, key in head}, [], min(self.history_picks, len(batch) - len(head))   # a one-round batch may be small
    for o in ctx.history:
      if len(hist) >= room: break
      if (k := replay(ctx.base, o)) is not None and k.ast.key not in keys: keys.add(k.ast.key); hist.append((o, k.ast.key))
    if not hist: return batch
    rest = [c for c in batch[len(head):] if c[1] not in keys]
    keep = max(0, len(batch) - len(head) - len(hist))
    if ctx.measurer is not None:
      for o, _ in rest[keep:]: ctx.measurer.drop(o)   # a queued compile of the picks they replace is taken back
    return head + hist + rest[:keep]

  def prepare(self, ctx:Context, batch:list[tuple[Opt, ...]]|None=None) -> list[tuple[Opt, ...]]:
    """The first batch this search will measure (pure-model: its picks), without measuring: what a caller may compile ahead.
    `batch`: that batch as seed_batch computed it in a worker."""
    assert ctx.score is not None, "model-guided beam needs a cost model"
    st = ctx.state
    if not st:
      if batch is None: batch = self._seed(ctx)
      else: batch = [(o, k.ast.key) for o in batch if (k := replay(ctx.base, o)) is not None]
      batch = self._with_history(ctx, batch)
      if self.k == 0:
        ctx.final_picks = [o for o, _ in batch] + ctx.final_picks
        st.update(stopped=True, batch=batch)
      else: st.update(batch=batch, measured=[], expanded=set(), seen={ctx.base.ast.key} | {key for _, key in batch},
                      best=math.inf, stale=0, rounds=0, stopped=False, late=[], expansion=None, info={}, fix=None, gap=0.0,
                      max_rounds=1 if self.one_round(ctx) else self.max_depth)
    return [o for o, _ in st["batch"] or []]

  def _next(self, ctx:Context, wait:bool=True) -> bool:
    """The next round's batch: the stragglers of the last round, then `k` children of the `width` fastest measured configs not
    expanded yet. Their expansion starts now (in the compile pool) if it has not; wait=False returns False while it runs."""
    st = ctx.state
    if st["expansion"] is None:
      beam = [o for o, _ in st["measured"] if o not in st["expanded"]][:self.width]
      st["expanded"].update(beam)
      st["expansion"] = (beam, ctx.expand(beam))
    beam, ex = st["expansion"]
    if not wait and not ex.done(): return False
    late = [c for c in st["late"] if ctx.measurer.ready(c[0])]   # a straggler joins once compiled: no round waits on it twice
    k = ctx.round_size or (self.unsure_k if self.adaptive and st["gap"] > self.unsure_gap else self.k)
    st["batch"] = late + _round_robin(_rank(ex.result(), st["seen"], st["fix"] if self.adaptive else None, st["info"])[0], beam, k)
    st["late"], st["expansion"] = [c for c in st["late"] if c not in late], None
    return True

  def ahead(self, ctx:Context):
    """Get the next round ready without waiting for it: its children scored in the pool, then its batch compiling there, so that
    a later run() starts by timing. tune-model calls it for the kernels its scheduler will search next."""
    st = ctx.state
    if not st or st["stopped"] or st["batch"] is not None or st["rounds"] >= st["max_rounds"]: return
    if self._next(ctx, wait=False): ctx.measurer.prefetch([o for o, _ in st["batch"]])

  def step(self, ctx:Context) -> bool:
    """One round; False once the search has stopped or its budget is spent. Called again with a larger budget (tune-model's
    scheduler does), it goes on from the round it stopped in: nothing is expanded or measured twice."""
    st = ctx.state
    self.prepare(ctx)
    if st["stopped"]: return False
    if st["batch"] is None:
      if st["rounds"] >= st["max_rounds"]: st["stopped"] = True; return False
      # no budget to time it: the next round is not expanded now, only when a run() with more budget needs it (tune-model's
      # kernels waited 2-4.5 s each for an expansion queued behind the pool's compiles, after their one budgeted round)
      if not ctx.measurer.has_budget(): return False
      self._next(ctx)
      if not st["batch"]: st["stopped"] = True; return False
    try: times = ctx.measurer.measure([o for o, _ in st["batch"]], cut=True)
    except BudgetExhausted: return False   # this batch again when the budget grows
    got = [(c, t) for c, t in zip(st["batch"], times) if not math.isnan(t)]
    st["late"] = [c for c, t in zip(st["batch"], times) if math.isnan(t)]
    st["measured"] = sorted(st["measured"] + [c for c, t in got if t < math.inf], key=lambda c: ctx.measurer.times[c[0]])
    st["batch"], st["rounds"] = None, st["rounds"] + 1
    if not got: return True   # every compile straggled: no evidence either way
    best, prev = min(t for _, t in got), st["best"]
    st["best"] = min(best, prev)
    if not self.adaptive:
      if best < prev: st["stale"] = 0
      elif st["stale"] >= self.patience: st["stopped"] = True
      else: st["stale"] += 1
      return not st["stopped"]
    trust = self._learn(ctx)
    st["gap"] = gap = self._gap(ctx)
    m = ctx.measurer
    m.marks.update(trust=round(trust, 3) if trust == trust else None, gap=round(gap, 3), rounds=st["rounds"])   # for reports
    hand = m.times.get(m.hand, math.inf)
    if st["rounds"] == 1 and gap <= self.confirm_gap and st["best"] >= self.confirm_headroom*hand: st["stopped"] = True; m.mark("confirmed")
    elif best < prev*(1 - self.min_gain): st["stale"] = 0
    elif st["stale"] >= self.patience + (self.unsure_patience if gap > self.unsure_gap else 0): st["stopped"] = True; m.mark("stale")
    else: st["stale"] += 1
    return not st["stopped"]

  def _learn(self, ctx:Context) -> float:
    """Refit the kernel's correction on every config it has measured (the hand-coded one too); returns the model's trust here:
    Kendall's tau between its scores and the measured speeds (nan below 3 configs). Configs the model has not scored in this
    process (the first batch, descended in a worker) are scored now: a few replays."""
    st, m = ctx.state, ctx.measurer
    meas = [(o, t) for o, t in m.times.items() if t < math.inf]
    if len(meas) < 3: return math.nan   # nothing to fit, so nothing to score (a kernel without loops has one config)
    if missing := [(o, k) for o, _ in meas if o not in st["info"] and (k := replay(ctx.base, o)) is not None]:
      st["info"].update((o, (float(x), shape_terms(k))) for (o, k), x in zip(missing, np.asarray(ctx.score([k for _, k in missing]))))
    rows = [(st["info"][o], t) for o, t in meas if o in st["info"]]
    if len(rows) < 3: return math.nan
    sc, terms, ts = np.array([r[0][0] for r in rows]), np.array([r[0][1] for r in rows]), np.array([t for _, t in rows])
    st["fix"] = Correction().fit(sc, terms, ts)
    return kendall(sc, -np.log(ts))

  def _gap(self, ctx:Context) -> float:
    """How much slower the model's top-scored measured config ran than the fastest measured: 0 where the measurements confirm its
    pick. Within a first batch of its own picks, the ordering of near-equal configs says little (Kendall's tau of a good model
    there is often near 0 on the CPU's noisy timings); whether its favourite is the fastest says what matters."""
    info, ts = ctx.state["info"], ctx.measurer.times
    fin = [(info[o][0], t) for o, t in ts.items() if t < math.inf and o in info]
    return max(fin)[1]/min(t for _, t in fin) - 1 if fin else 0.0

  def run(self, ctx:Context):
    """Search until the budget runs out or the beam stops improving."""
    while self.step(ctx): pass

def seed_batch(args:tuple[bytes, str, Scorer, dict, list]) -> list[tuple[Opt, ...]]:
  """Beam(**params)'s first batch for a kernel (AST blob, key, scorer, params, history), computed in a compile worker: the model
  descent costs seconds of CPU per kernel, and tune-model has dozens of kernels to start at once."""
  blob, key, score, params, history = args
  return [o for o, _ in Beam(**params)._seed(Context(worker_base(blob, key), None, score, history=history))]

def prepare_all(strat, ctxs:list[Context]) -> list[list[tuple[Opt, ...]]|Exception]:
  """Every context's first batch (Beam.prepare), compiling at once. With several kernels and a scorer that can travel to the compile
  pool, each kernel's model descent runs there, whole, one kernel per worker (seconds of CPU each; tune-model has dozens), the
  descents from the root before those from history roots (one depth); one kernel's descent runs here, its expansions spread over
  the pool. Each batch is prefetched as it is ready, so the pool stays full instead of waiting on one kernel's batch at a time.
  Per context: its batch, or why it could not be prepared."""
  if not hasattr(strat, "prepare"): return [[] for _ in ctxs]   # MCTS: nothing to compute ahead
  remote = isinstance(strat, Beam) and len(ctxs) > 1 and all(
    c.measurer.pool is not None and getattr(c.score, "portable", lambda: False)() for c in ctxs)
  futs: dict = {}
  if remote:
    # Whole descents, not depth by depth: a depth's pool jobs wait behind the compiles queued there (each depth's top pick, the
    # history roots), and GPT-2's 11 kernels descending in lockstep took 6.5-7.7 s of setup on the H200 host (2026-11-24); here,
    # one after another, ResNet-50 b32's 27 took 14.5-18.7 s. The deep ones go first: the setup waits on the slowest.
    params = {f.name: getattr(strat, f.name) for f in fields(strat)}
    # (told apart by the history's size: history_roots replays configs, 0.05 s a kernel in the H200 host's main process)
    for i in sorted(range(len(ctxs)), key=lambda i: len(ctxs[i].history) >= strat.descent_width):
      c, m = ctxs[i], ctxs[i].measurer
      with contextlib.suppress(Exception):
        futs[i] = m.pool.submit(seed_batch, (m.blob, m.kernel.key, c.score, {**params, "seed_picks": strat.first_batch(c)}, c.history))
    for c in ctxs: c.share = len(ctxs)   # later rounds' expansions share the pool with the other kernels' compiles
  out: list = []
  for i, c in enumerate(ctxs):
    try: batch = futs[i].result() if i in futs else None
    except Exception: batch = None   # computed here, then
    c.measurer.mark("descended")
    try: out.append(strat.prepare(c, batch))
    except Exception as e: out.append(e); continue
    c.measurer.prefetch(out[-1])
    c.measurer.mark("first_batch")   # the model's descent is done and its picks are compiling
  return out

AHEAD = 3   # kernels whose next round is made ready (children scored, batch compiling) while another kernel's round is timed

def interleave(strat, ctxs:list[Context]):
  """Several kernels searched at once on one device, as one workload's or one model's kernels are: their first batches compile
  together (prepare_all), then each kernel gets a round in turn while the next AHEAD get their next round ready (Beam.ahead), so
  a round starts by timing while the others' compile. A strategy without rounds (no step) runs on each kernel in turn."""
  if not hasattr(strat, "step"):
    for c in ctxs: strat.run(c)
    return
  for b in prepare_all(strat, ctxs):
    if isinstance(b, Exception): raise b
  active = list(range(len(ctxs)))
  while active:
    for i in list(active):
      at = active.index(i)
      for j in (active[at+1:] + active[:at])[:AHEAD]:
        if hasattr(strat, "ahead"): strat.ahead(ctxs[j])
      if not strat.step(ctxs[i]): active.remove(i)

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
  """tinygrad's BEAM, unchanged (dataset.tinygrad_beam). The budget does not apply: BEAM runs to its own end."""
  amt: int = 2
  name: str = "tinygrad-beam"
  def run(self, ctx:Context):
    m = ctx.measurer
    def compiled(n:int): m.compiled += n
    def timed(): m.timed += 1
    ctx.final_picks = [tinygrad_beam(ctx.base, m.device, self.amt, compiled, timed)]

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
  timed: int                   # in the search: within its budget
  search_s: float
  trajectory: list
  rejected: list = field(default_factory=list)   # (opts, time_s, why) of faster configs that failed the correctness check
  final_timed: int = 0         # by the final verification (the hand-coded config, the model's picks): outside the budget
  def rejected_json(self) -> list[dict]: return [{"opts": opts_to_json(o), "us": t*1e6, "error": why} for o, t, why in self.rejected]

def finish(ctx:Context, strategy:str, search_s:float) -> Outcome:
  """The answer: the model's final picks and tinygrad's hand-coded choice are measured too (outside the search budget, and
  counted), then the fastest measured config that passes the correctness check wins. A config that fails is never the answer."""
  m = ctx.measurer
  m.mark("verify")
  searched, hand = m.timed, hand_coded(ctx.base)
  m.budget.measurements = m.budget.seconds = None   # final verification is not search
  m.measure(list(dict.fromkeys([hand, *ctx.final_picks])), cut=True)   # a pick that straggles is not the answer
  if hand not in m.times: m.measure([hand])
  err, rejected = None, []
  for opts in sorted((o for o, t in m.times.items() if t < math.inf), key=lambda o: m.times[o]):
    if (err := m.verify(opts)) is None:
      return Outcome(strategy, opts, m.times[opts], hand, m.times[hand], True, None, m.compiled, searched, search_s, m.trajectory, rejected,
                     m.timed - searched)
    rejected.append((opts, m.times[opts], err))
    m.times[opts] = math.inf   # wrong: never the answer
  return Outcome(strategy, (), math.inf, hand, m.times.get(hand, math.inf), False, f"no measured config passed the check (last: {err})",
                 m.compiled, searched, search_s, m.trajectory, rejected, m.timed - searched)
