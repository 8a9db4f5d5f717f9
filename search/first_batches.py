"""The beam's first batches for many kernels at once (tune-model, drop-in, a multi-kernel search): each kernel's model descent runs
in a compile worker, and each batch compiles as soon as it is ready."""
from __future__ import annotations
import concurrent.futures, contextlib, math, threading
from typing import Callable
from dataclasses import fields
from tinygrad.codegen.opt import Opt
import numpy as np
from dataset.compile import worker_base
from dataset.sampler import replay
from search.adapt import shape_terms
from search.beam import Beam
from search.branches import group_candidates, second_opinions, tc_candidates
from search.context import Context, Scorer

def seed_batch(args:tuple[bytes, str, Scorer, dict, list, int|None]) -> list[tuple[tuple[Opt, ...], bytes, float, tuple, bool]]:
  """Beam(**params)'s first batch for a kernel (AST blob, key, scorer, params, history, its descent's width), computed in a compile
  worker: the model descent costs seconds of CPU per kernel, and tune-model has dozens of kernels to start at once. Each config as
  (opts, AST key, score, search.adapt.shape_terms, whether Beam.second_opinion's): the caller replays none of them for
  Beam.prepare's keys and Beam._learn's scores, 0.02-0.13 s of its thread a kernel (results/logs/main_thread/replays.txt), here
  in parallel. Beam.second_opinion's configs come last: the second opinions are the descent's, which ran here."""
  blob, key, score, params, history, width = args
  ctx = Context(worker_base(blob, key), None, score, history=history, descent_width=width)
  b = Beam(**params)
  picks = b._seed(ctx)
  owed = second_opinions(b, ctx, picks) if b.k != 0 and b.second_opinion else []
  seeds = [(o, k, c, i >= len(picks)) for i, (o, k) in enumerate(picks + owed) if (c := replay(ctx.base, o)) is not None]
  xs = np.asarray(score([r[2] for r in seeds])) if seeds else []
  return [(o, k, float(x), shape_terms(c), late) for (o, k, c, late), x in zip(seeds, xs)]

BRANCHES = {"group": (group_candidates, "group_branch"), "tc": (tc_candidates, "tc_branch")}   # Beam.prepare's argument: (candidates, flag)

def branch_candidates(args:tuple[str, bytes, str, Scorer, dict, int|None]) -> list[tuple[tuple[Opt, ...], bytes]]:
  """search.branches' group_candidates or tc_candidates (`which`) for a kernel (AST blob, key, scorer, Beam params, its descent's
  width), in a compile worker beside the kernel's descent: each is a second descent of as many seconds, and a group of kernels
  leaves workers idle."""
  which, blob, key, score, params, width = args
  return BRANCHES[which][0](Beam(**params), Context(worker_base(blob, key), None, score, descent_width=width))

def guess_us(base) -> float:
  """A kernel's default time before it is timed, to order work by: the larger of its FLOPs at 1 TFLOP/s and its bytes at 0.5 TB/s,
  and 5 us (roughly what tinygrad's hand-coded configs reach on an H100: BERT's FFN GEMM 616 us for 0.6 GFLOP, its norms 20 us).
  Only the order counts; a pathological default (MobileNetV2's last 1x1 conv, 2.1 ms for 40 MFLOP) is ranked once it is timed."""
  from models.features import kernel_stats
  k = kernel_stats(base)
  return max(k.flops/1e6, k.bytes/5e5, 5.0)

