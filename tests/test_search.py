"""Search on tinygrad's CPU device: budgets, the correctness gate, the tuned-kernel cache in a real multi-kernel run, CLI errors."""
import json, math, random, subprocess, sys, time
from pathlib import Path
import numpy as np
import pytest
from conftest import script
from tinygrad import Tensor
from tinygrad.uop.ops import Ops
from tinygrad.engine.realize import compile_linear
from dataset.corpus import parse_variant
from dataset.kernel import Kernel, kernel_asts, scheduler, with_opts, opts_from_json, opts_to_json
from dataset.device import renderer_for
from dataset.sampler import children, hand_coded, replay
from search.measure import Budget, Measurer
from search.commute import normal_form
from search.context import Context
from search.branches import group_candidates, tc_candidates
from search.strategies import STRATEGIES, finish

ROOT = Path(__file__).resolve().parents[1]
CPU = renderer_for("CPU")

def _kernel(spec:str, i:int=0) -> Kernel:
  ast = kernel_asts(*parse_variant(spec).build("CPU"))[i]
  return Kernel(ast.key.hex(), ast, f"{spec}#{i}", "t", "t")

def upcast_scorer(ks):  # deterministic stand-in for a model: these tests are about budgets, not ranking quality
  return np.array([float(np.prod([s for s, t in zip(k.full_shape, k.axis_types) if t.name in ("UPCAST", "UNROLL")] or [1]))
                   + 0.01*len(k.applied_opts) for k in ks])

@pytest.mark.parametrize("strategy", ["random", pytest.param("tpe", marks=pytest.mark.slow), "mcts", "beam"])   # tpe: optuna's study, ~8 s
def test_strategies_respect_the_measurement_budget(strategy):
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=5))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  STRATEGIES[strategy]().run(ctx)
  assert 1 <= m.timed <= 5 and len(m.trajectory) == m.timed
  assert [b for *_, b in m.trajectory] == sorted([b for *_, b in m.trajectory], reverse=True)   # best-so-far only improves
  o = finish(ctx, strategy, m.elapsed)
  assert o.verified and o.time_s <= o.hand_time_s and o.timed <= 5 + 1 + len(ctx.final_picks)   # + hand-coded, final picks
  m.close()

@pytest.mark.parametrize("strategy", [pytest.param("beam", marks=pytest.mark.slow), "mcts"])   # beam: ~13 s on 2 cores
def test_a_search_run_again_with_more_budget_goes_on_where_it_stopped(strategy, monkeypatch):
  # tune-model's scheduler gives a kernel budget in rounds: 3, then 6 in all. Nothing is measured twice, and the beam ends where
  # one run with 6 ends (the same deterministic scores and the same measured candidates)
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  def run(budgets):
    m = Measurer(k, "CPU", Budget())
    ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
    if strategy == "beam": STRATEGIES[strategy]().prepare(ctx)   # as tune-model does, before any budget: a first batch of seed_picks
    timed = []
    for b in budgets:
      m.budget.measurements = b
      STRATEGIES[strategy]().run(ctx)
      timed.append(m.timed)
    m.close()
    return m, timed
  m2, timed = run([3, 6])
  assert timed[0] == 3 and 3 < timed[1] <= 6 and len(m2.trajectory) == m2.timed
  if strategy == "beam":
    m1, _ = run([6])
    assert list(m2.times) == list(m1.times)   # the same candidates, in the same order

@pytest.mark.slow   # ~12 s on 2 cores
@pytest.mark.parametrize("strategy,args", [("beam", {"k": 2}), ("pure-model", {})])
def test_beam_expands_at_most_width_entries_per_round(strategy, args, monkeypatch):
  import search.context as S
  rounds = []
  def expand(self, parents, near=False, alongside=1, actions=None): rounds.append(len(parents)); return S.Expansion(self, parents, near, alongside, actions)
  monkeypatch.setattr(S.Context, "expand", expand)
  k = _kernel("conv2d:n=1:c=8:h=8:w=8:k=8:ks=3:stride=1:padding=1:fp32")
  m = Measurer(k, "CPU", Budget(measurements=6))   # the descent's rounds are what is counted: one batch of 6 timed is enough
  STRATEGIES[strategy](width=3, descent_width=2, **args).run(Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0)))
  assert len(rounds) >= 2 and max(rounds) <= 3, rounds
  assert rounds[0] == 1 and rounds[1] == 2, rounds   # the descent's beam: the root, then descent_width parents
  m.close()

def test_descent_patience_crosses_a_depth_that_scores_worse():
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  valley = lambda ks: np.array([{1: 1.0, 2: 0.5}.get(len(c.applied_opts), 2.0) for c in ks])   # depth 2 worse, depth 3 best
  found = {p: Beam(descent_patience=p, max_depth=3).descend(Context(scheduler(k.ast, CPU), None, valley)) for p in (0, 1)}
  assert [len(o) for o, _ in found[0][0]] == [1]       # greedy: stops at the worse depth
  assert [len(o) for o, _ in found[1][0]] == [3, 1]    # patience 1: goes on, and the deeper best comes first
  assert len(found[1][1]) > len(found[0][1])

def test_a_descent_without_swaps_takes_no_swap_step():
  from tinygrad.codegen.opt import OptOps
  from search.beam import Beam
  # SWAP is for GLOBAL axes, which the CPU's kernels lack: a CUDA kernel, scheduled for sm_90 without a GPU
  ast = kernel_asts(*parse_variant("gemm:m=64:k=64:n=64:fp32").build("CUDA"))[0]
  likes_swaps = lambda ks: np.array([float(sum(o.op is OptOps.SWAP for o in c.applied_opts)) for c in ks])
  swaps = lambda picks, pool: sum(any(o.op is OptOps.SWAP for o in opts) for opts, _ in picks + pool)
  on, off = (Beam(descent_swaps=s, max_depth=3).descend(Context(scheduler(ast, renderer_for("CUDA", "sm_90", compiler=False)), None, likes_swaps))
             for s in (True, False))
  assert swaps(*on) > 0 and swaps(*off) == 0 and len(off[1]) > 0

@pytest.mark.slow   # ~7 s on 2 cores
def test_a_later_round_takes_the_round_size_it_is_given():
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  m = Measurer(k, "CPU", Budget(measurements=60))
  # (the model-free stand-in: a beam of every valid child, so that the expanded parents have more than 7 left)
  ctx, b = Context(scheduler(k.ast, CPU), m, lambda ks: np.zeros(len(ks)), random.Random(0)), Beam(k=2)
  b.step(ctx)                    # the first batch: hand-coded + seed_picks
  first, seen, ctx.round_size = m.timed, len(m.times), 7
  m.budget.measurements = first + 7   # as tune-model's scheduler gives it: the round's budget (neighbours after the children wait for more)
  b.step(ctx)
  batch = ctx.state["batch"]   # kept while its neighbours wait for budget; None if the round was its 7 children alone
  # 7 configs measured, not Beam.k (a config that compiles to a binary already timed takes that time and is not counted as timed:
  # which children share one depends on which parents timed fastest)
  assert len(m.times) - seen == 7 and m.timed - first <= 7 and (batch is None or not any(o in m.times for o, _ in batch[7:]))
  m.close()

@pytest.mark.slow   # ~10 s on 2 cores
def test_a_budget_too_small_for_two_rounds_is_spent_in_one():
  from search.beam import Beam
  # (a kernel whose fastest deep configs still have children: a tiny conv's have none, and its beam may stop after one round)
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  for n in (6, 20):   # 20: just past the 2*(seed_picks + 1) that one round takes in full
    m = Measurer(k, "CPU", Budget(measurements=n))
    ctx, b = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0)), Beam(adaptive=False)   # the adaptive stop depends on run times
    batch = b.prepare(ctx)
    if n == 6:
      b.run(ctx)
      assert len(batch) == 6 and ctx.state["rounds"] == ctx.state["max_rounds"] == 1 and m.timed <= 6   # hand + 5, the end
    # a full first batch and every round left open (how many follow depends on this machine's timings: not run here)
    else: assert len(batch) == b.seed_picks + 1 and ctx.state["max_rounds"] == b.max_depth
    m.close()

def test_a_round_without_children_waits_for_the_stragglers_instead_of_stopping():
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  m = Measurer(k, "CPU", Budget(measurements=20))
  ctx, b = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0)), Beam(adaptive=False)
  b.prepare(ctx)
  st, late = ctx.state, ctx.state["batch"][1:3]
  st.update(batch=None, rounds=1, measured=[], late=late)   # nothing timed to expand, two compiles still running
  m.ready = lambda o: False
  b._next(ctx)
  assert st["batch"] == late and st["late"] == []
  m.close()

def test_compile_pool_is_shared_across_kernels():
  a, b = _kernel("gemm:m=32:k=64:n=32:fp32"), _kernel("softmax:rows=16:cols=64:log=0:fp32")
  times = []
  for k in (a, b, a):
    m = Measurer(k, "CPU", Budget(measurements=4), workers=2)
    STRATEGIES["random"]().run(Context(scheduler(k.ast, CPU), m, None, random.Random(0)))
    times.append(m.timed); pool = m.pool; m.close()
  from search.measure import shared_pool
  assert all(t >= 2 for t in times) and shared_pool("CPU", 2) is pool
  # its workers score with one BLAS thread each (a worker per core, each with a BLAS thread per core, would oversubscribe the host)
  from threadpoolctl import threadpool_info
  assert {i["num_threads"] for i in pool.submit(threadpool_info).result() if i["user_api"] == "blas"} == {1}

