"""Measurement for search: compile candidates (in parallel when there are workers), time them on the device with the dataset's
protocol, and verify a winner against the unoptimized kernel. It counts what it compiles and times, and enforces the budget."""
from __future__ import annotations
import contextlib, math, os, statistics, threading, time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator
from tinygrad.codegen.opt import Opt
from tinygrad.uop.ops import UOp
from dataset.compile import Task, Compiled, Overdue, configure, hang_limit, kill_pool, make_pool, precompiled, run_kernel_task
from dataset.device import L2Flush, renderer_for
from dataset.kernel import Kernel, opts_to_json, scheduler
from dataset.sampler import hand_coded, reference_opts
from dataset.check import widen
from dataset.timing import Bench, RunTimeout
from search.commute import normal_form

class BudgetExhausted(Exception): pass
TIMINGS = ("cold", "warm", "auto")   # Measurer.timing

COMPILE_TIMEOUT_S = 20
# a compile that lags this far behind the rest of its batch is not waited for (measure(cut=True)): a full UNROLL after TC takes
# 5 s to compile (development machine, no GPU) where its siblings take 0.1-0.5 s (a ResNet-50 1x1 conv), and a round would
# wait on it alone
STRAGGLE, MIN_WAIT_S = 2.0, 2.0   # a straggler is not lost: the beam measures it in its next round
# ... and nothing is waited for longer than this before half its batch is in (tinygrad's BEAM gives a compile 10 s): a batch of one
# would otherwise wait on it for good, and the worker's alarm cannot interrupt NVRTC, which is native code (a ResNet-50 b32 fp16 kernel
# waited 250 s on the H200 host)
CAP_S = 10.0
SHORT_RUNS = 10   # runs of a candidate under timing.SHORT_S (Bench.time)
# a compile running this long is hung (dataset.compile.hang_limit): it is recorded as a timeout and its pool replaced; every wait
# looks for one each POLL_S
HUNG_S, POLL_S = hang_limit(COMPILE_TIMEOUT_S), 1.0
_POOLS: dict[tuple[str, int], ProcessPoolExecutor] = {}
_POOL_LOCK = threading.Lock()   # prestart creates a pool in a thread of its own while the program goes on
def shared_pool(device:str, workers:int, ren=None) -> ProcessPoolExecutor:
  """One compile pool per (device, workers) for the whole process, as tinygrad's BEAM keeps one: starting 15 spawned workers
  costs seconds, which a search of a few seconds must not pay for every kernel. `ren`: the renderer its workers compile for
  (default: the device's own)."""
  with _POOL_LOCK:
    if (p := _POOLS.get((device, workers))) is None:
      # the workers also score (model descents, expansions): the cost model's modules load in the background while they compile
      p = _POOLS[(device, workers)] = make_pool(workers, ren or renderer_for(device), [], COMPILE_TIMEOUT_S, preload=("models.cost_model",))
      for _ in range(workers): p.submit(int)   # spawn every worker now: they start while the caller scores its first candidates
    return p

def prestart(workers:int) -> threading.Thread|None:
  """Start the CUDA compile pool in a thread now, when the program says it runs on CUDA (DEV=CUDA), so that the seconds its workers
  take to start pass while the program builds its model rather than inside its first tuning (ViT-Ti's drop-in on an H100: 4.0 of
  its 14.7 s of search were the defaults phase, most of it the pool's start). The renderer is built from the driver's arch: the
  program's device is not opened here. Nothing starts elsewhere, or where the arch is unknown."""
  from tinygrad.helpers import DEV
  from dataset.device import cuda_arch
  if workers < 2 or DEV.device != "CUDA" or ("CUDA", workers) in _POOLS: return None
  def start():
    with contextlib.suppress(Exception):
      if (arch := cuda_arch()) is not None: shared_pool("CUDA", workers, renderer_for("CUDA", arch))
  (t := threading.Thread(target=start, daemon=True, name="kerntune-pool-start")).start()
  return t

def _close_pools():
  for p in _POOLS.values(): kill_pool(p)   # a hung worker would otherwise hold up the exit: it waits for every pool's running calls
# before concurrent.futures' own exit hook, which joins the pools (threading's exit hooks run last registered first)
threading._register_atexit(_close_pools)
# a forked child (a tuned program's own worker processes) must not submit to its parent's pool: those workers would take its tasks
# and answer the parent, whose manager thread the child lacks. It starts its own.
os.register_at_fork(after_in_child=_POOLS.clear)

