"""The model-guided beam (strategies "beam" and "pure-model"): rounds of many candidates, each a compile latency, ranked by the
cost model (optionally corrected by the kernel's own measurements: search.adapt). Its first batches for many kernels at once:
search.first_batches; which scored configs a round or a first batch takes: search.picks."""
from __future__ import annotations
import math, statistics
from dataclasses import dataclass
import numpy as np
from tinygrad.codegen.opt import Opt, OptOps
from dataset.sampler import hand_coded, replay
from search.measure import BudgetExhausted
from search.adapt import Correction, kendall, shape_terms
from search.picks import grouped, rank, round_robin, tensor_cores, with_tensor_cores
from search.branches import second_opinions, with_group, with_tc_axis
from search.context import Context, Joined

@dataclass
class Beam:
  """Model-guided beam, in few rounds of many candidates: on the GPU a round costs one compile latency (the candidates compile in
  parallel) and the rounds run one after another, so the wall time is the number of rounds, not of candidates.

  Round 0 (seed): a model-only descent (the best `descent_width` children per depth, until `descent_patience`+1 depths in a row
  bring no better score) proposes candidates; with ctx.history (configs measured fast on kernels of the same loop nest:
  dataset.history) it starts from the best `descent_width` of those (if there are as many) and goes `history_depths` deep, and
  `history_picks` of them take places in the first batch; tinygrad's hand-coded choice and the model's `seed_picks` best (its top
  pick of every depth first, then the best scores overall) are timed together; a budget too small for two rounds is all spent in
  this one, and the search ends there (one_round). Later rounds: the `width` fastest measured configs not yet expanded are expanded,
  their children scored, and `k` timed: each parent's best-scored child in turn, fastest parent first. A candidate whose compile
  straggles far behind its round's (Measurer.measure's cut) is not waited for: it joins the next round. Stops after `patience`+1
  rounds in a row without a faster time, at max_depth rounds, or when the budget runs out. Adaptive (the default): the kernel's
  measurements decide the stop, and with `correct` they re-rank later rounds' children (search.adapt.Correction). A first batch
  never ends the search on its own: that the model's favourite is the fastest of the model's own picks says little (such stops left
  3 unseen kernels 1.6-2x behind BEAM=2's). Where the model's favourite measured unsure_gap slower than the fastest, rounds are of
  unsure_k and the search takes unsure_patience stale rounds more; a round must better the best by min_gain to count. k=0 is
  pure-model mode: the top pick of every depth, deepest first, is left to the final verification. Entries are (opts, AST key)."""
  width: int = 4
  # a round's children: with its near_k neighbours, rounds are as large as they were with 6 children (7, 10 where unsure): a round
  # waits on its slowest compile, and compile times are heavy-tailed
  k: int = 4
  seed_picks: int = 8
  max_depth: int = 12
  patience: int = 0
  descent_width: int = 4      # the model-only descent's beam
  descent_patience: int = 0   # depths it goes on without a better score before it stops
  history_picks: int = 3      # first-batch places for ctx.history's configs, taken from the model's picks
  history_depths: int = 1     # with ctx.history, the descent starts from its best configs and goes this deep (0: from the root)
  adaptive: bool = True       # the kernel's measurements decide when the search stops (and, with `correct`, re-rank its children)
  min_gain: float = 0.02      # adaptive: a round that betters the best by less is stale
  # adaptive: or by less than noise_k x its candidates' median spread (split 12's 23-us reduce "improved" by chance 5 rounds; split 13:
  # wall 9.8%, 10.9% of BEAM=2's for 13.1%, 14.6% at 0)
  noise_k: float = 1.0
  unsure_gap: float = 0.15    # adaptive: the model is unsure here if its top-scored measured config is this much slower than the fastest
  # adaptive: stale rounds more where the model is unsure (0 against 1, split 3: 16.7% of BEAM=2's wall for 23.3%, 0.936x for 0.929x)
  unsure_patience: int = 0
  unsure_k: int = 7           # adaptive: a later round's children where the model is unsure
  # re-rank later rounds' children by the kernel's online correction (search.adapt): replayed on 777 kernels whose network or
  # family the model never saw (scripts/bench_adapt.py), it found the measured best on 83% of kernels at 24 measurements against
  # the model's own order's 87%; held near that order (alpha 200) it is within a point of it: off
  correct: bool = False
  # later rounds also time the near_k best-scored neighbours of the fastest measured config (dataset.sampler.neighbors), once per
  # config: most of split 1 and 2's 18 kernels over 1.12x BEAM=2's lost by an amount (UPCAST 4 where BEAM=2 took 2, LOCAL 16 for 8)
  near_k: int = 3
  # compile the next round while this one is timed: once half a batch is timed, the parents the next round would have then are
  # expanded and their picks prefetched (again, up to `guesses` a round, when a later timing changes those parents); under drop-in's
  # task scheduler only where it expects to give the kernel another round (Context.again). The picks are the same either way, only
  # when they compile changes. Rounds wait on compiles (split 3: 86 of 182 s of learned wall in waits between timings); on split 3
  # against the old default in one call (2 x H100, results/unseen_s3_variants.md): wall 19.3% of BEAM=2's for 20.2%, 0.933x for 0.950x
  speculate: bool = True
  guesses: int = 3   # speculate: guesses of the next round's parents a round may start
  # speculate in a round that ends the search if stale (adaptive) only once a timing of it has bettered the best: else its guesses
  # compile for nothing (split 39: 34 of 45 kernels stopped after their first later round). The same picks; on split 38 (one H200,
  # a development use) 923 configs compiled against 1,048 and 1,140 without it, the wall within the spread (CHANGELOG 2026-12-01)
  speculate_gain: bool = True
  # a round's compiles straggle once half are in and they lag this many seconds (and STRAGGLE x that half's time) behind: compile times
  # are heavy-tailed (p50 0.37 s, p99 9.7 s on the H200); stragglers are timed next round or verified at the end (None: MIN_WAIT_S)
  straggle_s: float|None = 1.0
  # the model descent takes SWAP steps. The shipped model (trained with --mask opts) scores 55% of SWAP children up (the one before
  # 73%, 61% of those slower in fact: results/model_steps_sm_90.json). Without them, on fresh split 25 (one H200, 4 runs each): the
  # same geomean for a fifth less wall, but a grouped conv whose BEAM=2 pick holds two SWAPs at 1.21-1.24x in every run: on
  descent_swaps: bool = True
  # the first batch also times the model's best grouped-reduction config (GROUP, GROUPTOP) where its picks have none, expanded once
  # as tensor cores are: BEAM=2's pick grouped on 3 of the 4 worst unseen kernels of splits 9-12 (1.38-1.99x). On split 13 (same
  # call): the grouped conv at 1.41x without it came to BEAM=2's in both runs; geomean 0.949x and 0.970x, wall 14.3% and 12.6%
  group_branch: bool = True
  # with group_branch, the first batch times the branch's best config even where a pick groups a reduction already: a descent's
  # depth-1 winner may be a bare GROUPTOP that stands in for the family (split 37's grouped conv at 2.40-2.44x, the branch's best
  # scored above anything its own descent had, then dropped). On fresh split 38 (one H200, two runs each way in one call): 0.949x,
  # 0.946x BEAM=2's kernel time at 9.4%, 9.3% of its wall, against 0.973x, 0.956x at 9.6%, 9.2% without: on
  group_best: bool = True
  # the first batch also times the model's best config on a tensor-core axis none of its picks uses: a 3x3 conv has two (2 and 5),
  # ranked on little data (11 of the fresh splits' 121 fp16 tensor-core convs had BEAM=2's pick on the other axis). On fresh splits
  # 33 and 34 (2 x H200): within the defaults' spread; on the six unseen networks no latency moved beyond two default calls' spread,
  # and every tuning took longer (results/networks_tc_branch.md): off
  tc_branch: bool = False
  # the descent also expands each depth's best config by the model's second opinion (a blend's MLP alone), and this many of its best
  # by that opinion compile beside the first batch, timed in the next round (prepare; results/second_opinion.md): off
  second_opinion: int = 0
  # its caller steps first a kernel whose round is compiled, not the first in turn (interleave, task_scheduler.schedule): on fresh
  # split 40 (one H200) 13.0%, 11.9% of BEAM=2's wall against 13.5%, 14.5%, at the same kernel times (results/ready_first.md): on
  ready_first: bool = True
  # a kernel's own first-batch picks compile once its own descent is done, not once its branches' are too (first_batches.Preparing).
  # The same batches; on fresh split 41 (one H200): 11.5%, 9.9% of BEAM=2's wall against 11.2%, 11.3% without, within the spread: on
  early_compile: bool = True
  name: str = "beam"

  def descend(self, ctx:Context) -> tuple[list, list]:
    """The model-only descent: the best `descent_width` children per depth (each depth's expansion in the pool, if any), until
    `descent_patience`+1 depths in a row bring no better score. Returns (the top pick of every depth that improved the best score,
    best first; every scored child, best first)."""
    beam, seen, depths = [()], {ctx.base.ast.key}, self.max_depth
    if roots := self.history_roots(ctx):
      beam, depths = [o for o, _ in roots], self.history_depths
      seen.update(key for _, key in roots)
      if ctx.measurer is not None: ctx.measurer.prefetch(beam[:self.history_picks])   # the first batch's: compiling meanwhile
    return self._descent(ctx, beam, seen, depths, ctx.measurer, ctx.alt)

  def _descent(self, ctx:Context, beam:list, seen:set, depths:int, m, alt:dict|None=None) -> tuple[list, list]:
    """descend's loop from `beam`; m: the measurer compiling the first batch's picks meanwhile (None: none); alt: see picks.rank."""
    picks, pool, best, stale, width = [], [], -math.inf, 0, ctx.descent_width or self.descent_width
    acts = ctx.actions if self.descent_swaps else [x for x in ctx.actions if x.op is not OptOps.SWAP]
    for _ in range(depths):
      ranked, scores = rank(ctx.expand(beam, actions=acts).result(), seen, alt=alt)
      if not ranked: break
      pool += zip(scores.tolist(), ranked)
      beam = [o for o, _ in ranked[:width]]
      if alt is not None and self.second_opinion and (rest := [(alt[key][0], o) for o, key in ranked[width:] if alt[key][0] is not None]):
        beam.append(max(rest, key=lambda r: r[0])[1])   # and the rest's best by the second opinion, whose children it ranks too
      if scores[0] <= best:
        if (stale := stale + 1) > self.descent_patience: break
        continue
      best, stale = float(scores[0]), 0
      picks.insert(0, ranked[0])
      if m is not None:
        m.prefetch([ranked[0][0]])   # the top pick of each of the deepest depths is timed: it compiles meanwhile
        # a depth more than the first batch's picks above this one is not (_seed takes the deepest first): its compile, if it
        # still queues, is taken back (GPT-2's attention kernels descend 11 deep: 3 compiles each of ~1 s of a worker, for nothing)
        if len(picks) > (n := self.first_batch(ctx)) and self.k != 0: m.drop(picks[n][0])
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
    benches a second round of 6 found nothing faster on 13 of 18 kernels, 0.1-2.7% on 4 and 11% on one, for 0.3-3.8 s
    of an op's search, and one spending what stragglers left of a one-round budget found
    1-5% on 3 of 18 kernels (attention's) and nothing elsewhere, for 2.4-7.1 s."""
    n = ctx.measurer.budget.measurements if ctx.measurer is not None else None
    return n is not None and 1 < n <= 2*(self.seed_picks + 1)

  def first_batch(self, ctx:Context) -> int:
    """Model picks in the first batch (see one_round)."""
    return ctx.measurer.budget.measurements - 1 if self.one_round(ctx) else ctx.seed_picks or self.seed_picks

  def _seed(self, ctx:Context, descent:tuple[list, list]|None=None) -> list:
    """The first batch; `descent`: descend(ctx)'s result, if the caller has it already."""
    picks, pool = descent or self.descend(ctx)
    if self.k == 0: return picks
    n = self.first_batch(ctx)
    hand = hand_coded(ctx.base)
    seeds, keys = [], set()
    # one entry per kernel: the hand-coded config is often one of the model's picks
    for o, key in ([(hand, k.ast.key)] if (k := replay(ctx.base, hand)) is not None else []) + picks[:n] + pool:
      if len(seeds) >= n + 1: break
      if key not in keys: keys.add(key); seeds.append((o, key))
    seeds = with_group(self, ctx, with_tensor_cores(seeds, pool, n + 1), None, n + 1, pool)
    return with_tc_axis(self, ctx, seeds, None, n + 1, pool)

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

  def prepare(self, ctx:Context, batch:list[tuple[Opt, ...]]|None=None, group:list|None=None, tc:list|None=None) -> list[tuple[Opt, ...]]:
    """The first batch this search will measure (pure-model: its picks), without measuring: what a caller may compile ahead.
    `batch`: that batch as search.first_batches.seed_batch computed it in a worker (its rows: opts, key, score, shape terms, and
    True on second_opinion's configs); `group` and `tc`: search.branches' group_candidates' and tc_candidates', likewise. Returned
    after the batch: second_opinion's configs, owed to the next round (they compile beside the batch, timed once it is)."""
    assert ctx.score is not None, "model-guided beam needs a cost model"
    st = ctx.state
    if not st:
      if batch is None:
        batch, info = self._seed(ctx), {}
        owed = second_opinions(self, ctx, batch) if self.k != 0 and self.second_opinion else []
      else:   # scored in the worker: _learn replays none of them
        info, owed = {r[0]: (r[2], r[3]) for r in batch}, [(r[0], r[1]) for r in batch if r[4:] == (True,)]
        batch = [(r[0], r[1]) for r in batch if r[4:] != (True,)]
        if self.k != 0:
          batch = with_group(self, ctx, batch, group, self.first_batch(ctx) + 1)
          batch = with_tc_axis(self, ctx, batch, tc, self.first_batch(ctx) + 1)
      batch = self._with_history(ctx, batch)
      if self.k == 0:
        ctx.final_picks = [o for o, _ in batch] + ctx.final_picks
        st.update(stopped=True, batch=batch)
      else: st.update(batch=batch, measured=[], expanded=set(), neared=set(), seen={ctx.base.ast.key} | {key for _, key in batch + owed},
                      best=math.inf, stale=0, rounds=0, stopped=False, late=owed, owed=[o for o, _ in owed], expansion=None, info=info,
                      fix=None, gap=0.0, max_rounds=1 if self.one_round(ctx) else self.max_depth)
    return [o for o, _ in st["batch"] or []] + (st.get("owed", []) if not st.get("rounds") else [])

  def _next(self, ctx:Context, wait:bool=True) -> bool:
    """The next round's batch: the stragglers of the last round, then `k` children of the `width` fastest measured configs not
    expanded yet (the next fastest, where those have none). Their expansion starts now (in the compile pool) if it has not;
    wait=False returns False while it runs."""
    st = ctx.state
    if st["expansion"] is None:
      beam, near = self._parents(st, st["measured"])
      st["expanded"].update(beam)
      st["neared"].update(near)
      st["expansion"] = (beam, self._expand(ctx, beam), self._expand(ctx, near, True) if near else None)
      st["spec_kids"], st["spec"] = st.get("spec") or [], None   # what a speculation prefetched: dropped below if not picked
    beam, ex, nx = st["expansion"]
    if not wait and not (ex.done() and (nx is None or nx.done())): return False
    kids = self._pick(ctx, beam, ex, nx, st["seen"])
    if not kids and (more := [o for o, _ in st["measured"] if o not in st["expanded"]][:self.width]):
      # the fastest configs have no new children (deep ones, at the size limits): the next fastest are expanded instead
      st["expanded"].update(more)
      st["expansion"] = (more, self._expand(ctx, more), None)
      return self._next(ctx, wait)
    # a straggler joins once compiled (no round waits on it twice), second_opinion's configs the round after the first batch. No
    # children left but stragglers still compiling: the round waits for them rather than the search stopping (a loaded machine
    # straggles most of a first batch, and the deep configs it did time may have no children)
    late = [c for c in st["late"] if ctx.measurer.ready(c[0]) or c[0] in st.get("owed", ())]
    if not kids and not late: late = st["late"]
    st["batch"], st["owed"] = late + kids, []
    st["late"], st["expansion"] = [c for c in st["late"] if c not in late], None
    for o in set(st.pop("spec_kids", [])) - {o for o, _ in st["batch"]}: ctx.measurer.drop(o)   # speculated wrong: taken back if queued
    return True

  def _parents(self, st:dict, measured:list) -> tuple[list, list]:
    """The next round's parents, of `measured` (fastest first): the `width` fastest not expanded yet, and the fastest for its
    neighbours if they were not proposed yet."""
    beam = [o for o, _ in measured if o not in st["expanded"]][:self.width]
    # tensor cores once: a tensor-core config as the first batch timed it (a first action, few upcasts) loses to configs tuned a
    # depth further, and is never expanded (a LLaMA block's fused gate/up GEMM stayed 1.5x behind BEAM=2's tensor-core pick);
    # with group_branch, grouped reductions likewise
    for kind in (tensor_cores, grouped) if self.group_branch else (tensor_cores,):
      if beam and not any(kind(o) for o in (*beam, *st["expanded"])):
        if (c := next((o for o, _ in measured if kind(o) and o not in st["expanded"]), None)) is not None:
          beam = beam[:1] + [c] + beam[1:self.width - 1]   # second: a round too small for every parent still has its child
    return beam, [o for o, _ in measured[:1] if o not in st["neared"]] if self.near_k > 0 else []

  def _pick(self, ctx:Context, beam:list, ex, nx, seen:set) -> list:
    """A round's children of the expansions: each parent's best-scored in turn, then the fastest's best neighbours."""
    st = ctx.state
    k = ctx.round_size or (self.unsure_k if self.adaptive and st["gap"] > self.unsure_gap else self.k)
    fix = st["fix"] if self.adaptive and self.correct else None
    kids = round_robin(rank(ex.result(), seen, fix, st["info"])[0], beam, k)
    return kids + (rank(nx.result(), seen, fix, st["info"])[0][:self.near_k] if nx is not None else [])

  def _expand(self, ctx:Context, parents:list, near:bool=False, keep:bool=False) -> Joined:
    """Each parent's own expansion (its neighbours' with near), one already started for it (st["exps"]) reused; keep: left there
    for the round that takes it (a speculation's)."""
    m, exps = ctx.measurer, ctx.state.setdefault("exps", {})
    if not keep and m is not None and (hits := sum((p, near) in exps for p in parents)):
      m.marks["speculated"] = m.marks.get("speculated", 0) + hits   # parents whose expansion was under way (for reports)
    for p in parents:
      if (p, near) not in exps: exps[p, near] = ctx.expand([p], near, len(parents))
    return Joined([exps[p, near] if keep else exps.pop((p, near)) for p in parents])

  def _speculate(self, ctx:Context):
    """While a batch is measured (Measurer.during): once half of it is timed, the parents the next round would have now are
    expanded; once they are, what the round would pick of them is prefetched. A later timing that changes those parents (a late
    compile is often a fast config: the store's fastest 5% compile 1.5x slower than its median) starts another guess, up to
    `guesses` a round. _next reuses each parent's expansion it takes, and drops the prefetched picks it does not."""
    st, m = ctx.state, ctx.measurer
    done = [c for c in st["batch"] if c[0] in m.times]
    if not ctx.again or 2*len(done) < len(st["batch"]) or st["rounds"] + 1 >= st["max_rounds"]: return
    if self.speculate_gain and self._last(ctx) and min((m.times[o] for o, _ in done), default=math.inf) >= self._bar(ctx, st["best"]): return
    g = st.get("guess")   # the round's latest guess: its parents, their expansions, whether its picks are prefetched, at which timing
    if g is None or (g["picked"] and st["guessed"] < self.guesses and len(done) > g["at"]):
      measured = sorted(st["measured"] + [c for c in done if m.times[c[0]] < math.inf], key=lambda c: m.times[c[0]])
      beam, near = self._parents(st, measured)
      if not beam or (g is not None and (beam, near) == (g["beam"], g["near"])): return
      st["guessed"] += 1
      st["guess"] = g = {"beam": beam, "near": near, "ex": self._expand(ctx, beam, keep=True), "picked": False, "at": len(done),
                         "nx": self._expand(ctx, near, True, keep=True) if near else None}
    if not g["picked"] and g["ex"].done() and (g["nx"] is None or g["nx"].done()):
      spec = [o for o, _ in self._pick(ctx, g["beam"], g["ex"], g["nx"], set(st["seen"]))]
      st["spec"] = list(dict.fromkeys((st.get("spec") or []) + spec))   # every guess's picks: _next drops those it does not take
      g.update(picked=True, at=len(done))
      m.prefetch(spec)

  def ahead(self, ctx:Context):
    """Get the next round ready without waiting for it: its children scored in the pool, then its batch compiling there, so that
    a later run() starts by timing. tune-model calls it for the kernels its scheduler will search next."""
    st = ctx.state
    if not st or st["stopped"] or st["rounds"] >= st["max_rounds"]: return
    # a batch already made is compiled now if it is not yet: a first batch held back (Preparing.hold); prefetch skips the rest
    if st["batch"] is not None or self._next(ctx, wait=False): ctx.measurer.prefetch([o for o, _ in st["batch"]] + st.get("owed", []))

  def ready(self, ctx:Context) -> bool:
    """Whether step() would start by timing, not waiting: its batch made and compiled, or it would stop at once (ready_first)."""
    st, m = ctx.state, ctx.measurer
    if not st: return False
    if st["batch"] is None: return st["stopped"] or st["rounds"] >= st["max_rounds"]
    return st["stopped"] or all(m.ready(o) for o, _ in st["batch"])

  def step(self, ctx:Context) -> bool:
    """One round; False once the search has stopped or its budget is spent. Called again with a larger budget (tune-model's
    scheduler does), it goes on from the round it stopped in: nothing is expanded or measured twice."""
    st = ctx.state
    self.prepare(ctx)
    if st["stopped"]: return False
    if st["batch"] is None:
      if st["rounds"] >= st["max_rounds"]: return self._stop(ctx)
      # no budget to time it: the next round is not expanded now, only when a run() with more budget needs it (tune-model's
      # kernels waited 2-4.5 s each for an expansion queued behind the pool's compiles, after their one budgeted round)
      if not ctx.measurer.has_budget(): return False
      self._next(ctx)
      if not st["batch"]: return self._stop(ctx)
    st["guess"], st["guessed"] = None, 0
    if st["rounds"] == 0 and st.get("owed"): ctx.measurer.prefetch([o for o, _ in st["batch"]] + st["owed"])   # the batch's first
    if self.speculate: ctx.measurer.during = lambda: self._speculate(ctx)
    try: times = ctx.measurer.measure([o for o, _ in st["batch"]], cut=self.straggle_s or True)
    except BudgetExhausted: return False   # this batch again when the budget grows
    finally: ctx.measurer.during = None
    got = [(c, t) for c, t in zip(st["batch"], times) if not math.isnan(t)]
    st["late"] += [c for c, t in zip(st["batch"], times) if math.isnan(t)]   # with those of earlier rounds still compiling
    st["measured"] = sorted(st["measured"] + [c for c, t in got if t < math.inf], key=lambda c: ctx.measurer.times[c[0]])
    st["batch"], st["rounds"] = None, st["rounds"] + 1
    if not got: return True   # every compile straggled: no evidence either way
    best, prev = min(t for _, t in got), st["best"]
    st["best"] = min(best, prev)
    if not self.adaptive:
      if best < prev: st["stale"] = 0
      elif st["stale"] >= self.patience: self._stop(ctx)
      else: st["stale"] += 1
      return not st["stopped"]
    trust = self._learn(ctx)
    st["gap"] = gap = self._gap(ctx)
    m = ctx.measurer
    m.marks.update(trust=round(trust, 3) if trust == trust else None, gap=round(gap, 3), rounds=st["rounds"])   # for reports
    # the first batch's own: what a rule stopping after it could know (the marks above are the last round's)
    if st["rounds"] == 1: m.marks.update(first_trust=m.marks["trust"], first_gap=m.marks["gap"], first_timed=m.timed)
    if best < self._bar(ctx, prev): st["stale"] = 0
    elif self._last(ctx): self._stop(ctx); m.mark("stale")
    else: st["stale"] += 1
    return not st["stopped"]

  def _bar(self, ctx:Context, prev:float) -> float:
    """What a round must beat for the search to go on: the best before it less min_gain, or noise_k x its runs' median spread."""
    sp = ctx.measurer.spread
    return prev*(1 - max(self.min_gain, self.noise_k*statistics.median(sp.values()) if self.noise_k and sp else 0.0))

  def _last(self, ctx:Context) -> bool:
    """Whether a stale round now ends the search (adaptive, after the first batch, its patience spent)."""
    st = ctx.state
    return self.adaptive and st["rounds"] > 0 and st["stale"] >= self.patience + (self.unsure_patience if st["gap"] > self.unsure_gap else 0)

  def _stop(self, ctx:Context) -> bool:
    """The search stops; the stragglers that have compiled by now go to the final verification, which times them without a wait
    (the fastest configs compile slowest: the H200 store's fastest 5% of a kernel's take 1.5x its median compile)."""
    ctx.state["stopped"] = True
    ctx.final_picks += [o for o, _ in ctx.state["late"] if ctx.measurer.ready(o, started=True) and o not in ctx.final_picks]
    return False

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