def test_time_budget_stops_search():
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  m = Measurer(k, "CPU", Budget(seconds=0.0))
  STRATEGIES["random"]().run(Context(scheduler(k.ast, CPU), m, None, random.Random(0)))
  assert m.timed == 0
  m.close()

def test_pure_model_measures_nothing_until_verification():
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=50))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  STRATEGIES["pure-model"]().run(ctx)
  assert m.timed == 0 and ctx.final_picks
  o = finish(ctx, "pure-model", m.elapsed)
  assert o.verified and m.timed <= 1 + len(ctx.final_picks)
  m.close()

def test_wrong_kernel_is_never_the_answer():
  soft = _kernel("softmax:rows=16:cols=64:log=0:fp32", 2)
  logsoft = _kernel("softmax:rows=16:cols=64:log=1:fp32", 1)   # same buffers and shapes, other function
  m = Measurer(soft, "CPU", Budget(measurements=3))
  ctx = Context(scheduler(soft.ast, CPU), m, None, random.Random(0))
  m.measure([()])   # a real config beside the planted one (random picks cost seconds to compile, and add nothing here)
  other = Measurer(logsoft, "CPU", Budget(measurements=1))
  lo = hand_coded(scheduler(logsoft.ast, CPU))
  other.measure([lo])
  fake = ("planted",)
  m.times[fake], m.progs[fake] = 1e-12, other.program(lo)   # the fastest "measured" config computes the wrong function
  assert m.verify(fake) is not None
  o = finish(ctx, "random", m.elapsed)
  assert o.verified and o.opts != fake and m.times[fake] == math.inf
  assert [r[0] for r in o.rejected] == [fake] and ("off" in o.rejected[0][2] or "non-finite" in o.rejected[0][2])   # on record, with why
  m.close(); other.close()

def test_tuned_cache_replays_in_a_real_multi_kernel_program(tmp_path):
  from search.cache import TunedCache, tuned, stats
  spec = "softmax:rows=16:cols=64:log=0:fp32"
  kernels = [_kernel(spec, i) for i in range(3)]
  cache = TunedCache(tmp_path / "tuned.json")
  chosen = {}
  for k in kernels[:2]:   # tune two of the three kernels; the third falls back to tinygrad's default
    m = Measurer(k, "CPU", Budget(measurements=3))
    ctx = Context(scheduler(k.ast, CPU), m, None, random.Random(1))
    STRATEGIES["random"]().run(ctx)
    o = finish(ctx, "random", m.elapsed)
    m.close()
    assert o.verified
    cache.put(k.key, "CPU", opts_to_json(o.opts), time_s=o.time_s)
    chosen[k.key] = o.opts
  reloaded = TunedCache(tmp_path / "tuned.json")
  assert reloaded.opts_for("CPU") == chosen
  x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
  def program(): return Tensor(x).softmax(-1)
  before = stats()["tuned"]
  with tuned(tmp_path / "tuned.json"):
    out = program().numpy()
    lin = with_opts(program().schedule_linear(), reloaded.opts_for("CPU"))
  assert stats()["tuned"] - before == 2
  progs = {c.src[0].src[0].arg.applied_opts for c in compile_linear(lin).src if c.src[0].op is Ops.PROGRAM}
  assert set(chosen.values()) <= progs
  ref = np.exp(x - x.max(-1, keepdims=True)); ref /= ref.sum(-1, keepdims=True)
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
  # outside the context manager nothing is injected
  after = stats()["tuned"]
  program().numpy()
  assert stats()["tuned"] == after
  # a TinyJit captures through add_linear, not run_linear: the capture gets the tuned opts too, and replays stay correct
  from tinygrad import TinyJit
  jit, xt = TinyJit(lambda t: t.softmax(-1).realize()), Tensor(x).realize()
  with tuned(tmp_path / "tuned.json"):
    jit(xt); b = stats()["tuned"]; jit(xt); captured = stats()["tuned"] - b
    outs = [jit(xt).numpy() for _ in range(2)]
  assert captured == 2
  for o in outs: np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-6)

def test_corrupt_cache_is_a_clear_error(tmp_path):
  from search.cache import TunedCache, CacheError
  (p := tmp_path / "c.json").write_text("{not json")
  with pytest.raises(CacheError, match="corrupt"): TunedCache(p)

