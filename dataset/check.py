"""The correctness check: what a candidate's outputs must be to count as the unoptimized kernel's. Float32 outputs against the
unoptimized kernel's elementwise; a low-precision kernel's against the same kernel computed in float32 (widen), within what its
rounding allows, element by element and as a whole."""
from __future__ import annotations
import functools, math
from dataclasses import replace
from typing import NamedTuple
import numpy as np
from tinygrad.dtype import DType, dtypes, _from_np_dtype
from tinygrad.uop.ops import UOp, Ops, GroupOp

F32 = dtypes.float32
# The check's version, kept in every tuned-cache entry (search.cache): 2 bounds a low-precision output's root-mean-square error
# too. A low-precision kernel's entry from an older check may compute wrong (the LLaMA gate/up config passed version 1).
VERSION = 2
TOLERANCE = {dtypes.float16: 2e-2, dtypes.bfloat16: 5e-2, dtypes.float32: 1e-3, dtypes.float64: 1e-6}
LOW = (dtypes.float16, dtypes.bfloat16)   # checked against a float32 build of the kernel (widen)
FINITE_MAX = {dtypes.float16: 65504.0, dtypes.bfloat16: 3.3895e38, dtypes.float32: 3.4028e38, dtypes.float64: 1.7976e308}
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
  scale = _rms(r)
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
  scale = _rms(ec)
  # float32 work arrays, reused in place: outputs of network-size kernels are millions of elements
  with np.errstate(invalid="ignore"):   # inf - inf where a -inf mask is in both: not checked
    np.subtract(r, e, out=r); np.abs(r, out=r); r *= 2   # r is now twice the unoptimized kernel's own error
  allowed = np.abs(e); allowed += scale; allowed *= tol
  rnd = np.sqrt(sq); rnd *= ROUNDING*u; allowed += rnd; del rnd
  ref_err = _rms(r if checked.all() else r[checked]) / 2
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
  if (rms := _rms(g[checked])) > ex.rms_allowed:
    return f"root-mean-square error {rms:.3g} off the float32 result where {ex.rms_allowed:.3g} is allowed{ex.note}"
  if ex.chunk_allowed is not None and (nbad := int(np.count_nonzero(bad := chunk_rms(np.where(checked, g, 0)) > ex.chunk_allowed))):
    i = int(np.argmax(bad))
    return (f"{nbad} of {bad.size} runs of {CHUNK} elements off the float32 result by more than their rounding allows, the first "
            f"at element {i*CHUNK}{ex.note}")
  return None

def _rms(x:np.ndarray) -> float: return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0

def chunk_rms(x:np.ndarray) -> np.ndarray:
  """The root mean square of each CHUNK elements of x in turn (the last run: what is left, over CHUNK)."""
  n = -(-x.size // CHUNK) * CHUNK
  sq = np.zeros(n, np.float64); np.square(x, out=sq[:x.size], dtype=np.float64)
  return np.sqrt(sq.reshape(-1, CHUNK).mean(axis=1))
