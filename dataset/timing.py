"""Running compiled candidates on the device: tinygrad's timing protocol at the kernel's real size (cache flushed before every run,
a warm-up, min of >= 3 runs, early stop for configs far slower than the best known), and the correctness check against the
unoptimized kernel on random inputs (for a low-precision kernel, against the same kernel computed in float32 too)."""
from __future__ import annotations
import functools, math, os, queue, threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import NamedTuple
import numpy as np
from tinygrad.device import Buffer
from tinygrad.dtype import DType, dtypes, _to_np_dtype, _from_np_dtype
from tinygrad.engine.realize import time_call
from tinygrad.uop.ops import UOp, Ops, GroupOp
from tinygrad.codegen.opt.postrange import args_from_ast

F32 = dtypes.float32
TOLERANCE = {dtypes.float16: 2e-2, dtypes.bfloat16: 5e-2, dtypes.float32: 1e-3, dtypes.float64: 1e-6}
LOW = (dtypes.float16, dtypes.bfloat16)   # checked against a float32 build of the kernel (widen)
FINITE_MAX = {dtypes.float16: 65504.0, dtypes.bfloat16: 3.3895e38, dtypes.float32: 3.4028e38, dtypes.float64: 1.7976e308}
# Low-precision inputs are normals of this scale. A kernel after the first of its op reads buffers an earlier kernel wrote (a row
# max, a sum of exps), but here they are independent randoms: with unit normals, the sum of exp(x - m) over a 16384-column fp16
# softmax row is 16384*exp(0.5 - m), beyond fp16's range for every row with m < -0.9. At 1/8 it stays within half the range for
# every row (m >= -4.5 sigma), and a 4096-long dot product of such inputs is still of unit scale (64 sigma^2), far from subnormals.
LOW_SCALE = 0.125
# Rounding a value v to low precision errs by up to u*|v| (u = 2^-11 for float16). A term of a reduction rounds a few of its values
# (attention's e, e/s and e/s*V), each error about u times the term's largest value, and the terms' errors add up at random: to
# about u*rss, rss the root of the sum over the terms of that largest value squared (the sum is widen's second witness). 8x is a
# tail no correct kernel reaches: on the CPU, hand-coded fp16 attention (seq 1024) reached 2.6x with unit-normal inputs, 0.6x at
# LOW_SCALE.
ROUNDING = 8.0
# The elementwise bound takes the largest low-precision value on an element's way as the scale of its rounding errors. Where that
# value dwarfs the output, it allows anything: in the LLaMA block's gate/up GEMM (silu(x@Wg) * (x@Wu), inputs at LOW_SCALE) the
# sigmoid's 1 + exp(-g) is about 2 and the output about 1e-5, so an output of zeros passed, and on the GPU a tensor-core config whose
# output is unrelated to the op's (float64 from the block's own inputs: rms error 1.37x the output's) passed it. So the output as a
# whole must also be as close to the float32 result as the unoptimized kernel's is, within RMS_K, or within the dtype's tolerance of
# its rms: a correct config rounds as much as the unoptimized kernel (or no more than the tolerance), a wrong one is off by ~1.4x rms.
RMS_K = 8.0
# The same over each run of CHUNK elements (in output order, or the sample's): a wrong tile of a large output is too few elements to
# move the whole output's root mean square, and a run of them in a chunk does.
CHUNK = 256

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

def low_dtype(ast:UOp) -> DType|None:
  """The lowest-precision float dtype of a low-precision kernel (anywhere in its AST), None for a float32 kernel."""
  return min((dt for u in ast.toposort() for dt in (u.dtype, u.arg.dtype if u.op is Ops.PARAM else None) if dt in LOW),
             key=lambda dt: dtypes.finfo(dt)[1], default=None)

def _mag(x:UOp) -> UOp:
  a = x.maximum(-x)
  return (a < math.inf).where(a, 0.0)   # an infinity in float32 is the op's own (a -inf mask), not a low-precision overflow
def _max(a:UOp|None, b:UOp|None) -> UOp|None: return b if a is None else a if b is None else a.maximum(b)