@pytest.mark.parametrize("args,msg", [
  (["--kernel", "nosuch"], "unknown workload 'nosuch'"),
  (["--kernel", "conv2d", "--shape", "1,2"], "--shape for conv2d is N,C,H,W"),
  (["--kernel", "conv2d", "--shape", "1,4,8,8", "--out-channels", "8", "--groups", "3"], "bad shape"),
  (["--kernel", "gemm", "--shape", "0,4,4"], "bad shape for gemm: m=0"),
  (["--kernel", "gemm", "--strategy", "random", "--out", "/proc/nope/x"], "cannot write"),
  (["--kernel", "gemm", "--history", "/nonexistent/h.json"], "no history file"),
  (["--kernel", "gemm:m=32:nope"], "bad parameter 'nope'"),
  (["--kernel", "gemm:m=32:q=3"], "gemm has no parameter 'q'"),
])
def test_search_cli_errors_are_one_line(args, msg):
  r = subprocess.run([sys.executable, "-m", "search.cli", "--device", "CPU", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_search_cli_takes_a_whole_name_as_reports_write_it():
  # a name copied from a report (the unseen benchmark's, the corpus's) is the kernel asked for; flags beside it go over it
  from search.cli import parse_args, variant_from_args
  v = variant_from_args(parse_args(["--kernel", "conv2d:n=2:c=16:h=8:w=8:k=8:ks=3:padding=1:fp16", "--stride", "2"]), "CPU")
  p = dict(v.params)
  assert (v.workload, p["n"], p["c"], p["k"], p["stride"], p["dtype"]) == ("conv2d", 2, 16, 8, 2, "fp16")
  assert variant_from_args(parse_args(["--kernel", "gemm:m=48:k=32:n=16:fp32"]), "CPU").name == variant_from_args(
    parse_args(["--kernel", "gemm", "--shape", "48,32,16", "--dtype", "fp32"]), "CPU").name

def test_search_cli_conv2d_with_the_shipped_cpu_model(tmp_path):
  r = subprocess.run([sys.executable, "-m", "search.cli", "--kernel", "conv2d", "--device", "CPU", "--out", str(tmp_path), "--no-cache",
                      "--history", "--budget", "16"], cwd=ROOT, capture_output=True, text=True, timeout=300)   # what the CLI writes, not a search's quality
  assert r.returncode == 0, r.stderr
  res = json.loads((tmp_path / "result.json").read_text())
  assert res["model"].endswith("cost_model_cpu.txt") and res["strategy"] == "beam" and res["history"].endswith("history_cpu.json")
  (k,) = res["kernels"]
  assert k["verified"] and k["time_us"] <= k["hand_coded_us"] and 0 < k["timed"] and k["compiled"] >= k["timed"]
  replay = json.loads((tmp_path / "kernel0.opts.json").read_text())
  assert replay["opts"] == k["opts"] and (tmp_path / "kernel0.c").read_text().strip()

def test_search_cli_corrupt_model_is_one_line(tmp_path):
  (tmp_path / "m.txt").write_text("garbage"); (tmp_path / "m.json").write_text("{")
  r = subprocess.run([sys.executable, "-m", "search.cli", "--kernel", "gemm", "--device", "CPU", "--model", str(tmp_path / "m.txt")],
                     cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and "corrupt" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_first_batch_from_the_pool_is_the_local_one_and_compiles_once():
  # tune-model computes every kernel's first beam batch in the compile pool (the scorer travels as its model path) and compiles it
  # ahead; measuring it then compiles nothing again
  import pickle
  from models.cost_model import CostModel
  from search.beam import Beam
  from search.first_batches import seed_batch
  k = _kernel("conv2d:n=1:c=8:h=8:w=8:k=8:ks=3:stride=1:padding=1:fp32")
  score = CostModel.load(ROOT / "models" / "cost_model_cpu.txt").scorer()
  assert pickle.loads(pickle.dumps(score)).model.path == score.model.path
  m = Measurer(k, "CPU", Budget(), workers=2)
  local = [o for o, _ in Beam()._seed(Context(scheduler(k.ast, CPU), None, score))]
  rows = m.pool.submit(seed_batch, (m.blob, k.key, score, {"seed_picks": 8}, [], None)).result()
  pooled = [r[0] for r in rows]
  assert pooled == local and len(local) == 9   # hand-coded + the model's 8
  # each with its AST key and its score as scored here: the search replays none of them for Beam._learn
  here = [replay(scheduler(k.ast, CPU), o) for o in pooled]
  assert [r[1] for r in rows] == [c.ast.key for c in here] and np.allclose([r[2] for r in rows], score(here))
  ctx = Context(scheduler(k.ast, CPU), m, score)
  m.prefetch(Beam().prepare(ctx, rows))
  assert set(ctx.state["info"]) == set(pooled)
  compiled = m.compiled
  m.measure(pooled)
  assert m.compiled == compiled and m.timed >= 1 and m.verify(min(m.times, key=m.times.get)) is None
  # a round's children are scored in the pool, parent by parent, as they are here
  from search.context import Expansion
  parents = pooled[1:4]
  pooled_rows = ctx.expand(parents)
  assert pooled_rows.futs is not None and pooled_rows.result() == Expansion(Context(ctx.base, None, score), parents).result()
  # one parent and two workers: its actions are split between them, and the rows are the same, in the same order
  one = ctx.expand(parents[:1])
  assert len(one.jobs) == 2 and one.futs is not None and one.result() == Expansion(Context(ctx.base, None, score), parents[:1]).result()
  # a config's neighbours are one job: here when searched alone, in the pool where other kernels' searches share this thread
  alone = ctx.expand(parents[:1], near=True)
  ctx.share = 2
  shared = ctx.expand(parents[:1], near=True)
  assert alone.futs is None and shared.futs is not None and shared.result() == alone.result() != []
  m.close()

@pytest.mark.slow   # descents of several kernels twice, here and in the pool (~18 s on 2 cores)
def test_kernels_descend_in_the_pool_to_their_local_batches():
  # a workload's kernels descend in the pool, one per worker, to the same first batches as one by one here: all of the measurement
  # budget when it is too small for two rounds (3 here), seed_picks when there is none (tune-model's setup); with history roots too
  from models.cost_model import CostModel
  from search.beam import Beam
  from search.first_batches import Preparing
  score = CostModel.load(ROOT / "models" / "cost_model_cpu.txt").scorer()
  ks = [_kernel("conv2d:n=1:c=8:h=8:w=8:k=8:ks=3:stride=1:padding=1:fp32"), _kernel("gemm:m=32:k=64:n=32:fp32"), _kernel("gemm:m=64:k=64:n=64:fp32")]
  known = [tuple(c.applied_opts) for _, c in children(scheduler(ks[2].ast, CPU))[3:7]]   # four valid configs, as if measured on its nest
  hists = [[], [], known]
  class Spy(Beam):
    def descend(self, ctx):
      calls.append(ctx.base.ast.key)
      return super().descend(ctx)
  for n in (3, None):
    calls = []
    ms = [Measurer(k, "CPU", Budget(measurements=n), workers=2) for k in ks]
    ctxs = [Context(scheduler(k.ast, CPU), m, score, history=h) for k, m, h in zip(ks, ms, hists)]
    # group_branch's and tc_branch's descents run as jobs of their own beside the kernels' (on the CPU no action groups a reduction
    # and none takes tensor cores: they find none)
    prep, done = Preparing(Spy(group_branch=True, tc_branch=True), ctxs), {}
    assert set(prep.bfuts) == {"group", "tc"} and all(set(f) == {0, 1, 2} for f in prep.bfuts.values())
    while prep.left: done.update(prep.wait())
    got = [done[i] for i in range(len(ctxs))]
    local = [Beam(group_branch=True, tc_branch=True).prepare(Context(scheduler(k.ast, CPU), m, score, history=h)) for k, m, h in zip(ks, ms, hists)]
    # every config of a first batch is compiling, or a reordering of one that is (search.commute)
    assert got == local and [len(b) for b in got] == [3 if n else 9]*3 and all(m.compiled >= len(set(map(normal_form, b))) for m, b in zip(ms, got))
    assert calls == [] and all(c.share == 3 for c in ctxs)   # every descent ran in a worker
    for m in ms: m.close()
  # a window of one, by weight: the heaviest descends first, and the next is picked as one finishes, by the weights then (a
  # kernel's default timed meanwhile); closed, nothing it never started is pending
  ms = [Measurer(k, "CPU", Budget(), workers=2) for k in ks]
  ctxs, w, order = [Context(scheduler(k.ast, CPU), m, score) for k, m in zip(ks, ms)], [1.0, 3.0, 2.0], []
  prep = Preparing(Beam(), ctxs, lambda i: (1, w[i]), window=1)
  assert list(prep.futs) == [1]
  w[0] = 5.0
  prep.futs[1].result()   # the next goes in as one ends, without a poll (the caller may be timing a round)
  for _ in range(100):
    if len(prep.futs) == 2: break
    time.sleep(0.05)
  assert list(prep.futs) == [1, 0]
  while prep.left: order += [i for i, _ in prep.wait()]
  assert order == [1, 0, 2]
  prep = Preparing(Beam(), ctxs, lambda i: (1, w[i]), window=1)
  prep.close()
  assert prep.queue == [] and all(i in prep.futs for i in prep.left) and len(prep.left) <= 1
  for m in ms: m.close()

def test_own_picks_compile_before_the_kernels_branches_are_done():
  # a kernel's own descent is done, its branch's (a second descent, queued behind the group's own) is not: its picks compile now,
  # but the last, which a branch's pick takes the place of in a full batch; once the branch is done the kernel is handed out with
  # the merged batch, and an early pick the merged batch lacks is taken back
  from concurrent.futures import Future
  from types import SimpleNamespace
  from search.first_batches import Preparing
  log = []
  m = SimpleNamespace(prefetch=lambda os: log.append(("prefetch", list(os))), drop=lambda o: log.append(("drop", o)), mark=lambda _: None)
  class Merging:   # a merge that drops an early pick (Beam.prepare's history configs can); seed_batch's rows: (opts, key, score, terms)
    def prepare(self, ctx, batch, group=None): return [r[0] for r in batch[:1]] + group[:1] + [r[0] for r in batch[2:]]
  prep = Preparing(Merging(), [SimpleNamespace(measurer=m)])
  own, branch = Future(), Future()
  prep.futs, prep.bfuts = {0: own}, {"group": {0: branch}}
  assert prep.poll() == [] and log == []
  own.set_result([((o,), o.encode(), 0.0, ()) for o in "abc"])
  assert prep.poll() == [] and prep.poll() == [] and log == [("prefetch", [("a",), ("b",)])]   # once
  branch.set_result([("g",)])
  assert prep.poll() == [(0, [("a",), ("g",), ("c",)])] and prep.left == []
  assert log[1:] == [("drop", ("b",)), ("prefetch", [("a",), ("g",), ("c",)])]
  # held (drop-in's kernels too small for a round): its early compiles are taken back, and its batch is not compiled when ready
  log[:] = []
  prep, own, branch = Preparing(Merging(), [SimpleNamespace(measurer=m)]), Future(), Future()
  prep.futs, prep.bfuts = {0: own}, {"group": {0: branch}}
  own.set_result([((o,), o.encode(), 0.0, ()) for o in "abc"])
  prep.poll(); prep.withhold(0); branch.set_result([("g",)])
  assert prep.poll() == [(0, [("a",), ("g",), ("c",)])]
  assert log == [("prefetch", [("a",), ("b",)]), ("drop", ("a",)), ("drop", ("b",))]
  Merging.early_compile, log[:] = False, []   # Beam.early_compile off: nothing compiles before the kernel is handed out
  prep, own, branch = Preparing(Merging(), [SimpleNamespace(measurer=m)]), Future(), Future()
  prep.futs, prep.bfuts = {0: own}, {"group": {0: branch}}
  own.set_result([((o,), o.encode(), 0.0, ()) for o in "abc"])
  assert prep.poll() == [] and log == []

def test_a_held_first_batch_compiles_only_once_the_scheduler_comes_to_its_kernel():
  # drop-in's kernels too small for a round at the defaults' time keep their first batch uncompiled (Preparing.hold); ahead(), which
  # the scheduler calls for the kernels it will search next, compiles it should it come to one after all
  from search.beam import Beam
  from search.first_batches import Preparing
  from search.task_scheduler import SCHEDULED
  from models.cost_model import CostModel
  score = CostModel.load(ROOT / "models" / "cost_model_cpu.txt").scorer()   # portable: the descents run in the pool, as drop-in's do
  ks = [_kernel("gemm:m=32:k=64:n=32:fp32"), _kernel("gemm:m=16:k=32:n=16:fp32")]
  ms = [Measurer(k, "CPU", Budget(), workers=2) for k in ks]
  ctxs = [Context(scheduler(k.ast, CPU), m, score, random.Random(0)) for k, m in zip(ks, ms)]
  before, strat = [m.compiled for m in ms], Beam(**SCHEDULED)   # before: the reference and the hand-coded config, started with each Measurer
  prep, done = Preparing(strat, ctxs), {}
  prep.hold.add(1)
  while prep.left: done.update(prep.wait())
  assert len(done[1]) > 2 and ms[0].compiled > before[0] and ms[1].compiled == before[1]   # kernel 0's batch compiling, kernel 1's held
  strat.ahead(ctxs[1])
  assert ms[1].compiled > before[1] and {normal_form(o) for o in done[1]} <= {normal_form(o) for o in ms[1]._ahead}
  n = ms[1].compiled
  strat.ahead(ctxs[1])   # again: nothing compiles twice
  assert ms[1].compiled == n
  for m in ms: m.close()

def test_a_straggling_compile_is_not_waited_for_and_is_measured_later(monkeypatch):
  # a full UNROLL after TC compiles 10-50x slower than its siblings on the GPU; here one candidate's compile is made slow
  import time as T
  from concurrent.futures import ThreadPoolExecutor
  import search.measure as M
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  base = scheduler(k.ast, CPU)
  from dataset.sampler import children
  a, b, slow = [(x,) for x, _ in children(base)[:3]]
  # compiles run in threads here: signal.alarm (the compile timeout) cannot be set there, and tinygrad's Context is global, so a
  # compile and a timing must not overlap (a lock)
  import threading, types, dataset.compile as C
  monkeypatch.setattr(C, "signal", types.SimpleNamespace(signal=lambda *a: None, alarm=lambda *a: None, SIGALRM=0))
  orig, lock = M.run_kernel_task, threading.Lock()
  def task(args):
    if args[1].parent == slow: T.sleep(3.0)
    with lock: return orig(args)
  monkeypatch.setattr(M, "run_kernel_task", task)
  monkeypatch.setattr(M, "MIN_WAIT_S", 0.3)
  m = Measurer(k, "CPU", Budget())
  m.pool, timer = ThreadPoolExecutor(3), m.bench.time
  def locked_time(*a, **kw):
    with lock: return timer(*a, **kw)
  m.bench.time = locked_time
  ta, tb, ts = m.measure([a, b, slow], cut=True)
  # it returned while the slow compile was still running: not waited for
  assert not m.ready(slow) and math.isnan(ts) and ta < math.inf and tb < math.inf and m.timed == 2
  compiled = m.compiled
  monkeypatch.setattr(M, "CAP_S", 0.3)   # alone in its batch, a straggler is still not waited for past CAP_S
  assert math.isnan(m.measure([slow], cut=True)[0]) and not m.ready(slow)
  assert m.measure([slow])[0] < math.inf and m.timed == 3 and m.compiled == compiled   # collected, not compiled again
  assert m.measure([a, b, slow], cut=True) == [m.times[a], m.times[b], m.times[slow]]
  # compiles queued behind other work (tune-model fills the pool with every kernel's batch) have not started: not stragglers
  m.pool.shutdown(); m.pool = ThreadPoolExecutor(1)
  m.pool.submit(T.sleep, 1.0)
  c, d = [(x,) for x, _ in children(base)[3:5]]
  assert all(t < math.inf for t in m.measure([c, d], cut=True))
  m.pool.shutdown(); m.close()

@pytest.mark.parametrize("pool", [True, False])
def test_interleave_steps_a_kernel_whose_round_is_compiled_before_one_that_would_wait(pool, monkeypatch):
  # ready_first: the main thread times what is compiled rather than wait on the first kernel in turn; without a compile pool
  # nothing compiles meanwhile, so it does not wait for that, and the kernels take their fixed turns
  from types import SimpleNamespace
  import search.strategies as S
  slept = []   # without a pool, or with a kernel ready, it never waits
  monkeypatch.setattr(S, "time", SimpleNamespace(perf_counter=time.perf_counter, sleep=slept.append))
  steps, stopped, left = [], [], {0: 2, 1: 2, 2: 2}
  class Stub:
    ready_first = True
    def ahead(self, ctx): pass
    def ready(self, ctx): return pool and (ctx.i != 0 or {1, 2} <= set(steps))   # 0's round compiles until the others have had one
    def step(self, ctx):
      steps.append(ctx.i); left[ctx.i] -= 1
      return left[ctx.i] > 0
  ctxs = [SimpleNamespace(i=i, measurer=SimpleNamespace(pool=object() if pool else None, has_budget=lambda: True)) for i in range(3)]
  S.interleave(Stub(), ctxs, stopped.append)
  assert sorted(stopped) == [0, 1, 2] and len(steps) == 6 and not slept
  assert steps == ([1, 2, 0, 1, 2, 0] if pool else [0, 1, 2, 0, 1, 2])

def test_beam_is_ready_once_its_batch_has_compiled_or_it_would_stop():
  import concurrent.futures
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40), workers=2)
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(width=1, near_k=0, seed_picks=3)
  assert not b.ready(ctx)   # nothing prepared yet
  batch = b.prepare(ctx)
  m.prefetch(batch)
  for o in batch: m._ahead[o].result()
  assert b.ready(ctx)
  m._ahead[batch[0]] = f = concurrent.futures.Future()   # one of its compiles still running
  assert not b.ready(ctx)
  f.set_result(None)
  assert b.ready(ctx)
  ctx.state.update(batch=None, rounds=ctx.state["max_rounds"])   # no round left: a step would stop at once
  assert b.ready(ctx)
  m._ahead.pop(batch[0]); m.close()

@pytest.mark.slow   # three kernels' interleaved beams, each compiling its big unrolls: most of a minute
def test_a_workloads_kernels_are_searched_together_each_under_its_own_budget():
  # softmax is 3 kernels: search_kernels gives each a round in turn (one is timed while the others compile), so the timed
  # candidates of different kernels interleave; every kernel keeps its own budget and gets a verified answer
  from search.cli import search_kernels
  v = parse_variant("softmax:rows=64:cols=256:log=0:fp32")
  kernels = [Kernel(a.key.hex(), a, f"softmax#{i}", "t", "t") for i, a in enumerate(kernel_asts(*v.build("CPU")))]
  order = []
  found = search_kernels(kernels, "CPU", "beam", Budget(measurements=14), upcast_scorer, 0, 0, lambda m: order.append(m.kernel.key),
                         k=2, seed_picks=4, noise_k=0.0)   # 14 pays for several rounds of 5
  # (noise_k off: on the CPU's noisy timings it may stop a kernel after its first round, leaving nothing to interleave)
  assert len(kernels) == 3 and len(found) == 3
  for k, (o, m) in zip(kernels, found):
    assert m.kernel is k and o.verified and 1 <= m.timed <= 14 + 1   # + hand-coded, if the search did not time it
    m.close()
  first_done = max(i for i, key in enumerate(order) if key == kernels[0].key)
  assert any(key != kernels[0].key for key in order[:first_done]), "kernel 0's search ran to its end before the others started"

@pytest.mark.slow   # ~8 s on 2 cores
def test_kernels_whose_first_batch_is_ready_are_searched_while_another_descends(monkeypatch):
  # interleave admits each kernel as its descent (in a pool worker) is done: a slow descent holds up no other kernel's rounds, and
  # each answer is verified as its own search ends. Kernel 2's descent is handed over only once kernels 0 and 1 are verified: a
  # scheduler that waited on it, or verified only at the end, would never get there (the hand-over gives up after 120 s and the test fails)
  import concurrent.futures, threading
  import search.strategies as strategies
  from models.cost_model import CostModel
  from search.cli import search_kernels
  kernels = [_kernel("gemm:m=32:k=64:n=32:fp32"), _kernel("gemm:m=64:k=32:n=64:fp32"), _kernel("gemm:m=16:k=16:n=16:fp32")]
  events, held, others_done = [], {}, threading.Event()
  def hand_over():
    held["in_time"] = others_done.wait(120)
    held["fut"].set_result(held["real"].result())
  class Held(strategies.Preparing):
    def __init__(self, strat, ctxs):
      super().__init__(strat, ctxs)
      assert 2 in self.futs, "the descents did not go to the pool"
      held["real"], held["ctx"], self.futs[2] = self.futs[2], ctxs[2], concurrent.futures.Future()
      held["fut"] = self.futs[2]
      threading.Thread(target=hand_over, daemon=True).start()
  real_step = strategies.Beam.step
  def step(self, ctx):
    events.append(("step", ctx is held["ctx"]))
    return real_step(self, ctx)
  monkeypatch.setattr(strategies, "Preparing", Held)
  monkeypatch.setattr(strategies.Beam, "step", step)
  score = CostModel.load(ROOT / "models" / "cost_model_cpu.txt").scorer()
  import search.api as api
  real_finish = api.finish
  def finish(c, *a):
    events.append(("verify", c.measurer.kernel.key))
    if all(("verify", k.key) in events for k in kernels[:2]): others_done.set()
    return real_finish(c, *a)
  monkeypatch.setattr(api, "finish", finish)
  found = search_kernels(kernels, "CPU", "beam", Budget(measurements=6), score, 0, 2, lambda m: events.append(("timed", m.kernel.key)),
                         k=2, seed_picks=4)
  assert held["in_time"], "kernels 0 and 1 were not verified while kernel 2 still descended"
  for o, m in found: assert o.verified and m.timed >= 2 and o.search_s == found[0][0].search_s; m.close()
  first_held = events.index(("step", True))
  assert events[:first_held].count(("step", False)) >= 2   # the others' rounds first, then the held kernel's
  assert all(events.index(("verify", k.key)) < first_held for k in kernels[:2]), events
  assert ("verify", kernels[2].key) in events[first_held:]
  from search.first_batches import Preparing
  assert Preparing(strategies.Beam(), []).wait() == []   # nothing to prepare (tune-model with every kernel cached)

def test_history_gives_a_kernel_the_fastest_configs_of_its_loop_nest(tmp_path):
  from dataset.history import History, HistoryError, nest
  from dataset.store import Store
  store = ROOT / "dataset/data/cpu.sqlite"
  h = History.build(store)
  s = Store(store, readonly=True)
  kernels, measured = s.kernels("CPU"), s.measured(h.meta["device"])
  s.close()
  by_nest: dict = {}
  for k in kernels:
    if any(st == "ok" for _, st, _, _ in measured.get(k["key"], [])):
      by_nest.setdefault(nest(scheduler(Kernel.ast_from_blob(k["ast"]), CPU)), []).append(k)
  shared = next(v for v in by_nest.values() if len(v) >= 2)   # kernels of one nest with different ASTs
  fastest = lambda k: min((t, o) for o, st, t, _ in measured[k["key"]] if st == "ok")[1]
  a, b = shared[0], shared[1]
  base = scheduler(Kernel.ast_from_blob(a["ast"]), CPU)
  got = h.candidates(base, a["key"])
  assert got[0] == tuple(opts_from_json(fastest(a)))                                   # its own fastest first
  assert tuple(opts_from_json(fastest(b))) in h.candidates(base, a["key"], n=100)      # then its nest's
  assert all(replay(base, o) is not None for o in got)
  h.save(p := tmp_path / "h.json")
  assert History.load(p, h.meta["arch"]).candidates(base, a["key"]) == got
  with pytest.raises(HistoryError, match="is of"): History.load(p, "sm_90")
  p.write_text(p.read_text().replace('"tinygrad":"0.14.0"', '"tinygrad":"0.13.0"'))
  with pytest.raises(HistoryError, match="tinygrad 0.13.0"): History.load(p)
  p.write_text("{not json")
  with pytest.raises(HistoryError, match="not a history file"): History.load(p)

def test_the_first_batch_starts_from_history_and_keeps_its_size():
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  base = scheduler(k.ast, CPU)
  known = [tuple(c.applied_opts) for _, c in children(base)[3:7]]   # four valid configs, as if measured on its nest
  sizes = []
  for hist in ([], known):
    m = Measurer(k, "CPU", Budget(measurements=40))
    ctx = Context(base, m, upcast_scorer, random.Random(0), history=hist)
    batch = Beam().prepare(ctx)
    sizes.append(len(batch))
    if hist:
      assert batch[0] == m.hand and batch[1:4] == known[:3]
      assert all(len(o) == 2 and o[:1] in known for o in batch[4:])   # the model's picks: one depth below the history's configs
    m.close()
  assert sizes[0] == sizes[1] == Beam().seed_picks + 1

@pytest.mark.slow   # ~16 s on 2 cores
def test_no_next_round_is_expanded_without_budget_for_it():
  # tune-model gives a kernel one round's budget at a time: once it is spent, the search returns without expanding a next round
  # (whose pool jobs would wait behind the compiles), and expands it when a later run() brings more budget
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b, calls = Beam(adaptive=False, seed_picks=3), []   # the adaptive stop depends on run times
  first = b.prepare(ctx)
  m.budget.measurements = len(first)
  orig = b._next
  b._next = lambda c, wait=True: (calls.append(wait), orig(c, wait))[1]
  b.run(ctx)
  assert 0 < m.timed <= len(first) and not calls and not ctx.state["stopped"]
  timed, m.budget.measurements = m.timed, m.timed + 6
  b.run(ctx)
  assert calls and m.timed > timed
  m.close()

@pytest.mark.parametrize("timing", ["cold", "warm", "auto"])
def test_timing_cold_flushes_before_each_run_and_warm_does_not(timing, monkeypatch):
  from dataset.device import L2Flush
  flushes, inner = [], L2Flush.__call__
  monkeypatch.setattr(L2Flush, "__call__", lambda self: (flushes.append(1), inner(self)))
  m = Measurer(_kernel("gemm:m=32:k=64:n=32:fp32"), "CPU", Budget(measurements=2), timing=timing)
  m.measure([m.hand])
  assert m.warm == (timing == "warm")   # auto: warm only where the buffers fit in half the L2, and the CPU has none counted
  assert (len(flushes) > 0) == (timing != "warm")
  m.close()

def test_reorderings_of_commuting_opts_share_one_normal_form():
  from tinygrad.codegen.opt import Opt, OptOps
  U, X, L, G = Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.GROUP, 0, 8)
  forms = {normal_form(o) for o in [(U, X, L), (X, U, L), (U, L, X)]}   # X commutes with U and L: one trace
  assert len(forms) == 1 and sorted(map(str, forms.pop())) == sorted(map(str, (U, X, L)))
  assert normal_form((L, G)) != normal_form((G, L))   # both shape a block's threads: different programs
  assert normal_form((U, L)) != normal_form((L, U)) and normal_form((U, G)) == normal_form((G, U))
  T = Opt(OptOps.THREAD, 0, 2)   # the CPU's threads: with UNROLL, not with UPCAST
  assert normal_form((T, X)) == normal_form((X, T)) and normal_form((T, U)) != normal_form((U, T))

