"""Running compiled candidates on the device: tinygrad's timing protocol at the kernel's real size (cache flushed before every run,
a warm-up, min of >= 3 runs, early stop for configs far slower than the best known), and the correctness check against the
unoptimized kernel on random inputs."""
from __future__ import annotations
import math
import numpy as np
from tinygrad.device import Buffer
from tinygrad.dtype import dtypes, _to_np_dtype, _from_np_dtype
from tinygrad.engine.realize import time_call
from tinygrad.uop.ops import UOp
from tinygrad.codegen.opt.postrange import args_from_ast

TOLERANCE = {dtypes.float16: 2e-2, dtypes.bfloat16: 5e-2, dtypes.float32: 1e-3, dtypes.float64: 1e-6}

def _copyin(b:Buffer, x:np.ndarray): b.allocator._copyin(b._buf, memoryview(np.ascontiguousarray(x)).cast("B"))

# Float inputs are windows of one pool of standard normals, tiled: drawing 16M normals costs 0.3 s (and a cast to fp16 0.17 s more),
# which a search of a softmax's three kernels paid 1.4 s of before timing anything; a copy costs milliseconds. The pool's period is
# prime, so no power-of-two indexing error maps an element onto an equal one, and each buffer starts at its own random offset.
POOL_N = 1_000_003
_POOLS: dict[np.dtype, np.ndarray] = {}
def random_normal(n:int, npdt, rng:np.random.Generator) -> np.ndarray:
  if (pool := _POOLS.get(dt := np.dtype(npdt))) is None:
    pool = _POOLS[dt] = np.random.default_rng(0).standard_normal(2*POOL_N, dtype=np.float32).astype(dt)
  out, start = np.empty(n, dt), int(rng.integers(POOL_N))
  for i in range(0, n, POOL_N): out[i:i+POOL_N] = pool[start:start+min(POOL_N, n-i)]
  return out

class Bench:
  """Device buffers of one kernel at its real size, filled with random data (never zeros, which hide unwritten outputs)."""
  def __init__(self, ast:UOp, device:str, flush, seed:int=0):
    self.device, self.flush = device, flush
    self.bufs, self.var_vals = args_from_ast(ast, device)
    rng = np.random.default_rng(seed)
    for b in self.bufs:
      b.ensure_allocated()
      npdt = _to_np_dtype(b.dtype)
      if dtypes.is_float(b.dtype): x = random_normal(b.size, npdt, rng)
      elif b.dtype == dtypes.bool: x = rng.integers(0, 2, b.size).astype(np.bool_)
      else: x = rng.integers(0, 2, b.size).astype(npdt)  # integer operands are masks/indices in this corpus: keep them in range
      _copyin(b, x)
    self.ref: dict[int, np.ndarray]|None = None

  def _timer(self, prg:UOp):
    return time_call(prg.call(*[UOp.from_buffer(b) for b in self.bufs]), self.var_vals)

  def time(self, prg:UOp, runs:int=3, early_stop:float=math.inf) -> tuple[list[float], bool]:
    """Run times in seconds: a warm-up, then `runs` timed runs, each after a cache flush. A config slower than `early_stop` in its
    warm-up and in the run after it has only that run timed (returns early_stopped=True). One slow warm-up is not enough: a
    first run can take milliseconds more than every later one (on the CPU, a CvT kernel's config stored at 6.0 ms from its warm-up
    alone ran 18 us timed again: results/logs/retime_cpu_s11.log), and the search would drop a good config on it."""
    timer = self._timer(prg)
    self.flush()
    out = []
    if (warm := next(timer)) > early_stop:
      self.flush()
      if (again := next(timer)) > early_stop: return [again], True
      out.append(again)   # the warm-up was the outlier: this run counts, the protocol goes on
    for _ in range(runs - len(out)):
      self.flush()
      out.append(next(timer))
    return out, False

  def outputs(self, prg:UOp) -> dict[int, np.ndarray]:
    """Run once with every output poisoned first (NaN for floats), and read the outputs back."""
    for i in prg.arg.outs:
      b = self.bufs[i]
      poison = np.full(b.size, np.nan if dtypes.is_float(b.dtype) else 0x5A, dtype=_to_np_dtype(b.dtype))
      _copyin(b, poison)
    next(self._timer(prg))
    return {i: self.bufs[i].numpy().copy() for i in prg.arg.outs}

  def set_reference(self, prg:UOp): self.ref = self.outputs(prg)

  def check(self, prg:UOp) -> str|None:
    """None if `prg` computes what the reference (unoptimized) kernel computed, else what differs."""
    assert self.ref is not None, "no reference"
    got = self.outputs(prg)
    for i, ref in self.ref.items():
      if i not in got: return f"output {i} not written"
      if (err := compare(got[i], ref)) is not None: return f"output {i}: {err}"
    return None

  def release(self):
    for b in self.bufs:
      if b.is_allocated(): b.deallocate()

def compare(got:np.ndarray, ref:np.ndarray) -> str|None:
  """Elementwise |got-ref| <= tol*(|ref| + rms(ref)), tolerance by dtype; a NaN where the reference is finite always fails."""
  if got.shape != ref.shape: return f"shape {got.shape} != {ref.shape}"
  if ref.dtype.kind not in "fc": return None if np.array_equal(got, ref) else f"{int((got != ref).sum())} elements differ"
  # float32 work arrays, reused in place: outputs of network-size kernels are tens of millions of elements
  g, r = got.astype(np.float32), ref.astype(np.float32)
  if not (fin := np.isfinite(r)).all(): g, r = g[fin], r[fin]
  if not np.isfinite(g).all(): return f"{int((~np.isfinite(g)).sum())} non-finite elements where the reference is finite"
  tol = TOLERANCE.get(_from_np_dtype(ref.dtype), 1e-3)
  scale = float(np.sqrt(np.mean(np.square(r, dtype=np.float64)))) if r.size else 0.0
  np.subtract(g, r, out=g); np.abs(g, out=g)        # g is now |got - ref|
  np.abs(r, out=r); r += scale; r *= tol            # r is now the allowed error
  if (nbad := int(np.count_nonzero(g > r))): return f"{nbad}/{g.size} elements off, max abs err {g.max():.3g} (tol {tol})"
  return None