@dataclass
class Budget:
  measurements: int|None = None   # timed candidates
  seconds: float|None = None
  def left(self, timed:int, elapsed:float, ahead:float=0.0) -> bool:
    """Whether more fits, `ahead` the seconds it is expected to take: a budget is a limit, so nothing starts that would overshoot it."""
    return (self.measurements is None or timed < self.measurements) and (self.seconds is None or elapsed + ahead <= self.seconds)

@dataclass
class Measurer:
  kernel: Kernel
  device: str
  budget: Budget = field(default_factory=Budget)
  workers: int = 0                 # 0: compile in this process
  early_factor: float = 4.0
  on_timed: Callable[[Measurer], None]|None = None   # progress: called after each timed candidate
  # cold: the L2 flushed before every timed run (the dataset's protocol); warm: not flushed, as in a network, where a kernel reads
  # what the kernel before it left in L2 (tinygrad's BEAM flushes 4 MB of a 50-60 MB L2: mostly warm); auto: warm where all of the
  # kernel's buffers fit in half the L2
  timing: str = "cold"
  def __post_init__(self):
    self.start = time.perf_counter()   # the whole cost of an answer: the pool start, the buffers, the reference run
    self.ren = renderer_for(self.device)
    self.blob = self.kernel.blob()
    configure(self.ren, {self.kernel.key: self.blob}, COMPILE_TIMEOUT_S)
    self.pool = shared_pool(self.device, self.workers) if self.workers > 1 else None
    self.bench = Bench(self.kernel.ast, self.device, flush := L2Flush.shared(self.device))
    assert self.timing in TIMINGS, f"timing {self.timing!r} is not one of {TIMINGS}"
    self.warm = self.timing == "warm" or (self.timing == "auto" and 2*sum(b.nbytes for b in self.bench.bufs) <= flush.l2_bytes)
    if self.warm: self.bench.flush = lambda: None
    self.compiled = self.timed = self.failed = 0
    self.compile_s = self.time_s = 0.0                  # wall seconds in compile calls and in timing (where a search spends)
    self.times: dict[tuple[Opt, ...], float] = {}       # every timed candidate (inf: failed)
    self.spread: dict[tuple[Opt, ...], float] = {}      # a timed candidate's runs: slowest / fastest - 1 (its timing's noise)
    self.errors: dict[tuple[Opt, ...], str] = {}        # why a candidate failed to compile
    self.progs: dict[tuple[Opt, ...], UOp] = {}
    self.libs: dict[str, tuple[Opt, ...]] = {}          # same binary, same time: measured once
    self.twins: dict[tuple[Opt, ...], tuple[Opt, ...]] = {}   # a reordering's normal form (commute) -> the order compiled
    self.twinned = 0                                    # candidates that took their twin's program instead of a compile
    self.trajectory: list[tuple[int, float, float]] = []  # (timed, seconds, best time so far)
    self.marks: dict[str, float] = {}                     # seconds at which a search reached its phases (mark)
    self.best = math.inf
    self._ahead: dict[tuple[Opt, ...], Future] = {}   # compiles started by prefetch(), collected by measure()
    self._overdue = Overdue(HUNG_S)
    # what a time budget expects the next round to cost: the strategy's own work before it (the last gap between measure calls)
    # and a candidate (wall seconds in measure per timed candidate)
    self._gap_s = self._meas_s = 0.0
    self._ended: float|None = None   # elapsed at the end of the last measure call
    self._idled, self._idle_s = False, 0.0   # _idle() has run, and its seconds (not a candidate's cost)
    self.reference_s = 0.0   # the correctness reference's seconds, wherever it was computed (a phase of the reports)
    self.during: Callable[[], None]|None = None   # a strategy's work while a batch is measured (after each timing, in each wait)
    # what every answer needs (strategies.finish): the correctness reference (the unoptimized kernel, its threads grouped into
    # blocks on a GPU: sampler.reference_opts) and tinygrad's hand-coded config; both compile in the background from the start
    base = scheduler(self.kernel.ast, self.ren)
    self.ref_opts, self.hand = reference_opts(base), hand_coded(base)
    self.prefetch([self.ref_opts, self.hand])
    self._exact = self._start_exact()

  @property
  def elapsed(self) -> float: return time.perf_counter() - self.start
  def mark(self, phase:str): self.marks.setdefault(phase, round(self.elapsed, 3))   # the first time only
  def has_budget(self) -> bool:
    """Whether another round fits: of a time budget, what the last round spent before its first timing and a candidate's cost.
    Failed compiles are not timed, so a search that keeps proposing configs that fail is stopped by compiles too."""
    n = self.budget.measurements
    return (self.bench.wedged is None and self.budget.left(self.timed, self.elapsed, self._gap_s + self._per_candidate())
            and (n is None or self.compiled < 3*n + 8))

  def _per_candidate(self) -> float: return self._meas_s/self.timed if self.timed else 0.0
  def _fits(self) -> bool: return self.budget.left(self.timed, self.elapsed, self._per_candidate())
  def _time_left(self) -> bool: return self.budget.seconds is None or self.elapsed + self._per_candidate() <= self.budget.seconds
  def _end(self) -> float:
    """perf_counter() at which a time budget is spent (inf without one): no compile is waited for past it."""
    return math.inf if self.budget.seconds is None else self.start + self.budget.seconds - self._per_candidate()

  def prefetch(self, opts_list:list[tuple[Opt, ...]], twins:bool=True):
    """Start compiling these candidates in the pool now; a later measure() or verify() collects them. tune-model starts every
    kernel's first batch at once, so the pool stays full while the GPU times what is ready. Counted as compiled now. twins=False:
    each one compiles itself, even a reordering of one compiled or timed (_compiled waits on every config it is given)."""
    if self.pool is None: return
    for o in dict.fromkeys(opts_list):
      if o not in self._ahead and (not twins or (o not in self.times and self._twin(o) == o)):
        args = (self.blob, Task(self.kernel.key, "fixed", o))
        # broken by a crashed worker, or shut down by another kernel's Measurer that replaced it after a hang: a fresh one
        try: self._ahead[o] = self.pool.submit(run_kernel_task, args)
        except (BrokenProcessPool, RuntimeError): self._new_pool(); self._ahead[o] = self.pool.submit(run_kernel_task, args)
        self.compiled += 1

  def _twin(self, o:tuple[Opt, ...], pending:list|tuple=()) -> tuple[Opt, ...]:
    """The reordering of `o` compiled, compiling or `pending` (a reorder of commuting opts builds the same program:
    search.commute), or o itself, which becomes the one for its reorderings. A twin that failed is no stand-in: of two orders,
    one can be invalid."""
    t = self.twins.setdefault(nf := normal_form(o), o)
    if t == o or t in self._ahead or t in pending or self.times.get(t, math.inf) < math.inf: return t
    self.twins[nf] = o
    return o

  def drop(self, o:tuple[Opt, ...]) -> bool:
    """Take back a prefetched compile nobody will measure, if it is still queued in the pool (one running finishes)."""
    if (f := self._ahead.get(o)) is None or not f.cancel(): return False
    del self._ahead[o]
    self.compiled -= 1
    return True

  def _collect(self, o:tuple[Opt, ...], f:Future) -> Compiled:
    # the reference, computed in a wait (_idle), may have collected it already: a candidate of the batch being the reference's opts
    if self._ahead.get(o) is f: del self._ahead[o]
    try: return f.result()
    except Exception as e:
      if isinstance(e, BrokenProcessPool) and getattr(self.pool, "_broken", False): self._new_pool()
      return Compiled(Task(self.kernel.key, "fixed", o), o, "compile_error", error=f"compile worker failed: {type(e).__name__}")

  def _new_pool(self, kill:bool=False):
    """A compiler crashed a worker, which breaks the whole pool, or hung one (kill: its workers are killed): the next compile gets
    a fresh one (unless another kernel's Measurer has replaced it already)."""
    if kill: kill_pool(self.pool)
    if _POOLS.get(key := (self.device, self.workers)) is self.pool: del _POOLS[key]
    self.pool = shared_pool(self.device, self.workers)

  def _respawn(self):
    """A hung compile's worker is stuck for good: the pool is replaced, and this Measurer's compiles still in flight start again in
    the new one (other kernels' fail as a crashed worker's do)."""
    live = [o for o, f in self._ahead.items() if not f.done()]
    for o in live: del self._ahead[o]
    self.compiled -= len(live)
    self._new_pool(kill=True)
    self.prefetch(live, twins=False)   # every one of them is waited on

  def _hung(self, o:tuple[Opt, ...]) -> Compiled:
    self._ahead.pop(o, None)
    self.failed += 1
    return Compiled(Task(self.kernel.key, "fixed", o), o, "timeout", compile_s=HUNG_S, error=f"compile did not finish in {HUNG_S:g} s")

  def _compiled(self, opts_list:list[tuple[Opt, ...]], cut:bool|float=False) -> Iterator[Compiled]:
    """The candidates compiled, in the order they finish (the caller times each one while the rest compile). cut: once half of
    them are in, the rest get until max(MIN_WAIT_S (or cut's seconds), STRAGGLE x the time that half took, 2 x its median compile); what is still
    compiling then is left in the pool, to be collected by a later call; until half are in, the wait is at most CAP_S. Only
    compiles that have started can straggle: one still queued in the pool is waited for. Every wait is bounded: a compile that runs
    HUNG_S is hung (a timeout: its pool is replaced), and none is waited for past a time budget's end (left as stragglers).
    Without a pool a compile runs here, bounded by its alarm (COMPILE_TIMEOUT_S), which native code (NVRTC) does not heed."""
    if self.pool is None or (not cut and len(opts_list) == 1 and opts_list[0] not in self._ahead):
      for o in opts_list:   # with its blob: another kernel's Measurer may have configured this process since
        st = time.perf_counter()
        c = run_kernel_task((self.blob, Task(self.kernel.key, "fixed", o)))
        self.compiled, self.compile_s = self.compiled + 1, self.compile_s + time.perf_counter() - st
        self.failed += c.prg is None or c.status != "ok"
        yield c
      return
    self.prefetch(opts_list, twins=False)   # measure() passes only configs that stand for their twins; _compile's callers want each
    futs = {self._ahead[o]: o for o in opts_list}
    start, pending, deadline, took, end, n = time.perf_counter(), set(futs), None, [], self._end(), len(futs)
    while pending:
      self._idle()
      self._during()
      st = time.perf_counter()
      until = min(deadline if deadline is not None else start + CAP_S if cut else math.inf, end)
      done, pending = wait(pending, max(0.0, min(until - st, POLL_S)), FIRST_COMPLETED)
      self.compile_s += (now := time.perf_counter()) - st
      for f in done:
        c = self._collect(futs[f], f)
        self.failed += c.prg is None or c.status != "ok"
        took.append(c.compile_s)
        yield c
      if hung := self._overdue(pending):
        for f in hung: yield self._hung(futs[f])
        self._respawn()   # the rest of the batch compiles again in the new pool
        futs = {self._ahead[o]: o for f, o in futs.items() if f in pending and f not in hung}
        pending = set(futs)
      elif cut and deadline is None and took and 2*(n - len(pending)) >= n:
        deadline = start + max(MIN_WAIT_S if cut is True else cut, STRAGGLE*(time.perf_counter() - start), 2*statistics.median(took))
      elif not done and now >= until:
        if now >= end or all(f.running() for f in pending): return   # stragglers: compiling past the deadline or the time budget
        # some still queue behind other kernels' compiles (tune-model fills the pool): not late yet, the clock starts again
        start, deadline = time.perf_counter(), None

  def ready(self, o:tuple[Opt, ...], started:bool=False) -> bool:
    """Whether measuring `o` waits for no compile in flight (a straggler's has finished, or none was started); started: and its
    compile was started, so that measuring it costs a timing only."""
    f = self._ahead.get(o) or self._ahead.get(self.twins.get(normal_form(o)))   # a twin's compile stands for it
    return f is None and not started or f is not None and f.done()

  def _compile(self, opts_list:list[tuple[Opt, ...]]) -> list[Compiled]:
    got = {c.task.parent: c for c in self._compiled(opts_list)}
    return [got.get(o) or Compiled(Task(self.kernel.key, "fixed", o), o, "timeout", error="not compiled within the time budget")
            for o in opts_list]

  def measure(self, opts_list:list[tuple[Opt, ...]], cut:bool|float=False) -> list[float]:
    """Runtimes in seconds (inf for a config that fails), measuring only what is new and only while the budget lasts:
    raises BudgetExhausted once it is spent, after recording what it measured. Each candidate is timed as soon as it has
    compiled. cut (True, or the least seconds a straggler is given): a straggling compile (see _compiled) is not waited for; its
    time is nan, and a later call measures it."""
    if self._ended is not None: self._gap_s = self.elapsed - self._ended
    st, timed, idle = self.elapsed, self.timed, self._idle_s
    try:
      new = [o for o in dict.fromkeys(opts_list) if o not in self.times]
      if self.bench.wedged is not None:   # nothing runs on this device any more: not compiled, not timed
        self.times.update((o, math.inf) for o in new); self.errors.update((o, self.bench.wedged) for o in new); new = []
      if new and not (self._fits() and (self.budget.measurements is None or self.compiled < 3*self.budget.measurements + 8)):
        raise BudgetExhausted()
      n = len(new)
      if self.budget.measurements is not None: new = new[:max(0, self.budget.measurements - self.timed)]
      todo = new
      while todo:   # a twin that fails: the orders it stood for are compiled themselves (it is never their twin again)
        own, twin = [], {}
        for o in todo:
          if (t := self._twin(o, own)) == o: own.append(o)
          else:
            twin[o] = t
            if t not in self.times and t not in own: own.append(t)   # a twin compiling ahead is collected here
        for c in self._compiled(own, cut):
          self._time(c)
          self._during()
          if not self._time_left(): break   # no time for another: the rest stay in the pool, untimed
        for o, t in twin.items():
          if self.times.get(t, math.inf) < math.inf:
            self.times[o], self.progs[o], self.twinned = self.times[t], self.progs[t], self.twinned + 1
        todo = [o for o, t in twin.items() if self.times.get(t) == math.inf and self._time_left()]
      if len(new) < n or (not self._time_left() and any(o not in self.times for o in new)): raise BudgetExhausted()
    finally:
      if self.timed > timed: self._meas_s += self.elapsed - st - (self._idle_s - idle)   # a candidate's cost, without the reference's
      self._ended = self.elapsed
    return [self.times.get(o, math.nan) for o in opts_list]

  def _time(self, c:Compiled):
    o = c.task.parent
    if c.prg is None or c.status != "ok": self.times[o], self.errors[o] = math.inf, c.error or c.status; return
    if c.lib_hash in self.libs: self.times[o], self.progs[o] = self.times[self.libs[c.lib_hash]], c.prg; return   # verify() checks it too
    if self.bench.wedged is not None: self.times[o], self.errors[o] = math.inf, self.bench.wedged; return   # a hang earlier in the batch
    self.libs[c.lib_hash] = o
    st = time.perf_counter()
    try: ts, _ = self.bench.time(c.prg, early_stop=self.early_factor*self.best, short_runs=SHORT_RUNS)
    except RunTimeout as e: ts, self.errors[o] = [math.inf], f"timeout: {e}"   # a hung config: recorded, never the answer
    except Exception as e: ts, self.errors[o] = [math.inf], f"run failed: {type(e).__name__}: {e}"
    self.time_s += time.perf_counter() - st
    self.timed += 1
    self.times[o], self.progs[o] = min(ts), c.prg
    if len(ts) > 1 and min(ts) > 0: self.spread[o] = max(ts)/min(ts) - 1
    self.best = min(self.best, min(ts))
    self.trajectory.append((self.timed, round(self.elapsed, 3), self.best))
    if self.on_timed is not None: self.on_timed(self)

  def _reference(self) -> str|None:
    """The correctness reference's outputs computed (the unoptimized kernel's, and a low-precision kernel's float32 build's), or
    why it cannot be."""
    if self.bench.ref is not None: return None
    # once per Measurer: _compile's wait calls _idle, which would compute the whole reference inside this call before this one
    # computes it again (on the H200, a 268M-element fp16 output: two set_reference calls, 11.5 of 12.1 s; results/logs/verify)
    st, self._idled = time.perf_counter(), True
    ref = self._compile([self.ref_opts])[0]
    # the plain unoptimized kernel, then; a hung compile is tried once more here (its pool was replaced)
    if ref.prg is None and (self.ref_opts or ref.status == "timeout"): ref = self._compile([()])[0]
    if ref.prg is None: return f"the unoptimized kernel, the reference, does not compile: {ref.error}"
    self.bench.set_reference(ref.prg, self._exact_reference())
    self.reference_s = time.perf_counter() - st   # its compiles' waits, its runs and reading its outputs back: reported as a phase
    return None

  def _idle(self):
    """What fills a wait on compiles: the reference, once its compiles are in (verify() would compute it after the search: on a
    512M-element output, a second of running and reading back). Tried once; verify() reports what goes wrong."""
    if self._idled or self.bench.ref is not None or self.bench.wedged is not None: return
    if (f := self._ahead.get(self.ref_opts)) is None or not f.done(): return
    if self._exact is not None and self._exact[2] is not None and not self._exact[2].done(): return
    self._idled, st = True, time.perf_counter()
    with contextlib.suppress(Exception): self._reference()
    self._idle_s += time.perf_counter() - st

  def _during(self):
    """The strategy's work while it waits (Measurer.during); one that fails is not asked again: it is an optimisation."""
    if self.during is None: return
    try: self.during()
    except Exception: self.during = None

  def verify(self, opts:tuple[Opt, ...]) -> str|None:
    """None if `opts` computes what the unoptimized kernel computes on random inputs; else what differs."""
    if self.bench.wedged is not None: return f"not checked: {self.bench.wedged}"
    try:
      if (err := self._reference()) is not None: return err
      if opts not in self.progs: self.measure([opts]) if self.has_budget() else self._verify_compile(opts)
      if (prg := self.progs.get(opts)) is None: return "does not compile"
      return self.bench.check(prg)
    except RunTimeout as e: return f"timeout: {e}"

  def _start_exact(self) -> tuple[bytes, str, Future|None]|None:
    """A low-precision kernel is checked against its float32 build too (check.widen), with the reference's opts: it compiles
    in the pool from the start, as the reference does. Not counted as compiled: it is no candidate."""
    if (wide := widen(self.kernel.ast)) is None: return None
    key = wide.key.hex()
    blob = replace(self.kernel, key=key, ast=wide).blob()
    try: fut = None if self.pool is None else self.pool.submit(run_kernel_task, (blob, Task(key, "fixed", self.ref_opts)))
    except (BrokenProcessPool, RuntimeError): fut = None
    return blob, key, fut

  def _exact_reference(self) -> UOp|None:
    """The float32 build compiled (None for a float32 kernel, or one whose float32 build does not compile: the check is then
    against the unoptimized kernel alone)."""
    if self._exact is None: return None
    blob, key, fut = self._exact
    try: c = self._await(fut) if fut is not None else None
    except Exception: c = None
    for o in ([] if c is not None and c.prg is not None else dict.fromkeys([self.ref_opts, ()])):   # here, then unoptimized
      if (c := run_kernel_task((blob, Task(key, "fixed", o)))).prg is not None: break
    return None if c is None else c.prg

  def _await(self, f:Future) -> Compiled|None:
    """f's result, or None if its compile hangs (its pool is replaced)."""
    while not f.done():
      wait([f], POLL_S)
      if self._overdue([f]): self._respawn(); return None
    return f.result()

  def _verify_compile(self, opts:tuple[Opt, ...]):
    c = self._compile([opts])[0]
    if c.prg is not None: self.progs[opts] = c.prg

  def program(self, opts:tuple[Opt, ...]) -> UOp|None: return self.progs.get(opts)
  def precompile(self, opts:tuple[Opt, ...]) -> None: precompiled(self.kernel.ast, opts, self.progs.get(opts), self.device)   # see there

  ALTERNATES = 3   # next-fastest configs a tuned kernel's cache entry keeps (search.guard's fallbacks)
  def alternates(self, pick:tuple[Opt, ...]) -> list[list]:
    """The next-fastest configs timed after `pick`, not the default, as a cache entry keeps them: [opts (JSON), us], fastest first."""
    alts = sorted((t, o) for o, t in self.times.items() if t < math.inf and o not in (pick, self.hand))[:self.ALTERNATES]
    return [[opts_to_json(o), t*1e6] for t, o in alts]

  def close(self):
    for f in self._ahead.values(): f.cancel()   # what nobody will collect: its compile is dropped if it has not started
    self._ahead.clear()
    self.bench.release()   # the compile pool is shared: it lives until the process ends