def test_the_reference_is_computed_once_when_verify_asks_for_it_first(monkeypatch):
  # verify() computes the reference itself when no compile wait did: its own wait on the reference's compile must not compute it
  # inside (through _idle) and then again (seconds on a network-size output)
  from dataset.timing import Bench
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  calls, real = [], Bench.set_reference
  monkeypatch.setattr(Bench, "set_reference", lambda self, *a, **kw: calls.append(1) or real(self, *a, **kw))
  m = Measurer(k, "CPU", Budget(), workers=2)
  m._ahead[m.ref_opts].result()   # its compile is in: the next wait's _idle would take it up
  assert m.verify(m.hand) is None and len(calls) == 1 and m.verify(m.hand) is None and len(calls) == 1
  m.close()

def test_a_reordering_of_a_compiled_config_takes_its_program_and_a_failed_twin_stands_for_nothing(monkeypatch):
  import search.measure as measure
  from dataclasses import replace
  from tinygrad.codegen.opt import Opt, OptOps
  k = _kernel("gemm:m=32:k=64:n=32:fp32")
  a = (Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 0, 4))
  b, c = a[::-1], (Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UNROLL, 0, 2))
  m = Measurer(k, "CPU", Budget(), workers=2)
  m.measure([m.hand]); compiled = m.compiled
  ta, tb = m.measure([a, b])
  assert m.compiled == compiled + 1 and ta == tb < math.inf and m.program(b) is m.program(a) and m.twinned == 1
  assert m.verify(b) is None and m.ready(b)
  m.close()
  # the side-by-side re-timing (bench_search.retime) compiles each strategy's pick: two picks that are reorderings of one another
  # are each compiled, none waits on a compile that a twin stood in for (a KeyError that crashed an op of the unseen benchmark)
  m = Measurer(k, "CPU", Budget(), workers=2)
  cs = m._compile([a, b, m.hand])
  assert [c.task.parent for c in cs] == [a, b, m.hand] and all(c.prg is not None for c in cs)
  m.close()
  # in this process: the first order fails to compile, and the second is compiled itself (one of two orders can be invalid)
  real = measure.run_kernel_task
  def failing(args):
    out = real(args)
    return replace(out, prg=None, status="compile_error", error="forced") if args[1].parent == c else out
  monkeypatch.setattr(measure, "run_kernel_task", failing)
  m = Measurer(k, "CPU", Budget())
  tc, td = m.measure([c, c[::-1]])
  assert tc == math.inf and td < math.inf and m.twinned == 0 and m.program(c[::-1]) is not None
  m.close()

