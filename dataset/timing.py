"""Running compiled candidates on the device: tinygrad's timing protocol at the kernel's real size (cache flushed before every run,
a warm-up, min of >= 3 runs, early stop for configs far slower than the best known), and their outputs on random inputs, for the
correctness check (dataset.check) against the unoptimized kernel's (for a low-precision kernel, its float32 build's too)."""
from __future__ import annotations
import functools, math, os, queue, threading
from concurrent.futures import Future, ThreadPoolExecutor
import numpy as np
from tinygrad.device import Buffer
from tinygrad.dtype import dtypes, _to_np_dtype
from tinygrad.engine.realize import time_call
from tinygrad.uop.ops import UOp
from tinygrad.codegen.opt.postrange import args_from_ast
from dataset.check import F32, LOW, Exact, compare, compare_exact, exact_bounds, low_dtype, sample_idx

# Low-precision inputs are normals of this scale. A kernel after the first of its op reads buffers an earlier kernel wrote (a row
# max, a sum of exps), but here they are independent randoms: with unit normals, the sum of exp(x - m) over a 16384-column fp16
# softmax row is 16384*exp(0.5 - m), beyond fp16's range for every row with m < -0.9. At 1/8 it stays within half the range for
# every row (m >= -4.5 sigma), and a 4096-long dot product of such inputs is still of unit scale (64 sigma^2), far from subnormals.
LOW_SCALE = 0.125

# A run that takes longer than this is hung. Runs execute on a watchdog thread (bounded): a CPU kernel runs in this process, where an
# endless loop in C cannot be interrupted (no signal reaches it, the thread cannot be killed), and CUDA's synchronize (tinygrad's
# cuEventSynchronize) takes no timeout; both release the GIL, so the caller stops waiting and the run is left behind on its thread.
# 60 s: an unoptimized reference of a large kernel runs for seconds on a CPU core.
RUN_TIMEOUT_S = 60.0
SHORT_S = 50e-6   # Bench.time's short_runs: below it a kernel's runs are noisy and cheap

class RunTimeout(Exception): pass
WEDGED: dict[str, str] = {}   # device -> why it runs nothing more in this process (a hung kernel: Bench)

class _Runner:
  """One calling thread's watchdog thread, kept between runs: starting a thread per run cost 0.2 ms of host time a run on the H200
  host (440 us a run against 251 us on a kept thread, results/timing_ab.md)."""
  def __init__(self):
    self.jobs: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=self._loop, daemon=True, name="kernel-run").start()
  def _loop(self):
    while True:
      fn, out, done = self.jobs.get()
      try: out.append((True, fn()))
      except BaseException as e: out.append((False, e))
      finally: done.set()
_RUNNERS = threading.local()

def bounded(fn, limit_s:float|None):
  """fn() on this thread's watchdog thread, waited for at most limit_s seconds (None: in this thread); RunTimeout after that, fn
  left running there, and the next run gets a new watchdog thread."""
  if limit_s is None: return fn()
  if (r := getattr(_RUNNERS, "r", None)) is None: r = _RUNNERS.r = _Runner()
  out:list = []
  r.jobs.put((fn, out, done := threading.Event()))
  if not done.wait(limit_s):
    _RUNNERS.r = None
    raise RunTimeout(f"a run did not finish in {limit_s:g} s")
  ok, v = out[0]
  if not ok: raise v
  return v

def _copyin(b:Buffer, x:np.ndarray): b.allocator._copyin(b._buf, memoryview(np.ascontiguousarray(x)).cast("B"))
def _copyout(b:Buffer) -> np.ndarray:
  """b read back into a fresh host array. Buffer.numpy() reads into a zeroed bytearray first, most of the read-back's seconds on
  the H200 (results/logs/verify/reference_profile_h200.txt: 1.8 of a 268M-element fp16 reference's 3.6 s)."""
  if b._base is not None or not hasattr(b.allocator, "_copyout"): return b.numpy()
  out = np.empty(b.size, _to_np_dtype(b.dtype))
  b.allocator._copyout(memoryview(out).cast("B"), b._buf)
  return out

# Float inputs are windows of one pool of standard normals, tiled: drawing 16M normals costs 0.3 s (and a cast to fp16 0.17 s more),
# which a search of a softmax's three kernels paid 1.4 s of before timing anything; a copy costs milliseconds. The pool's period is
# prime, so no power-of-two indexing error maps an element onto an equal one, and each buffer starts at its own random offset.
POOL_N = 1_000_003
_POOLS: dict[tuple[np.dtype, float], np.ndarray] = {}
def random_normal(n:int, npdt, rng:np.random.Generator, scale:float=1.0) -> np.ndarray:
  if (pool := _POOLS.get((dt := np.dtype(npdt), scale))) is None:
    pool = _POOLS[(dt, scale)] = (np.random.default_rng(0).standard_normal(2*POOL_N, dtype=np.float32) * np.float32(scale)).astype(dt)
  out, start = np.empty(n, dt), int(rng.integers(POOL_N))
  for i in range(0, n, POOL_N): out[i:i+POOL_N] = pool[start:start+min(POOL_N, n-i)]
  return out