def widen(ast:UOp) -> UOp|None:
  """The kernel in float32: every float16/bfloat16 value, cast and buffer made float32; the same loops over the same elements.
  Each output gets two witnesses, in slots n+2j and n+2j+1 for the j-th output slot in order (n: the kernel's slots), of the
  low-precision values the kernel computes on the way to each element (in float32; an infinity there is no overflow): their
  largest magnitude (where it nears the range, low precision overflows on the way) and their largest square summed over
  reductions (its root scales the rounding errors of low precision there). None without a low-precision dtype, with a BITCAST
  (widening changes what its bits mean), or for a kernel that is not stores to buffers (under ENDs)."""
  if low_dtype(ast) is None: return None
  new: dict[UOp, UOp] = {}
  mx: dict[UOp, UOp] = {}
  sq: dict[UOp, UOp] = {}
  for u in ast.toposort():
    if u.op is Ops.BITCAST: return None
    arg = (replace(u.arg, dtype=F32) if u.op is Ops.PARAM and u.arg.dtype in LOW else
           F32 if isinstance(u.arg, DType) and u.arg in LOW else u.arg)
    nu = new[u] = UOp(u.op, F32 if u.dtype in LOW else u.dtype, tuple(new[s] for s in u.src), arg, u.tag)
    if u.op is Ops.REDUCE and u.src[0] in mx:
      m = UOp(Ops.REDUCE, F32, (mx[u.src[0]], *nu.src[1:]), (Ops.MAX, *u.arg[1:]))
      q = UOp(Ops.REDUCE, F32, (sq[u.src[0]], *nu.src[1:]), (Ops.ADD, *u.arg[1:]))
    elif u.op in GroupOp.ALU or u.op in (Ops.CAST, Ops.REDUCE):
      m = q = None
      for x in u.src: m, q = _max(m, mx.get(x)), _max(q, sq.get(x))
    else: continue
    if u.dtype in LOW: m, q = _max(m, t := _mag(nu)), _max(q, t*t)
    if m is not None: mx[u], sq[u] = m, q
  stores = [e.src[0] if e.op is Ops.END else e for e in ast.src]
  if any(st.op is not Ops.STORE or st.src[0].op is not Ops.INDEX or st.src[0].src[0].op is not Ops.PARAM for st in stores):
    return None
  n = 1 + max(u.arg.slot for u in ast.toposort() if u.op is Ops.PARAM)
  outs = sorted(st.src[0].src[0].arg.slot for st in stores)
  srcs = []
  for e, st in zip(ast.src, stores):
    idx, j = new[st.src[0]], outs.index(st.src[0].src[0].arg.slot)
    wits = []
    for k, w in enumerate((mx.get(st.src[1]), sq.get(st.src[1]))):
      wp = UOp(Ops.PARAM, F32, idx.src[0].src, replace(idx.src[0].arg, slot=n+2*j+k, dtype=F32))
      val = UOp.const(0.0, F32) if w is None else w
      wits.append(UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, F32, (wp, *idx.src[1:]), idx.arg), val)))
    g = UOp(Ops.GROUP, dtypes.void, (new[st], *wits))   # one loop nest stores the value and its witnesses
    srcs.append(new[e].replace(src=(g, *new[e].src[1:])) if e.op is Ops.END else g)
  return new[ast].replace(src=tuple(srcs))

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

def _nonfinite(ref:np.ndarray, what:str="the reference") -> str:
  """Said with every failure: where the reference itself is NaN/inf nothing is checked there, and a kernel whose inputs make
  it so tells a reader why no config passes apart from one that finds a wrong kernel."""
  n = int(ref.size - np.count_nonzero(np.isfinite(ref)))
  return f"; {what} itself is non-finite at {n}/{ref.size} elements" if n else ""