def test_a_short_kernel_gets_more_runs(monkeypatch):
  import dataset.timing as timing
  m = Measurer(_kernel("gemm:m=32:k=64:n=32:fp32"), "CPU", Budget())
  m.measure([m.hand])
  for short_s, n in ((1.0, 10), (0.0, 3)):
    monkeypatch.setattr(timing, "SHORT_S", short_s)
    assert len(m.bench.time(m.program(m.hand), short_runs=10)[0]) == n
  m.close()

def test_unknown_timing_is_refused():
  with pytest.raises(AssertionError, match="timing"): Measurer(_kernel("gemm:m=32:k=64:n=32:fp32"), "CPU", Budget(), timing="tepid")

def test_measurers_share_one_cache_flusher():
  # each flusher holds a never-freed buffer of twice the L2 on a GPU: one per kernel of a network would leak gigabytes
  a, b = (Measurer(_kernel(s), "CPU", Budget()) for s in ("gemm:m=32:k=64:n=32:fp32", "softmax:rows=16:cols=64:log=0:fp32"))
  assert a.bench.flush is b.bench.flush
  a.close(); b.close()

def test_a_round_expands_the_next_fastest_when_the_fastest_have_no_children():
  from search.beam import Beam
  class Childless:
    def done(self): return True
    def result(self): return []
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(adaptive=False, width=1, near_k=0, seed_picks=3, speculate=False)   # a speculation would have expanded them already
  b.prepare(ctx); b.step(ctx)   # the first batch, timed
  asked, real = [], ctx.expand
  ctx.expand = lambda ps, near=False, alongside=1: (asked.append(ps), Childless() if len(asked) == 1 else real(ps, near, alongside))[1]
  b._next(ctx)
  # the fastest had none: the next fastest are expanded (each once) until some have children
  assert len(asked) >= 2 and len({tuple(p) for ps in asked for p in ps}) == len(asked) and ctx.state["batch"]
  m.close()

@pytest.fixture
def fixed_times(monkeypatch):
  """Run times a function of the config alone, and no compile cut as a straggler (which moves it to a later round): a search's path
  does not depend on this machine's noise."""
  import hashlib
  import search.measure as SM
  monkeypatch.setattr(SM, "MIN_WAIT_S", 1e9); monkeypatch.setattr(SM, "CAP_S", 1e9)
  monkeypatch.setattr(SM, "STRAGGLE", 1e9)   # Beam.straggle_s replaces MIN_WAIT_S: the deadline is then STRAGGLE x half the batch's time
  real = Measurer._time
  def fixed(self, c):
    real(self, c)
    o = c.task.parent
    if self.times.get(o, math.inf) < math.inf:
      self.times[o] = 1e-3*(1 + int(hashlib.sha256(repr(o).encode()).hexdigest()[:8], 16)/2**32)
      self.best = min(t for t in self.times.values())
  monkeypatch.setattr(Measurer, "_time", fixed)