class Bench:
  """Device buffers of one kernel at its real size, filled with random data (never zeros, which hide unwritten outputs). Every run
  is bounded by limit_s (RunTimeout): on the CPU a hung run keeps the buffers it writes (never freed) and the Bench goes on with
  new ones holding the same inputs; on a GPU a hung kernel blocks every later operation of its context, so the Bench is `wedged`
  and refuses to run more (RunTimeout at once): only a new process recovers the device. So does every Bench made on that device
  later in the process (WEDGED): allocating its buffers would block behind the hung kernel, and tune-model goes on to other kernels."""
  limit_s: float|None = RUN_TIMEOUT_S   # seconds a run may take (None: unbounded, in the calling thread)
  wedged: str|None = None               # why this device can run nothing more
  def __init__(self, ast:UOp, device:str, flush, seed:int=0, limit_s:float|None=RUN_TIMEOUT_S):
    self.ast, self.device, self.flush, self.seed, self.limit_s = ast, device, flush, seed, limit_s
    self.low = low_dtype(ast)
    self.wedged = WEDGED.get(device)
    self.bufs, self.var_vals = self._alloc() if self.wedged is None else ([], {})
    self.hung: list[list[Buffer]] = []   # buffers of runs that never finished: still in use by them
    self.ref: dict[int, np.ndarray]|None = None
    self._exact: dict[int, Exact|Future]|None = None   # a low-precision kernel's outputs in float32 (widen), and what they allow

  @property
  def exact(self) -> dict[int, Exact]|None:
    """The float32 build's bounds (exact_bounds), waited for: they are computed on a thread (set_reference)."""
    if self._exact is not None and any(isinstance(x, Future) for x in self._exact.values()):
      try: self._exact = {i: x.result() if isinstance(x, Future) else x for i, x in self._exact.items()}
      except Exception: self._exact = None   # as where set_reference failed: checked against the unoptimized kernel alone
    return self._exact

  def _alloc(self) -> tuple[list[Buffer], dict]:
    bufs, var_vals = args_from_ast(self.ast, self.device)
    rng = np.random.default_rng(self.seed)   # the same inputs every time: a reference stays valid for new buffers
    for b in bufs:
      b.ensure_allocated()
      npdt = _to_np_dtype(b.dtype)
      if dtypes.is_float(b.dtype): x = random_normal(b.size, npdt, rng, LOW_SCALE if self.low is not None else 1.0)
      elif b.dtype == dtypes.bool: x = rng.integers(0, 2, b.size).astype(np.bool_)
      else: x = rng.integers(0, 2, b.size).astype(npdt)  # integer operands are masks/indices in this corpus: keep them in range
      _copyin(b, x)
    return bufs, var_vals

  def _timer(self, prg:UOp, bufs:list[Buffer]|None=None):
    # the timeout reaches tinygrad's HCQ devices (their synchronize raises); elsewhere the watchdog (_run) bounds the wait
    return time_call(prg.call(*[UOp.from_buffer(b) for b in (bufs or self.bufs)]), self.var_vals,
                     timeout=None if self.limit_s is None else int(self.limit_s*1000))

  def _run(self, timer, bufs:list[Buffer]|None=None, inline:bool=False) -> float:
    """One run of `timer`, bounded: a hung run is left behind with `bufs` (this Bench's by default). inline: in this thread,
    unbounded, for a program that has run once within the limit already."""
    if self.wedged is not None: raise RunTimeout(self.wedged)
    try: return bounded(lambda: next(timer), None if inline else self.limit_s)
    except RunTimeout as e:
      self.hung.append(bufs or self.bufs)
      if self.device != "CPU": self.wedged = WEDGED[self.device] = f"{e}: the device is blocked behind it"
      elif bufs is None: self.bufs, self.var_vals = self._alloc()
      raise

  def time(self, prg:UOp, runs:int=3, early_stop:float=math.inf, short_runs:int=0) -> tuple[list[float], bool]:
    """Run times in seconds: a warm-up, then `runs` timed runs, each after a cache flush. A config slower than `early_stop` in its
    warm-up and in the run after it has only that run timed (returns early_stopped=True). One slow warm-up is not enough: a
    first run can take milliseconds more than every later one (on the CPU, a CvT kernel's config stored at 6.0 ms from its warm-up
    alone ran 18 us timed again), and the search would drop a good config on it. short_runs: a config whose warm-up is under
    SHORT_S gets that many runs: on the H200 the fastest of 3 runs of a 15-35 us kernel spread 11.4% (median over configs) between
    repeats, of 10 runs 7.8% (results/logs/timing/flush_noise_h200.txt), and 7 more runs of such a kernel cost well under 1 ms.
    The store's labels keep 3 runs (one protocol for every row)."""
    if self.wedged is not None: raise RunTimeout(self.wedged)
    timer = self._timer(prg)
    # The warm-up runs bounded, on the watchdog thread; the timed runs in this thread: on another thread the same configs timed a
    # median 5.6 us (1.3-11.2) slower and noisier on the H200 (results/timing_ab.md), because tinygrad records its first timing
    # event before the launch and the thread switch lands between them. A program that ran once within the limit on these inputs
    # runs again (a hang is a codegen fault, not chance).
    self.flush()
    out = []
    if (warm := self._run(timer)) < SHORT_S: runs = max(runs, short_runs)
    if warm > early_stop:
      self.flush()
      if (again := self._run(timer, inline=True)) > early_stop: return [again], True
      out.append(again)   # the warm-up was the outlier: this run counts, the protocol goes on
    for _ in range(runs - len(out)):
      self.flush()
      out.append(self._run(timer, inline=True))
    return out, False

  def side_by_side(self, progs:dict, rounds:int) -> dict:
    """Each program's fastest run over `rounds` round-robin rounds of time(): the configs compared are timed moments apart, under
    the same conditions, not seconds or minutes apart as a search times them (a None program: inf)."""
    best = dict.fromkeys(progs, math.inf)
    for _ in range(rounds):
      for o, prg in progs.items():
        if prg is not None: best[o] = min(best[o], *self.time(prg)[0])
    return best

  def outputs(self, prg:UOp) -> dict[int, np.ndarray]:
    """Run once with every output poisoned first (NaN for floats), and read the outputs back."""
    if self.wedged is not None: raise RunTimeout(self.wedged)
    for i in prg.arg.outs: _copyin(self.bufs[i], _poison(self.bufs[i]))
    self._run(self._timer(prg))
    # a fresh host array each (the reference keeps its own): no second copy is needed, and on a 216M-element fp16 output each one
    # is half a second of the reference's seconds
    return {i: _copyout(self.bufs[i]) for i in prg.arg.outs}

  def set_reference(self, prg:UOp, exact:UOp|None=None):
    """`prg`: the unoptimized kernel. `exact`: for a low-precision kernel, its widen()ed build compiled, which runs once on float32
    copies of the very same inputs; candidates are then checked against its outputs (compare_exact)."""
    self.ref = self.outputs(prg)
    if exact is None or self.low is None: self._exact = None
    else:   # float outputs only: an integer one is compared with the unoptimized kernel's, in the kernel's own precision
      outs = self.outputs_f32(exact)
      # host numpy over every element (seconds on a network-size output), on a thread: a search goes on meanwhile (tune-model's
      # other kernels too), and the first check waits for it
      self._exact = {i: _bounds_pool().submit(exact_bounds, self.ref[i], *outs[i], self.low, sample_idx(self.ref[i].size, self.seed))
                     for i in outs if i in self.ref and self.ref[i].dtype.kind == "f"}

  def outputs_f32(self, prg:UOp) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each output of the float32 build `prg` (widen) on this Bench's inputs upcast exactly, with its two witnesses; the buffers
    live for this run only."""
    if self.wedged is not None: raise RunTimeout(self.wedged)
    n, outs = len(self.bufs), sorted(i for i in prg.arg.outs if i < len(self.bufs))
    bufs = [Buffer(self.device, b.size, F32 if b.dtype in LOW else b.dtype) for b in self.bufs]
    bufs += [Buffer(self.device, self.bufs[i].size, F32) for i in outs for _ in range(2)]
    try:
      for i, w in enumerate(bufs):   # outputs poisoned as in outputs(): a kernel that reads one reads the same
        if i >= n: w.ensure_allocated(); continue   # the witnesses are written, never read: no poison to copy in
        _copyin(w.ensure_allocated(), _poison(w) if i in prg.arg.outs else _copyout(self.bufs[i]).astype(_to_np_dtype(w.dtype)))
      self._run(self._timer(prg, bufs), bufs)
      return {i: (_copyout(bufs[i]), _copyout(bufs[n+2*j]), _copyout(bufs[n+2*j+1])) for j, i in enumerate(outs)}   # fresh arrays (outputs())
    finally:
      for w in bufs:
        if w.is_allocated() and not any(h is bufs for h in self.hung): w.deallocate()

  def check(self, prg:UOp) -> str|None:
    """None if `prg` computes what the reference (unoptimized) kernel computed, else what differs."""
    assert self.ref is not None, "no reference"
    got = self.outputs(prg)
    for i, ref in self.ref.items():
      if i not in got: return f"output {i} not written"
      err = (compare(got[i], ref, sample_idx(ref.size, self.seed)) if self.exact is None or i not in self.exact else
             compare_exact(got[i], self.exact[i]))
      if err is not None: return f"output {i}: {err}"
    return None

  def release(self):
    if self.wedged is not None: return   # freeing waits on the hung kernel too
    for b in self.bufs:
      if b.is_allocated(): b.deallocate()

@functools.cache
def _bounds_pool() -> ThreadPoolExecutor: return ThreadPoolExecutor(1, thread_name_prefix="exact_bounds")
os.register_at_fork(after_in_child=_bounds_pool.cache_clear)   # a forked child has no thread of its parent's pool: it starts its own

def _poison(b:Buffer) -> np.ndarray: return np.full(b.size, np.nan if dtypes.is_float(b.dtype) else 0x5A, dtype=_to_np_dtype(b.dtype))