def compare(got:np.ndarray, ref:np.ndarray, idx:np.ndarray|None=None) -> str|None:
  """Elementwise |got-ref| <= tol*(|ref| + rms(ref)), tolerance by dtype; a NaN where the reference is finite always fails. `idx`:
  the values are compared at these elements only (SAMPLE), the NaN/inf check is of every element."""
  if got.shape != ref.shape: return f"shape {got.shape} != {ref.shape}"
  if ref.dtype.kind not in "fc": return None if np.array_equal(got, ref) else f"{int((got != ref).sum())} elements differ"
  if (bad := int(np.count_nonzero(~np.isfinite(got) & np.isfinite(ref)))):
    return f"{bad} non-finite elements where the reference is finite{_nonfinite(ref)}"
  if idx is not None: got, ref = got[idx], ref[idx]
  # float32 work arrays, reused in place: outputs of network-size kernels are tens of millions of elements
  g, r = got.astype(np.float32), ref.astype(np.float32)
  if not (fin := np.isfinite(r)).all(): g, r = g[fin], r[fin]
  tol = TOLERANCE.get(_from_np_dtype(ref.dtype), 1e-3)
  scale = float(np.sqrt(np.mean(np.square(r, dtype=np.float64)))) if r.size else 0.0
  np.subtract(g, r, out=g); np.abs(g, out=g)        # g is now |got - ref|
  np.abs(r, out=r); r += scale; r *= tol            # r is now the allowed error
  if (nbad := int(np.count_nonzero(g > r))):
    what = f"{nbad}/{g.size} elements" if idx is None else f"{nbad} of {g.size} sampled elements (of {got.size})"
    return f"{what} off, max abs err {g.max():.3g} (tol {tol}){_nonfinite(ref)}"
  return None

# An output larger than this is compared with its reference (or its float32 build) at a fixed random sample of this many elements:
# the bounds of every element cost seconds of host numpy per 100M elements (about 30 s on a 512M-element fp16 attention score
# kernel, most of its search).
# Every element is still checked for being written and finite (outputs() poisons them first), which is where wrong indexing shows.
SAMPLE = 1 << 22

class Exact(NamedTuple):
  """What a low-precision output is checked against, computed once from the references (exact_bounds)."""
  value: np.ndarray     # the float32 build's output (at idx)
  allowed: np.ndarray   # the error allowed at each element (at idx): inf where nothing is checked
  inf_ok: np.ndarray    # where a NaN/inf is legitimate (every element)
  note: str             # where the references themselves are non-finite, said with a failure
  idx: np.ndarray|None = None   # the sampled elements of a large output (SAMPLE), None: all
  rms_allowed: float = math.inf  # the root-mean-square error allowed over the checked elements (exact_bounds)
  chunk_allowed: np.ndarray|None = None   # and over each CHUNK checked elements in turn

def sample_idx(n:int, seed:int=0) -> np.ndarray|None: return None if n <= SAMPLE else _sample(n, seed, SAMPLE)
@functools.lru_cache(maxsize=8)   # every candidate of a kernel is checked at the same elements
def _sample(n:int, seed:int, k:int) -> np.ndarray:
  """np.unique of k random indices below n, by a sort: numpy 2's hash-based unique took 4 s on 4M of them (a 2-core machine),
  seconds of every large-output kernel's check (after the search: 3.4-3.7 s on the H200 for 5-19M-element fp32 outputs)."""
  x = np.sort(np.random.default_rng(seed).integers(0, n, k))
  return x[np.concatenate(([True], x[1:] != x[:-1]))]

def exact_bounds(ref:np.ndarray, value:np.ndarray, mx:np.ndarray, sq:np.ndarray, low:DType, idx:np.ndarray|None=None) -> Exact:
  """The check of a low-precision output from the unoptimized kernel's (`ref`) and the float32 build's on the same inputs (`value`
  and its witnesses `mx`, `sq`: widen), at the elements `idx` (None: all). Allowed: `low`'s tolerance plus what rounding the
  low-precision values on the way can do, and no less than twice the unoptimized kernel's own error:
  max(tol*(|value| + rms(value)) + ROUNDING*u*sqrt(sq), 2*|ref-value|); and over the checked elements together, a root-mean-square
  error of no more than max(tol*rms(value), RMS_K*rms(ref-value)), and over each CHUNK of them in turn, no more than
  max(tol*max(rms(value), its rms(value)), RMS_K*its rms(ref-value)).
  Not checked: elements where the float32 result or the unoptimized kernel is NaN/inf. A NaN/inf is legitimate only where a
  low-precision value on the way (the output itself included) is beyond or within a factor 2 of the dtype's largest finite value:
  whether a sum just below it rounds to inf depends on its order, and a 1/x of an input near 0 overflows in any order."""
  inf_ok = ~(np.isfinite(value) & np.isfinite(ref)) | (mx >= FINITE_MAX[low]/2)   # every element: compare_exact's NaN check is whole
  note = _nonfinite(value, "the float32 result") + _nonfinite(ref, "the unoptimized kernel")
  if idx is not None: ref, value, sq = ref[idx], value[idx], sq[idx]
  e, r = value.astype(np.float32, copy=False), ref.astype(np.float32)
  checked = np.isfinite(e) & np.isfinite(r)
  tol, u = TOLERANCE.get(low, 2e-2), 2.0**-(dtypes.finfo(low)[1]+1)
  ec = e if checked.all() else e[checked]
  scale = float(np.sqrt(np.mean(np.square(ec, dtype=np.float64)))) if ec.size else 0.0
  # float32 work arrays, reused in place: outputs of network-size kernels are millions of elements
  with np.errstate(invalid="ignore"):   # inf - inf where a -inf mask is in both: not checked
    np.subtract(r, e, out=r); np.abs(r, out=r); r *= 2   # r is now twice the unoptimized kernel's own error
  allowed = np.abs(e); allowed += scale; allowed *= tol
  rnd = np.sqrt(sq); rnd *= ROUNDING*u; allowed += rnd; del rnd
  ref_err = float(np.sqrt(np.mean(np.square(r if checked.all() else r[checked], dtype=np.float64)))) / 2 if ec.size else 0.0
  chunk = np.maximum(tol*np.maximum(chunk_rms(np.where(checked, e, 0)), scale), RMS_K/2*chunk_rms(np.where(checked, r, 0)))
  np.maximum(allowed, r, out=allowed); del r
  allowed[~checked] = np.inf
  return Exact(e, allowed, inf_ok, note, idx, max(tol*scale, RMS_K*ref_err), chunk)