def test_a_later_round_times_the_fastest_configs_best_scored_neighbours(fixed_times):
  # the kernels the model lost on unseen shapes mostly lost by an amount (UPCAST 4 where BEAM=2 took 2): a round tries the best
  # neighbours of the fastest config, once per config, beside its children
  from search.beam import Beam
  from search.context import _scored
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(adaptive=False, k=2, near_k=2, seed_picks=3, width=1)
  b.prepare(ctx); b.step(ctx)
  fastest = ctx.state["measured"][0][0]
  measured = set(m.times)
  b._next(ctx)
  batch = [o for o, _ in ctx.state["batch"]]
  best_near = [o for _, o, *_ in sorted(_scored(ctx.base, upcast_scorer, ctx.actions, fastest, near=True), key=lambda r: -r[0])
               if o not in measured]
  assert best_near and len(batch) == 4 and best_near[0] in batch[2:]   # 2 children of the one parent, then 2 neighbours
  assert ctx.state["neared"] == {fastest}
  ctx.state["batch"] = None   # the next round, the same config still the fastest: its neighbours are not proposed again
  b._next(ctx)
  assert ctx.state["neared"] == {fastest} and ctx.state["batch"] and not set(best_near) & {o for o, _ in ctx.state["batch"]}
  m.close()

@pytest.mark.slow   # two searches of one kernel (~10 s on 2 cores)
def test_speculation_changes_when_a_round_compiles_not_what_it_measures(fixed_times):
  # the next round's picks are prefetched while this one is timed; with run times a function of the config alone (so that the path
  # does not depend on this machine's noise) and no compile cut as a straggler (which moves it to a later round), the search
  # measures the same configs, and finds the same best, either way
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  runs = {}
  for spec in (False, True):
    m = Measurer(k, "CPU", Budget(measurements=24), workers=2)
    ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
    Beam(adaptive=False, seed_picks=4, speculate=spec).run(ctx)
    runs[spec] = (set(m.times), min(m.times.items(), key=lambda x: x[1]), m.marks.get("speculated", 0), m.compiled)
    m.close()
  assert runs[True][:2] == runs[False][:2] and len(runs[True][0]) > 10
  assert runs[True][2] >= 1 and runs[False][2] == 0   # a round's parents were guessed right at least once

def test_a_later_timing_that_changes_the_next_rounds_parents_starts_another_guess():
  # a late compile is often a fast config: once it is timed, the speculation guesses the parents again and prefetches their picks
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40), workers=2)
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(adaptive=False, width=1, near_k=0, seed_picks=3, speculate=True)
  batch = b.prepare(ctx)[:4]
  st = ctx.state
  st.update(batch=st["batch"][:4], guess=None, guessed=0)
  def timed(o, t):
    m.times[o] = t
    while True:   # until this guess's picks are prefetched
      b._speculate(ctx)
      if st["guess"] is None or st["guess"]["picked"]: return
  timed(batch[0], 2e-3)
  assert st["guess"] is None   # under half the batch timed: no guess
  timed(batch[1], 3e-3)
  first = set(st["spec"])
  assert st["guessed"] == 1 and st["guess"]["beam"] == [batch[0]] and first and all(o in m._ahead for o in first)
  timed(batch[2], 5e-3)   # slower: the parents stay, no new guess
  assert st["guessed"] == 1
  timed(batch[3], 1e-3)   # the fastest yet: its children are guessed and prefetched too
  assert st["guessed"] == 2 and st["guess"]["beam"] == [batch[3]] and first < set(st["spec"])
  m.close()

def test_a_round_that_would_end_the_search_speculates_only_once_it_betters_the_best():
  # a stale later round stops an adaptive search: the next round's picks it guessed compiled for nothing. Its guess waits until a
  # timing of the round has bettered the best before it; the first batch (nothing to better) guesses as before
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40), workers=2)
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  batch = Beam(width=1, near_k=0, seed_picks=3).prepare(ctx)[:4]
  for gate in (True, False):
    b, st = Beam(width=1, near_k=0, seed_picks=3, speculate=True, speculate_gain=gate), ctx.state
    st.update(batch=[(o, None) for o in batch], guess=None, guessed=0, rounds=1, best=2e-3, stale=0, gap=0.0, spec=None)
    m.times.clear(); m.spread.clear()
    def timed(o, t):
      m.times[o] = t
      for _ in range(10000):   # until this guess's picks are prefetched
        b._speculate(ctx)
        if st["guess"] is None or st["guess"]["picked"]: return
    timed(batch[0], 3e-3); timed(batch[1], 2e-3)   # half timed, neither better than the best before the round
    assert (st["guess"] is None) == gate
    timed(batch[2], 1e-3)   # better: the round goes on to another, so its guess starts
    assert st["guess"] is not None
  m.close()

def test_stragglers_compiled_by_the_stop_are_timed_by_the_final_verification():
  # the fastest configs compile slowest: a straggler of the last round that has compiled when the search stops is timed (no wait),
  # one never started is not compiled for it
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=40), workers=2)
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(adaptive=False, width=1, near_k=0, seed_picks=3)
  batch = b.prepare(ctx)
  done = (batch[1], b"")
  never = next(((a,), c.ast.key) for a, c in children(ctx.base) if (a,) not in m._ahead)
  m.prefetch([done[0]])
  m._ahead[done[0]].result()
  ctx.state["late"] = [done, never]
  assert b._stop(ctx) is False and ctx.state["stopped"] and ctx.final_picks == [done[0]]
  out = finish(ctx, "beam", 0.0)
  assert done[0] in m.times and never[0] not in m.times and out.final_timed >= 1
  m.close()

def test_the_first_batch_holds_each_kernel_once():
  # the hand-coded config is often one of the model's picks: in the batch twice, it was measured twice and expanded twice as a parent
  from search.beam import Beam
  base = scheduler(_kernel("gemm:m=32:k=32:n=32:fp32").ast, CPU)
  hand = hand_coded(base)
  toward = lambda ks: np.array([len(s.applied_opts) if tuple(s.applied_opts) == hand[:len(s.applied_opts)] else -1.0 for s in ks], np.float64)
  batch = Beam()._seed(Context(base, None, toward, random.Random(0)))   # a model whose descent climbs to the hand-coded config
  assert len(hand) >= 2 and [o for o, _ in batch].count(hand) == 1 and len({key for _, key in batch}) == len(batch) == Beam.seed_picks + 1

def test_a_measured_tensor_core_config_is_expanded_once():
  # as the first batch times it, a tensor-core config (one action) loses to configs a depth further; it gets one expansion anyway
  from search.beam import Beam
  from search.picks import tensor_cores
  ren = renderer_for("CUDA", "sm_90", compiler=False)
  k = kernel_asts(*parse_variant("gemm:m=64:k=64:n=64:fp16").build("CPU"))[0]
  ctx = Context(scheduler(k, ren), None, upcast_scorer, random.Random(0))
  kids = [((a,), c.ast.key) for a, c in children(ctx.base)]
  tc = next(c for c in kids if tensor_cores(c[0]))
  plain = [c for c in kids if not tensor_cores(c[0])][:7]
  b = Beam(k=2, near_k=0)
  ctx.state.update(batch=None, measured=plain + [tc], expanded=set(), neared=set(), seen={c[1] for c in kids}, late=[], expansion=None,
                   info={}, fix=None, gap=0.0)
  b._next(ctx)
  batch, first = [o for o, _ in ctx.state["batch"]], set(ctx.state["expanded"])
  assert first == {plain[0][0], tc[0], plain[1][0], plain[2][0]}   # the slowest measured, in place of the 4th fastest
  assert len(batch) == 2 and batch[0][:1] == plain[0][0] and batch[1][:1] == tc[0]   # its child second: a round of 2 has it
  ctx.state.update(batch=None, measured=[(o, key) for o, key in ctx.state["measured"] if o != tc[0]] + [(tc[0] + (batch[1][-1],), b"x")])
  b._next(ctx)   # once only: with a tensor-core config expanded, the width fastest not expanded are the parents again
  assert ctx.state["expanded"] - first == {c[0] for c in plain[3:7]}   # not the slower tensor-core child

def rows(seeds:list) -> list:   # search.first_batches.seed_batch's rows of a first batch (its scores play no part here)
  return [(o, key, 0.0, ()) for o, key in seeds]

