"""The correctness check on tinygrad's CPU device: a low-precision kernel is checked against its float32 build on the same inputs
(dataset.check.widen, compare_exact), which passes every correct config, rejects wrong ones, and lets a candidate be inf only
where low precision itself overflows."""
import numpy as np
import pytest
from tinygrad import Tensor
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import Ops
from dataset.corpus import parse_variant
from dataset.kernel import Kernel, kernel_asts
from dataset.check import FINITE_MAX, compare, compare_exact, exact_bounds, widen
from dataset.timing import LOW_SCALE, _copyin
from search.measure import Budget, Measurer

ATTN16 = "attention:b=1:heads=2:seq=256:dim=32:causal=0:fp16"

def _kernels(spec:str) -> list[Kernel]:
  return [Kernel(a.key.hex(), a, f"{spec}#{i}", "t", "t") for i, a in enumerate(kernel_asts(*parse_variant(spec).build("CPU")))]

def _measurer(k:Kernel) -> Measurer: return Measurer(k, "CPU", Budget(), workers=0)

def test_widen_makes_every_low_precision_dtype_float32_and_adds_two_witnesses_per_output():
  for k in _kernels(ATTN16):
    w = widen(k.ast)
    assert not any(u.dtype == dtypes.half or (u.op is Ops.PARAM and u.arg.dtype == dtypes.half) for u in w.toposort())
    slots = lambda a: sorted(u.arg.slot for u in a.toposort() if u.op is Ops.PARAM)
    assert slots(w) == list(range(len(slots(k.ast)) + 2))   # one output: its two witnesses follow the kernel's slots
  assert widen(_kernels("softmax:rows=16:cols=64:log=0:fp32")[0].ast) is None   # a float32 kernel keeps its one reference