def compare_exact(got:np.ndarray, ex:Exact) -> str|None:
  """A low-precision kernel's output against its float32 build's, within what exact_bounds allows: every element for NaN/inf, the
  sampled ones (ex.idx) for their values."""
  if got.shape != ex.inf_ok.shape: return f"shape {got.shape} != {ex.inf_ok.shape}"
  if not (fin := np.isfinite(got)).all():
    if (nbad := int(np.count_nonzero(~fin & ~ex.inf_ok))):
      bad = ~fin & ~ex.inf_ok
      near = np.abs(ex.value[bad[ex.idx] if ex.idx is not None else bad])
      return (f"{nbad} non-finite elements where the float32 result is finite and no low-precision value on the way nears the "
              f"range{f' (|result| up to {float(near.max()):.4g})' if near.size else ''}{ex.note}")
  g = (got if ex.idx is None else got[ex.idx]).astype(np.float32)
  if not (gfin := np.isfinite(g)).all(): g[~gfin] = ex.value[~gfin]   # legitimate (checked above): nothing more to check there
  with np.errstate(invalid="ignore"): np.subtract(g, ex.value, out=g)   # inf - inf where the result is -inf: not checked
  np.abs(g, out=g)                                                       # g is now |got - exact|
  if (nbad := int(np.count_nonzero(g > ex.allowed))):
    i = int(np.argmax(g - ex.allowed))
    what = f"{nbad}/{g.size} elements" if ex.idx is None else f"{nbad} of {g.size} sampled elements (of {got.size})"
    return f"{what} off the float32 result, worst err {g[i]:.3g} where {ex.allowed[i]:.3g} is allowed{ex.note}"
  checked = np.isfinite(ex.allowed) & np.isfinite(g)
  if (rms := float(np.sqrt(np.mean(np.square(g[checked], dtype=np.float64)))) if checked.any() else 0.0) > ex.rms_allowed:
    return f"root-mean-square error {rms:.3g} off the float32 result where {ex.rms_allowed:.3g} is allowed{ex.note}"
  if ex.chunk_allowed is not None and (nbad := int(np.count_nonzero(bad := chunk_rms(np.where(checked, g, 0)) > ex.chunk_allowed))):
    i = int(np.argmax(bad))
    return (f"{nbad} of {bad.size} runs of {CHUNK} elements off the float32 result by more than their rounding allows, the first "
            f"at element {i*CHUNK}{ex.note}")
  return None

def chunk_rms(x:np.ndarray) -> np.ndarray:
  """The root mean square of each CHUNK elements of x in turn (the last run: what is left, over CHUNK)."""
  n = -(-x.size // CHUNK) * CHUNK
  sq = np.zeros(n, np.float64); np.square(x, out=sq[:x.size], dtype=np.float64)
  return np.sqrt(sq.reshape(-1, CHUNK).mean(axis=1))