def test_group_branch_times_the_models_best_grouped_reduction_and_expands_it_once():
  # a model that ranks every grouped reduction low never picks one (BEAM=2's picks grouped on 3 of the 4 worst unseen kernels):
  # with group_branch the first batch still holds the best of a descent from grouped first actions, and a measured one is a parent once
  from search.beam import Beam
  from search.picks import grouped
  k = kernel_asts(*parse_variant("gemm:m=64:k=256:n=64:fp32").build("CPU"))[0]
  score = lambda ks: upcast_scorer(ks) - 100.0*np.array([grouped(tuple(x.applied_opts)) for x in ks])
  ctx = lambda: Context(scheduler(k, renderer_for("CUDA", "sm_90", compiler=False)), None, score, random.Random(0))
  plain, branched = Beam(group_branch=False)._seed(ctx()), Beam(group_branch=True)._seed(ctx())
  assert not any(grouped(o) for o, _ in plain) and len(branched) == len(plain) == Beam.seed_picks + 1
  assert [grouped(o) for o, _ in branched] == [False, True] + [False]*(len(plain) - 2) and branched[0] == plain[0]
  assert len(branched[1][0]) > 1 and branched[2:] == plain[1:-1]   # descended past its first action; the model's last pick made way
  c = ctx()
  kids = [((a,), x.ast.key) for a, x in children(c.base)]
  g, rest = next(x for x in kids if grouped(x[0])), [x for x in kids if not grouped(x[0])][:7]
  assert Beam(group_branch=True).prepare(ctx(), rows(plain), [g])[1] == g[0]   # the candidates it is given, not its own
  # computed apart (search.first_batches runs the grouped descent beside the kernel's) and merged by prepare: the same batch
  apart = Beam(group_branch=True).prepare(ctx(), rows(plain), group_candidates(Beam(group_branch=True), ctx()))
  assert apart == Beam(group_branch=True).prepare(ctx()) == [o for o, _ in branched]
  for branch, second in ((False, rest[1][0]), (True, g[0])):
    c.state.clear(); c.state.update(batch=None, measured=rest + [g], expanded=set(), neared=set(), seen={x[1] for x in kids}, late=[],
                                    expansion=None, info={}, fix=None, gap=0.0)
    assert Beam(k=2, near_k=0, group_branch=branch)._parents(c.state, c.state["measured"])[0][:2] == [rest[0][0], second]

class TwoOpinions:   # a blend's stand-in: scores prefer upcasts, its second opinion (Scorer.pair) prefers locals
  def __call__(self, ks): return upcast_scorer(ks)
  def pair(self, ks):
    return upcast_scorer(ks), np.array([float(sum(o.op.name == "LOCAL" for o in k.applied_opts)) - 0.01*len(k.applied_opts) for k in ks])

def test_second_opinion_times_the_descents_best_configs_by_the_other_opinion_in_the_next_round(monkeypatch):
  # the MLP of the shipped blend ranks BEAM=2's pick of strided and grouped convs first where the blend ranks it past 100: with
  # second_opinion the descent's best configs by that opinion compile beside the first batch, which keeps the model's picks, and
  # join the next round whether compiled or not (their compiles are the slow ones: in the first batch they held its timings)
  from search.beam import Beam
  from search.first_batches import seed_batch
  k = kernel_asts(*parse_variant("gemm:m=64:k=256:n=64:fp32").build("CPU"))[0]
  ctx = lambda m=None: Context(scheduler(k, renderer_for("CUDA", "sm_90", compiler=False)), m, TwoOpinions(), random.Random(0))
  p, c = ctx(), ctx()   # no grouped branch below: it would take the second place before them
  plain, b = Beam(group_branch=False)._seed(p), Beam(group_branch=False, second_opinion=2)
  out = b.prepare(c)
  assert set(p.alt) < set(c.alt)   # the descent also expanded each depth's best by the second opinion
  mine = {key for _, key in plain}   # the model's picks are the same: the extra parents' children never outscore them here
  best = sorted(((y, o, key) for key, (y, o) in c.alt.items() if key not in mine), key=lambda r: -r[0])[:2]
  assert all(y > c.alt[key][0] for y, _, _ in best for _, key in plain[-2:])   # the other opinion prefers them to the model's last picks
  assert c.state["batch"] == plain and out == [o for o, _ in plain] + [o for _, o, _ in best]   # returned last: compiled after the batch
  assert c.state["late"] == [(o, key) for _, o, key in best] and c.state["owed"] == out[-2:]
  # a worker's first batch (tune-model, drop-in; run here, configured as a worker is): the same, its rows flag them
  import dataset.compile as DC
  monkeypatch.setattr(DC, "_W", {"ren": renderer_for("CUDA", "sm_90", compiler=False), "asts": {}, "blobs": {}})
  rows = seed_batch((Kernel.pack(k), k.key, TwoOpinions(), {"group_branch": False, "second_opinion": 2}, [], None))
  assert [r[4] for r in rows] == [False]*len(plain) + [True]*2 and [r[0] for r in rows] == out
  w = ctx(); assert b.prepare(w, rows) == out and w.state["late"] == c.state["late"]
  # the next round: they join it though still compiling, once; a straggler joins only once compiled
  class Pending:   # nothing has compiled; no pool
    workers, pool = 0, None
    def ready(self, o, started=False): return False
    def drop(self, o): pass
  c.measurer = Pending()
  slow = plain[1]
  c.state.update(batch=None, rounds=1, measured=[(o, key) for o, key in plain if o != slow[0]], late=c.state["late"] + [slow])
  b._next(c)
  assert c.state["batch"][:2] == [(o, key) for _, o, key in best] and slow not in c.state["batch"] and c.state["late"] == [slow]
  assert c.state["owed"] == [] and len(c.state["batch"]) > 2   # the round's children after them
  # off, or a scorer with no second opinion (a model that is no blend): nothing beside the batch
  assert Beam(group_branch=False).prepare(ctx()) == [o for o, _ in plain] and len(c.alt) > 100
  one = lambda: Context(scheduler(k, renderer_for("CUDA", "sm_90", compiler=False)), None, upcast_scorer, random.Random(0))
  assert Beam(group_branch=False, second_opinion=2).prepare(one()) == [o for o, _ in Beam(group_branch=False)._seed(one())]

def test_a_blends_second_opinion_is_its_mlp_alone():
  from tinygrad.codegen.opt import Opt, OptOps
  from models.cost_model import CostModel, mask_columns
  from models.features import featurize
  from models.resources import augment
  m = CostModel.load("models/cost_model_sm_90.txt")
  base = scheduler(kernel_asts(*parse_variant("gemm:m=64:k=256:n=64:fp16").build("CPU"))[0], renderer_for("CUDA", "sm_90", compiler=False))
  ks = [replay(base, o) for o in [(), (Opt(OptOps.UPCAST, 0, 4),), (Opt(OptOps.LOCAL, 0, 16),), (Opt(OptOps.UNROLL, 0, 4),)]]
  s, alt = m.score_pair(ks, compile_penalty=True)
  assert np.allclose(s, m.score_schedulers(ks, compile_penalty=True)) and not np.allclose(s, alt)
  X = np.stack([featurize(k, m.props) for k in ks])
  mlp = m.blend.parts(augment(mask_columns(X, m.meta["masked_features"]), m.resource_model))["mlp"]/m.blend.scales[1]
  assert np.allclose(alt, mlp, atol=1e-5) and np.allclose(m.score_pair(ks)[1], mlp, atol=1e-5)   # no compile penalty on it

def test_group_best_times_the_branchs_best_where_a_shallow_pick_groups_already():
  # a descent's depth-1 winner, a bare grouped action, is among its picks; with group_best the branch's best (descended past its
  # first action) is timed anyway, in place of the model's last pick; without it the shallow pick stands in for the family
  from search.beam import Beam
  from search.picks import grouped
  k = kernel_asts(*parse_variant("gemm:m=64:k=256:n=64:fp32").build("CPU"))[0]
  score = lambda ks: upcast_scorer(ks) + 100.0*np.array([grouped(tuple(x.applied_opts)) and len(x.applied_opts) == 1 for x in ks])
  ctx = lambda: Context(scheduler(k, renderer_for("CUDA", "sm_90", compiler=False)), None, score, random.Random(0))
  plain, best = Beam(group_best=False)._seed(ctx()), Beam()._seed(ctx())
  cands = group_candidates(Beam(), ctx())
  assert any(grouped(o) and len(o) == 1 for o, _ in plain) and cands[0] not in plain and len(cands[0][0]) > 1
  assert len(best) == len(plain) and best[0] == plain[0] and best[1] == cands[0] and best[2:] == plain[1:-1]
  # given apart (search.first_batches), the same batch; and nothing changes where a seed is the branch's best already
  assert Beam().prepare(ctx(), rows(plain), cands) == [o for o, _ in best]
  assert Beam().prepare(ctx(), rows(best), cands) == [o for o, _ in best]

def test_tc_branch_times_the_models_best_config_on_another_tensor_core_axis():
  # a 3x3 conv takes tensor cores on two axes (2 and 5) and the model ranks them on little data (BEAM=2's picks of two dilated fp16
  # convs over 1.2x used axis 5, the learned ones 2): with tc_branch the first batch also holds the best of a descent from the other
  from search.beam import Beam
  from tinygrad.codegen.opt import OptOps
  k = kernel_asts(*parse_variant("conv2d:n=1:c=32:h=8:w=8:k=32:ks=3:stride=1:padding=1:dilation=1:groups=1:fp16").build("CPU"))[0]
  axes = lambda o: {x.axis for x in o if x.op is OptOps.TC}
  score = lambda ks: upcast_scorer(ks) + 100.0*np.array([2 in axes(x.applied_opts) for x in ks])   # axis 2 always first
  ctx = lambda: Context(scheduler(k, renderer_for("CUDA", "sm_90", compiler=False)), None, score, random.Random(0))
  plain, branched = Beam(tc_branch=False)._seed(ctx()), Beam(tc_branch=True)._seed(ctx())
  assert {a for o, _ in plain for a in axes(o)} == {2} and len(branched) == len(plain) == Beam.seed_picks + 1
  assert axes(branched[1][0]) == {5} and len(branched[1][0]) > 1   # descended past its first action, after the hand-coded config
  assert branched[0] == plain[0] and branched[2:] == plain[1:-1]   # the model's last pick made way
  # computed apart (search.first_batches runs the branch's descent beside the kernel's) and merged by prepare: the same batch
  cands = tc_candidates(Beam(tc_branch=True), ctx())
  assert axes(cands[0][0]) == {5} and Beam(tc_branch=True).prepare(ctx(), rows(plain), None, cands) == [o for o, _ in branched]
  gemm = kernel_asts(*parse_variant("gemm:m=64:k=64:n=64:fp16").build("CPU"))[0]   # one axis only: nothing to add
  g = lambda b: b._seed(Context(scheduler(gemm, renderer_for("CUDA", "sm_90", compiler=False)), None, upcast_scorer, random.Random(0)))
  assert g(Beam(tc_branch=True)) == g(Beam(tc_branch=False))