class Preparing:
  """Every context's first batch (Beam.prepare), compiling at once, handed out as each is ready. With several kernels and a scorer
  that can travel to the compile pool, each kernel's model descent runs there, whole, one kernel per worker (seconds of CPU each;
  tune-model has dozens), the descents from the root before those from history roots (one depth); otherwise a kernel's descent
  runs here, its expansions spread over the pool, when its turn comes. Each batch is prefetched as it is ready, so the pool stays
  full. A kernel's descent costs from a fraction of a second (a norm) to seconds (a dilated conv scores ~900 children): on split 5,
  searched 8 configurations at a time, the slowest descent held every kernel of its group for 17-36% of the group's wall, so a
  caller that can (interleave) searches the kernels that are ready while the others descend.
  With `window`, at most that many descents are in the pool at once, the costliest kernel's next as each finishes: `timed` gives
  a context's (runs, default us), the default None until it is timed (a roofline guess stands in: guess_us). A
  caller that starts the descents before it knows the kernels' shares (tune-model and drop-in start them while the defaults are
  timed) has the costliest kernels descend first once their defaults are known.
  poll(): the contexts newly ready, without waiting; wait(): at least one (blocking); each as (index, its batch or why it could
  not be prepared)."""
  def __init__(self, strat, ctxs:list[Context], timed:Callable[[int], tuple[int, float|None]]|None=None, window:int|None=None):
    self.strat, self.ctxs, self.futs, self.left, self.queue = strat, ctxs, {}, list(range(len(ctxs))), []
    self.bfuts: dict[str, dict] = {}   # the branches' jobs (BRANCHES' names), of the branches the beam takes
    # contexts whose first batch is not compiled when it is ready (drop-in's kernels too small for a round at the defaults' time):
    # Beam.ahead compiles it should the scheduler come to the kernel after all
    self.hold: set[int] = set()
    # own picks compiling before the kernel's branches are done (poll): a branch's descent is a second one of as many seconds, and
    # a group's branch jobs queue behind its own descents (BERT's 11 kernels, 22 jobs on 15 workers: descents done at 1.1-2.0 s,
    # branches at 3.2 s, first batches timed from 6.2 s on one H200). The batch is still handed out whole, branch picks merged
    self.early: dict[int, list[tuple[Opt, ...]]] = {}
    self.early_compile = getattr(strat, "early_compile", True)
    self.timed, self.window, self.lock = timed, window or len(ctxs), threading.RLock()
    # the guesses are made here, in the caller's thread: the window is refilled from the pool's thread too
    self.guess = {i: guess_us(c.base) for i, c in enumerate(ctxs)} if timed is not None else {}
    if not hasattr(strat, "prepare"): return   # MCTS: nothing to compute ahead
    if isinstance(strat, Beam) and len(ctxs) > 1 and all(c.measurer.pool is not None and getattr(c.score, "portable", lambda: False)() for c in ctxs):
      # Whole descents, not depth by depth: a depth's pool jobs wait behind the compiles queued there (each depth's top pick, the
      # history roots), and GPT-2's 11 kernels descending in lockstep took 6.5-7.7 s of setup on the H200 host; here,
      # one after another, ResNet-50 b32's 27 took 14.5-18.7 s. The deep ones go first: the setup waits on the slowest.
      self.params = {f.name: getattr(strat, f.name) for f in fields(strat)}
      # group_branch's and tc_branch's descents run beside the kernel's own (branch_candidates), not after it in the same worker
      for which, (_, flag) in BRANCHES.items():
        if self.params[flag] and strat.k != 0: self.bfuts[which] = {}
        self.params[flag] = False
      # (told apart by the history's size: history_roots replays configs, 0.05 s a kernel in the H200 host's main process)
      self.queue = sorted(range(len(ctxs)), key=lambda i: len(ctxs[i].history) >= strat.descent_width)
      for c in ctxs: c.share = len(ctxs)   # later rounds' expansions share the pool with the other kernels' compiles
      self._fill()

  def _fill(self):
    """Descents into the pool, up to the window, the root ones first, then by weight. Each one's end refills the window (from the
    pool's thread: the caller may be timing a round meanwhile)."""
    with self.lock:
      while self.queue and sum(not self.futs[i].done() for i in self.futs) < self.window:
        roots = [i for i in self.queue if len(self.ctxs[i].history) < self.strat.descent_width] or self.queue
        i = max(roots, key=self._cost) if self.timed is not None else roots[0]
        c, m = self.ctxs[i], self.ctxs[i].measurer
        with contextlib.suppress(Exception):
          self.futs[i] = m.pool.submit(seed_batch, (m.blob, m.kernel.key, c.score, {**self.params, "seed_picks": self.strat.first_batch(c)},
                                                    c.history, c.descent_width))
          for which, futs in self.bfuts.items():
            futs[i] = m.pool.submit(branch_candidates, (which, m.blob, m.kernel.key, c.score, self.params, c.descent_width))
        self.queue.remove(i)
        if i in self.futs and self.queue: self.futs[i].add_done_callback(lambda f: threading.Thread(target=self._fill, daemon=True).start())

  def _cost(self, i:int) -> float:
    runs, us = self.timed(i)
    return runs*(self.guess[i] if us is None else 0.0 if us == math.inf else us)   # a default that fails: nothing to search

  def _take(self, i:int) -> tuple[int, list[tuple[Opt, ...]]|Exception]:
    self.left.remove(i)
    if not hasattr(self.strat, "prepare"): return i, []
    c = self.ctxs[i]
    try: batch = self.futs[i].result() if i in self.futs else None
    except Exception: batch = None   # computed here, then
    branches = {}
    for which, futs in self.bfuts.items():
      try: branches[which] = futs[i].result() if i in futs else None
      except Exception: branches[which] = None   # likewise
    c.measurer.mark("descended")
    try: out = self.strat.prepare(c, batch, **branches)
    except Exception as e: return i, e
    for o in set(self.early.pop(i, ())) - set(out): c.measurer.drop(o)   # a pick a branch's took the place of: taken back if queued
    if i not in self.hold: c.measurer.prefetch(out)
    c.measurer.mark("first_batch")   # the model's descent is done and its picks are compiling (unless held)
    return i, out

  def poll(self) -> list[tuple[int, list[tuple[Opt, ...]]|Exception]]:
    """The descents done in the pool, and those that run here (computed now: nothing runs them meanwhile)."""
    with self.lock:
      due = [i for i in self.left if i not in self.queue and all(i not in f or f[i].done() for f in (self.futs, *self.bfuts.values()))]
      # once every descent is in the pool: a compile queued sooner would hold back a windowed descent (EfficientNet-B0's 57)
      own = [i for i in self.left if self.bfuts and self.early_compile and not self.queue and i in self.futs and self.futs[i].done()
             and i not in due and i not in self.early and i not in self.hold]
    for i in own:   # not the last picks, which the branches' picks take the place of in a full batch (search.picks.second)
      try:   # not second_opinion's configs (Preparing._take starts them after the batch)
        b = [r for r in self.futs[i].result() if r[4:] != (True,)]; self.early[i] = [r[0] for r in b[:max(1, len(b) - len(self.bfuts))]]
      except Exception: self.early[i] = []   # _take computes the batch here, then
      self.ctxs[i].measurer.prefetch(self.early[i])
    ready = [self._take(i) for i in due]
    self._fill()
    return ready

  def withhold(self, i:int):
    """Context i's first batch is not compiled when it is ready (hold); its own picks compiling early are taken back if queued."""
    self.hold.add(i)
    for o in self.early.pop(i, []): self.ctxs[i].measurer.drop(o)

  def wait(self) -> list[tuple[int, list[tuple[Opt, ...]]|Exception]]:
    if not self.left: return []
    if ready := self.poll(): return ready
    with self.lock: running = [f[i] for i in self.left for f in (self.futs, *self.bfuts.values()) if i in f and not f[i].done()]
    concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
    return self.poll()

  def close(self):
    """Descents nobody will take (the scheduler stopped first) are taken back, where they have not started: those are no longer
    pending (a search that gets a round after all computes its first batch itself)."""
    with self.lock:
      for i in self.queue: self.left.remove(i)
      self.queue = []
      for i in list(self.left):
        if i in self.futs and self.futs[i].cancel():
          self.left.remove(i); del self.futs[i]
          for f in self.bfuts.values():
            if i in f: f.pop(i).cancel()
