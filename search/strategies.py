"""Search strategies over opt sequences, by name (STRATEGIES). One interface: `run(ctx) -> None` explores, measuring through
ctx.measurer (which counts and enforces the budget); the answer (finish) is the fastest verified config measured, never slower than
tinygrad's hand-coded choice.

- beam:   model-guided beam (search.beam); children of every beam entry are scored by the cost model, and only the top-k per round
          are compiled and timed (k=0: pure-model mode, nothing measured until the final verification).
- mcts:   UCT with progressive widening (search.mcts); the cost model supplies the priors, measured runtimes the reward.
- random: random walks of depth 1-8 (the dataset's sampler; search.baselines, as the two below).
- tpe:    optuna's TPE over fixed-length sequences of action indices.
- tinygrad-beam: tinygrad's own BEAM search, unchanged, with its compiled and timed candidates counted."""
from __future__ import annotations
import math, time
from dataclasses import dataclass, field
from typing import Callable
from tinygrad.codegen.opt import Opt
from dataset.sampler import hand_coded
from dataset.kernel import opts_to_json
from search.context import Context
from search.beam import Beam
from search.first_batches import Preparing
from search.mcts import MCTS
from search.baselines import RandomSearch, TPE, TinygradBeam

STRATEGIES: dict[str, Callable[..., object]] = {"beam": Beam, "mcts": MCTS, "random": RandomSearch, "tpe": TPE,
                                                 "tinygrad-beam": TinygradBeam, "pure-model": lambda **kw: Beam(k=0, name="pure-model", **kw)}

AHEAD = 3   # kernels whose next round is made ready (children scored, batch compiling) while another kernel's round is timed

READY_WAIT_S = 1.0   # interleave: how long it waits for some kernel's round to be compiled before it steps the first in turn anyway

def interleave(strat, ctxs:list[Context], stopped:Callable[[int], None]=lambda i: None):
  """Several kernels searched at once on one device, as one workload's or one model's kernels are: their first batches compile
  together (first_batches.Preparing), and each kernel joins as its batch is ready (a slow descent holds up no other kernel); then
  each gets a round in turn while the next AHEAD get their next round ready (Beam.ahead), so a round starts by timing while the
  others' compile. With Beam.ready_first (on) every kernel's next round is made ready, and the kernel stepped next is the first in
  turn whose round would start by timing (Beam.ready), waiting up to READY_WAIT_S for one, else the first in turn. In the fixed turn the main thread waits on one kernel's compiles while others' rounds sit compiled: on fresh
  split 39 (one H200, 8 configurations at a time) 42 of the groups' 66 s of wall went to such waits, against 7 s of timing, and a
  conv with 4 rounds spent 11 of its 15 s waiting for its turn. A strategy without rounds (no step) runs on each kernel in turn.
  `stopped(i)` runs as kernel i's search ends, while the others' compiles go on in the pool."""
  if not hasattr(strat, "step"):
    for i, c in enumerate(ctxs): strat.run(c); stopped(i)
    return
  prep, active, ready_first = Preparing(strat, ctxs), [], getattr(strat, "ready_first", False)
  def admit(ready:list):
    for i, b in sorted(ready):
      if isinstance(b, Exception): raise b
      active.append(i)
  def ahead(j:int):   # no round is made for a kernel out of budget
    if hasattr(strat, "ahead") and ctxs[j].measurer.has_budget(): strat.ahead(ctxs[j])
  while active or prep.left:
    admit(prep.wait() if not active else prep.poll())
    if not ready_first:
      for i in list(active):
        at = active.index(i)
        for j in (active[at+1:] + active[:at])[:AHEAD]: ahead(j)
        if not strat.step(ctxs[i]): active.remove(i); stopped(i)
        admit(prep.poll())
      continue
    if not active: continue
    i, end = None, time.perf_counter() + READY_WAIT_S
    while True:
      for j in active: ahead(j)
      if (i := next((j for j in active if strat.ready(ctxs[j]) or not ctxs[j].measurer.has_budget()), None)) is not None: break
      if time.perf_counter() >= end or ctxs[active[0]].measurer.pool is None: break   # nothing compiles meanwhile without a pool
      time.sleep(0.005); admit(prep.poll())
    i = active[0] if i is None else i
    active.remove(i)
    if strat.step(ctxs[i]): active.append(i)   # to the back of the turn
    else: stopped(i)

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