# the causal mask's kernels in CI's slow step: the default run stays under 8 minutes on 2 cores
@pytest.mark.parametrize("causal", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_fp16_attention_hand_coded_and_unoptimized_pass(causal):
  """Every kernel of tinygrad's fp16 attention (four: scores, row max, sum of exps, softmax times V), inputs at LOW_SCALE."""
  for k in _kernels(ATTN16.replace("causal=0", f"causal={causal}")):
    m = _measurer(k)
    assert m.verify(m.hand) is None and m.verify(m.ref_opts) is None   # ref_opts: the unoptimized kernel on the CPU
    assert m.bench.exact is not None and abs(float(m.bench.bufs[1].numpy().astype(np.float32).std()) - LOW_SCALE) < 0.1*LOW_SCALE
    m.close()

def _tiny_sums(m:Measurer, rows:list[int], s:float, v_scale:float=1.0):
  """Attention's last kernel (exp(x - max) / sum * V) with the sum of a few rows near 0: an input an earlier kernel never writes
  (the sum of exps is >= 1), as random inputs can be. e/s then overflows fp16 in the kernel, whatever the order."""
  x, mx, sm, v = (b.numpy().astype(np.float32) for b in m.bench.bufs[1:])
  mx[:] = 0.0; sm[rows] = s   # e = exp(x) ~ 1: e/s ~ 1/s
  for b, a in zip(m.bench.bufs[1:], (x, mx, sm, v*v_scale)): _copyin(b, a.astype(np.float16))

def test_old_check_rejects_a_correct_fp16_kernel_the_new_one_passes():
  """The hand-coded kernel keeps e/s in an fp16 register (inf for e/s > 65504) where the unoptimized one computes e/s*V in float:
  the old check (against the unoptimized fp16 kernel) saw inf where its reference was finite and rejected a correct kernel."""
  k = _kernels(ATTN16)[3]
  m = _measurer(k)
  _tiny_sums(m, [3, 77, 300], 1.2e-5, v_scale=0.01)   # e/s ~ 8e4 overflows; (e/s)*V ~ 1e3 would not
  assert m.verify(m.hand) is None
  got, ref, ex = m.bench.outputs(m.progs[m.hand])[0], m.bench.ref[0], m.bench.exact[0]
  bad = ~np.isfinite(got)
  assert bad.any() and np.isfinite(ref[bad]).all() and (np.abs(ex.value[bad]) < FINITE_MAX[dtypes.half]/2).all()   # in range, yet inf
  assert ex.inf_ok[bad].all()   # the witness: a value on the way nears fp16's range
  assert "non-finite elements where the reference is finite" in compare(got, ref)   # the old check
  m.close()

def test_inf_where_the_float32_result_is_beyond_fp16_passes():
  k = _kernels(ATTN16)[3]
  m = _measurer(k)
  _tiny_sums(m, [5, 6], 1e-6)   # the whole result ~ 1e6: beyond fp16's range in float32 too
  assert m.verify(m.hand) is None
  got, ex = m.bench.outputs(m.progs[m.hand])[0], m.bench.exact[0]
  assert np.count_nonzero(~np.isfinite(got) & (np.abs(ex.value) > FINITE_MAX[dtypes.half])) >= 32   # inf where float32 is beyond
  m.close()

def test_order_decides_inf_near_the_range():
  """A sum that is 65515 exactly rounds to 65504 in one order and to inf in another (>= 65520): both are right. Far from the range,
  inf is wrong; so is a finite value off by more than the tolerance."""
  e = np.random.default_rng(0).standard_normal(10_000).astype(np.float32) * 100
  e[0], e[1] = 65515, 300
  ref = e.astype(np.float16)
  ex = exact_bounds(ref, e, np.abs(e), e*e, dtypes.half)   # witnesses of an output with nothing on the way but itself
  def check(i, v):
    got = ref.copy(); got[i] = v
    return compare_exact(got, ex)
  assert check(0, np.inf) is None and check(1, 303) is None
  assert "1 non-finite elements where the float32 result is finite" in check(1, np.inf)
  assert "1/10000 elements off the float32 result" in check(1, 450)

PERTURB = {
  "nan": lambda x: _set(x, 17, np.nan),                          # an element never written (outputs() poisons with NaN)
  "zero": lambda x: _set(x, int(np.argmax(np.abs(x))), 0.0),    # an element written with the wrong value
  "off": lambda x: x * np.asarray(1.1, x.dtype),                 # 10% off everywhere
  "rows": lambda x: np.roll(x.reshape(-1, 32), 1, axis=0).reshape(-1),   # each row of the output in the next row's place
}
def _set(x:np.ndarray, i:int, v:float) -> np.ndarray:
  x = x.copy(); x[i] = v
  return x

@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_wrong_outputs_are_rejected(dtype):
  """The hand-coded kernel's output, perturbed as a wrong kernel's would be, fails: fp16 against its float32 build, fp32 against
  the unoptimized kernel."""
  m = _measurer(_kernels(ATTN16.replace("fp16", dtype))[3])
  assert m.verify(m.hand) is None and (m.bench.exact is not None) == (dtype == "fp16")
  right = m.bench.outputs
  for how, perturb in PERTURB.items():
    m.bench.outputs = lambda prg: {i: perturb(x) for i, x in right(prg).items()}
    assert (err := m.bench.check(m.progs[m.hand])) is not None and ("off" in err or "non-finite" in err), how
  m.close()

@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_another_function_is_rejected(dtype):
  """softmax's last kernel (e/s) and log-softmax's (x - m - log s) take the same buffers: one passed off as the other fails."""
  soft, logsoft = (_kernels(f"softmax:rows=16:cols=64:log={log}:{dtype}")[2] for log in (0, 1))
  m, other = _measurer(soft), _measurer(logsoft)
  other.measure([other.hand])
  fake = ("planted",)
  m.times[fake], m.progs[fake] = 1e-12, other.program(other.hand)
  assert m.verify(m.hand) is None and (err := m.verify(fake)) is not None and ("off" in err or "non-finite" in err)
  m.close(); other.close()

def test_large_output_sampled(monkeypatch):
  """Beyond SAMPLE elements the values are compared at a fixed sample, but a NaN anywhere (an element never written) still fails,
  and a wrong region as small as one row of the output is caught."""
  import dataset.check as check
  monkeypatch.setattr(check, "SAMPLE", 1000)
  e = np.random.default_rng(1).standard_normal(64*1024).astype(np.float32)
  ref = e.astype(np.float16)
  ex = exact_bounds(ref, e, np.abs(e), e*e, dtypes.half, check.sample_idx(e.size))
  assert ex.idx is not None and ex.value.size < 1000 < ex.inf_ok.size
  assert compare_exact(ref.copy(), ex) is None
  unsampled = int(np.setdiff1d(np.arange(e.size), ex.idx)[0])
  assert "1 non-finite elements" in compare_exact(_set(ref, unsampled, np.nan), ex)
  row = ref.copy(); row[-1024:] *= np.float16(1.5)   # the last of 64 rows wrong
  assert "sampled elements" in compare_exact(row, ex)
  # float32 outputs against the unoptimized kernel's: the same sample and the same whole NaN check
  idx = check.sample_idx(e.size)
  assert compare(e.copy(), e, idx) is None and "1 non-finite elements" in compare(_set(e, unsampled, np.nan), e, idx)
  row = e.copy(); row[-1024:] += 1.0
  assert "sampled elements" in compare(row, e, idx)
  # the sample: distinct sorted indices, the very ones np.unique of the same draw gives (stores' checks stay comparable)
  for n, k, seed in ((64*1024, 1000, 0), (10**7, 1 << 16, 3)):
    got = check._sample(n, seed, k)
    assert np.array_equal(got, np.unique(np.random.default_rng(seed).integers(0, n, k))) and got.max() < n

def test_reference_is_computed_while_a_batch_compiles():
  # the reference fills the first wait on compiles, so verify() after the search has only the candidate to run
  import random
  from dataset.kernel import scheduler
  from dataset.sampler import random_walk
  k = _kernels("softmax:rows=16:cols=64:log=0:fp16")[0]
  m = Measurer(k, "CPU", Budget(measurements=6), workers=2)
  m._ahead[m.ref_opts].result()   # its compile is in (it started with the Measurer), and the float32 build's
  if m._exact is not None and m._exact[2] is not None: m._exact[2].result()
  base, rng = scheduler(k.ast, m.ren), random.Random(0)
  batch = [o for o in dict.fromkeys(random_walk(base, rng, 3) for _ in range(8)) if o][:4]
  assert m.bench.ref is None and batch
  m.measure(batch)
  assert m.bench.ref is not None and m.bench.exact is not None   # fp16: checked against its float32 build too
  assert 0 < m.reference_s <= m.elapsed   # reported as a phase (bench_unseen, tune-model rows)
  assert m.verify(m.hand) is None
  m.close()

def test_reference_time_is_not_counted_as_a_candidates_cost():
  # time budgets plan rounds by the seconds a candidate costs: the reference, computed in a round's wait, is no candidate's
  import random, time
  from dataset.kernel import scheduler
  from dataset.sampler import random_walk
  k = _kernels("softmax:rows=16:cols=64:log=0:fp32")[0]
  m = Measurer(k, "CPU", Budget(measurements=6), workers=2)
  m._ahead[m.ref_opts].result()
  real = m._reference
  m._reference = lambda: (time.sleep(0.5), real())[1]
  base, rng = scheduler(k.ast, m.ren), random.Random(0)
  batch = [o for o in dict.fromkeys(random_walk(base, rng, 3) for _ in range(8)) if o][:4]
  st = time.perf_counter(); m.measure(batch); took = time.perf_counter() - st
  assert m.bench.ref is not None and m._idle_s >= 0.5 and m._meas_s <= took - 0.45
  m.close()

def test_a_batch_holding_the_references_opts_is_measured_when_the_reference_collects_it_first():
  # the reference's compile, collected by _idle in the batch's wait, is also a candidate of that batch (on the H200 the beam
  # proposed the reference's LOCAL config and the run crashed with a KeyError)
  import random
  from dataset.kernel import scheduler
  from dataset.sampler import random_walk
  k = _kernels("softmax:rows=16:cols=64:log=0:fp32")[0]
  m = Measurer(k, "CPU", Budget(measurements=6), workers=2)
  m._ahead[m.ref_opts].result()
  base, rng = scheduler(k.ast, m.ren), random.Random(0)
  batch = [m.ref_opts] + [o for o in dict.fromkeys(random_walk(base, rng, 3) for _ in range(8)) if o and o != m.ref_opts][:3]
  times = m.measure(batch, cut=True)
  assert m.bench.ref is not None and times[0] < float("inf") and m.ref_opts in m.times
  m.close()

def test_a_wrong_output_is_rejected_where_values_on_the_way_dwarf_it():
  """The LLaMA block's gate/up GEMM at a small size: silu(x*r*w @ Wg) * (x*r*w @ Wu), fp16. The sigmoid's 1 + exp(-g) (about 2)
  is the largest value on an element's way, the output about 1e-5 at LOW_SCALE inputs: the elementwise bound alone allowed any
  output (zeros passed; on the GPU a tensor-core config whose output was unrelated to the op's passed). Correct configs still pass."""
  x, w = Tensor.empty(32, 128, dtype=dtypes.half), Tensor.empty(128, dtype=dtypes.half)
  r, wg, wu = Tensor.empty(32, 1), Tensor.empty(128, 256, dtype=dtypes.half), Tensor.empty(128, 256, dtype=dtypes.half)
  xn = x * r.cast(dtypes.half) * w
  a, = kernel_asts((xn @ wg).silu() * (xn @ wu))
  m = _measurer(Kernel(a.key.hex(), a, "gateup", "t", "t"))
  assert m.verify(m.hand) is None and m.verify(m.ref_opts) is None
  ref, ex = m.bench.ref[0], m.bench.exact[0]
  assert float(np.median(ex.allowed)) > 10 * float(np.abs(ex.value).max())   # the elementwise bound: anything passes it
  for wrong in (np.zeros_like(ref), np.roll(ref, 1), ref * np.float16(1.1)):
    assert "root-mean-square error" in compare_exact(wrong, ex)
  tile = ref.copy(); tile[1000:1008] = 0   # too few elements to move the whole output's rms: their run of CHUNK is off
  assert "1 of 32 runs of 256 elements" in compare_exact(tile, ex)
  assert compare_exact(ref, ex) is None
  m.close()