def test_a_round_that_betters_the_best_within_the_timing_noise_is_stale():
  # on 20-us kernels the fastest of a round's minima beats the best by chance (a max-reduce "improved" for 5 rounds, 25.1 to 17.2 us,
  # and re-timed at 23.0): with noise_k, a round must better the best by more than the kernel's timing noise to count
  from search.beam import Beam
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  for noise_k, rounds in ((0.0, 4), (1.0, 2)):
    m = Measurer(k, "CPU", Budget(measurements=500))
    ctx, b = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0)), Beam(noise_k=noise_k, max_depth=4)
    def every_round_5pct_faster(opts, cut=False):   # each config's runs 10% apart
      for o in opts: m.times.setdefault(o, 1e-3*0.95**ctx.state["rounds"]); m.spread.setdefault(o, 0.10)
      return [m.times[o] for o in opts]
    m.measure = every_round_5pct_faster
    while b.step(ctx): pass
    assert ctx.state["rounds"] == rounds and ctx.state["stopped"]
    m.close()
  m, o = Measurer(k, "CPU", Budget(measurements=2)), hand_coded(scheduler(k.ast, CPU))
  m.measure([o])   # a real timing keeps its runs' spread
  assert 0 <= m.spread[o] < math.inf and m.times[o] < math.inf
  m.close()

def test_a_scheduled_beam_goes_on_after_a_round_without_a_faster_time():
  # under tune-model's scheduler (search.task_scheduler.SCHEDULED) the scheduler ends a kernel's rounds, not the beam's patience:
  # a Llama block's 58%-share GEMM stopped after one fruitless round at 1.6x BEAM=2's time
  import math
  from search.beam import Beam
  from search.task_scheduler import strategy_params
  k = _kernel("gemm:m=64:k=64:n=64:fp32")
  for params, stops in ((strategy_params("beam", None), False), ({"adaptive": False}, True)):
    m = Measurer(k, "CPU", Budget(measurements=60))
    flat = lambda opts, cut=False: [m.times.setdefault(o, 1e-3) for o in opts]   # every config as fast as the first: nothing improves
    m.measure = flat
    ctx, b = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0)), Beam(**params)
    ctx.round_size = 4
    for _ in range(3): b.step(ctx)
    assert ctx.state["stopped"] is stops and (stops or ctx.state["rounds"] == 3) and not math.isnan(ctx.state["best"])
    m.close()

@pytest.mark.slow   # a whole search for the marks it keeps
def test_the_first_batchs_gap_and_trust_are_kept_beside_the_last_rounds(fixed_times):
  # reports keep what a rule stopping after the first batch could have known: the per-round marks are the last round's
  from search.beam import Beam
  k = _kernel("gemm:m=32:k=32:n=32:fp32")
  m = Measurer(k, "CPU", Budget(measurements=16))
  ctx = Context(scheduler(k.ast, CPU), m, upcast_scorer, random.Random(0))
  b = Beam(seed_picks=3, k=2, near_k=1, patience=2)
  b.prepare(ctx); b.step(ctx)
  first = dict(m.marks)
  assert first["rounds"] == 1 and first["first_timed"] == m.timed and first["first_gap"] == first["gap"]
  while b.step(ctx): pass
  assert m.marks["rounds"] > 1 and m.timed > first["first_timed"]
  assert (m.marks["first_gap"], m.marks["first_trust"], m.marks["first_timed"]) == (first["gap"], first["trust"], first["first_timed"])
  m.close()

def test_first_effort_follows_the_share_and_a_narrow_descent_scores_fewer():
  # first_share (tune-model --first-share, drop-in KERNTUNE_FIRST_SHARE): a kernel of a small share of the model's time gets
  # fewer first picks and a narrower model descent, in proportion; at or above the share, or with it off, the beam's own
  from search.beam import Beam
  from models.cost_model import CostModel
  from search.task_scheduler import FIRST_SHARE, MIN_PER_KERNEL, PER_KERNEL_DEFAULT, first_effort, pooled
  b = Beam()
  assert first_effort(b, 0.01, None) == first_effort(b, None, FIRST_SHARE) == (None, None)
  assert first_effort(b, 0.3, FIRST_SHARE) == first_effort(b, FIRST_SHARE, FIRST_SHARE) == (b.seed_picks, b.descent_width)
  assert first_effort(b, 0.004, FIRST_SHARE) == (MIN_PER_KERNEL, 1)
  assert first_effort(b, FIRST_SHARE/2, FIRST_SHARE) == (b.seed_picks//2, b.descent_width//2)
  # the pooled budget shrinks by what the smaller first batches take off (the default's pool: PER_KERNEL_DEFAULT a kernel)
  ctx = lambda share: Context(None, None, seed_picks=first_effort(b, share, FIRST_SHARE if share is not None else None)[0])
  assert pooled(PER_KERNEL_DEFAULT, b, [ctx(None), ctx(0.3)]) == 2*PER_KERNEL_DEFAULT
  assert pooled(PER_KERNEL_DEFAULT, b, [ctx(0.3), ctx(0.004)]) == 2*PER_KERNEL_DEFAULT - (b.seed_picks - MIN_PER_KERNEL)
  assert pooled(2, b, [ctx(0.004)]) == 2   # never below a budget smaller than the first batch
  k = _kernel("conv2d:n=1:c=8:h=8:w=8:k=8:ks=3:stride=1:padding=1:fp32")
  score = CostModel.load(ROOT / "models" / "cost_model_cpu.txt").scorer()
  wide = Beam().descend(Context(scheduler(k.ast, CPU), None, score))[1]
  narrow = Beam().descend(Context(scheduler(k.ast, CPU), None, score, descent_width=1))[1]
  assert 0 < len(narrow) < len(wide)

def test_the_no_suite_model_never_saw_a_suite_kernel_and_is_the_shipped_recipe():
  # the suite benchmark's model: every suite kernel's rows left out (its AST keys on CUDA, built offline), otherwise trained as the
  # shipped sm_90 model is (same stores, blend, masked columns): a stale recipe made the suite's reruns measure a model not shipped
  bs = script("bench_search")
  ns, sh = (json.loads((ROOT / "models" / f"cost_model_sm_90{n}.json").read_text()) for n in ("_nosuite", ""))
  assert bs.suite_keys("CUDA") <= set(ns["dataset"]["excluded_keys_in_dataset"])
  assert ns["dataset"]["with"] == sh["dataset"]["with"] and ns["dataset"]["shards"] == sh["dataset"]["shards"]
  assert ns["blend"]["weight"] == sh["blend"]["weight"] and ns["masked_features"] == sh["masked_features"]

def test_bench_search_takes_beam_answers_from_an_earlier_run(tmp_path):
  # --beam-from: BEAM's picks and seconds from an earlier run's JSON are timed, checked and re-timed, not searched again; a run on
  # another device, or picks that no longer apply to the op's kernels, are a one-line error before anything runs
  from dataset.device import device_info
  bs = script("bench_search")
  op = "gemm:m=32:k=64:n=32:fp32"
  hand = opts_to_json(hand_coded(scheduler(_kernel(op).ast, CPU)))
  dev = "{} ({})".format(*device_info("CPU")[:2])
  row = {"search_s": 123.0, "compiled": 7, "timed": 5, "failed": 0, "compile_s": 1.0, "time_s": 0.1, "opts": [hand]}
  def run(prior:dict, out:str) -> dict:
    (p := tmp_path / "prior.json").write_text(json.dumps(prior))
    bs.main(["--model", str(ROOT / "models" / "cost_model_cpu.txt"), "--device", "CPU", "--workers", "0", "--op", f"tiny={op}", "--ops", "tiny",
             "--strategies", "hand-coded,beam2", "--rounds", "1", "--no-plot", "--out", str(tmp_path / out), "--beam-from", str(p)])
    return json.loads((tmp_path / out / "search_bench.json").read_text())
  res = run({"device": dev, "date": "2026-11-29", "ops": {"tiny": {"beam2": row}}}, "a")
  b = res["ops"]["tiny"]["beam2"]
  assert b["search_s"] == 123.0 and b["timed"] == 5 and b["opts"] == [hand] and b["verified"] and math.isfinite(b["kernel_us"])
  assert "not searched again" in res["notes"][0]
  with pytest.raises(SystemExit, match="ran on another card, not"): run({"device": "another card", "ops": {}}, "b")
  bad = {**row, "opts": [[["UPCAST", 7, 4]]]}
  with pytest.raises(SystemExit, match="tiny's beam2 picks do not apply"): run({"device": dev, "date": "x", "ops": {"tiny": {"beam2": bad}}}, "c")
