"""Every wait is bounded (issue 33 item 1): a compile that never finishes and a kernel run that never returns are recorded as
timeouts, and the search, the final check and generate-dataset go on. On the CPU device; the hangs are injected."""
import contextlib, ctypes, math, random, signal, threading, time
import pytest
from dataset.corpus import parse_variant, select
from dataset.kernel import Kernel, kernel_asts, scheduler
from dataset.device import renderer_for
from dataset.sampler import children

def hang(*_):   # a compile stuck where its worker's alarm cannot reach it (native code): no alarm is armed for it
  time.sleep(3600)

class StillWaiting(BaseException): pass   # no `except Exception` on the way swallows it

@contextlib.contextmanager
def within(seconds:float):
  """The old code waited for good: fail instead of hanging the test run. A signal from a timer thread (not SIGALRM, which the
  in-process compile's alarm takes over) interrupts the main thread's wait, a native sleep included."""
  def boom(*_): raise StillWaiting(f"still waiting after {seconds} s")
  old = signal.signal(signal.SIGUSR1, boom)
  t = threading.Timer(seconds, signal.pthread_kill, (threading.main_thread().ident, signal.SIGUSR1))
  t.start()
  try: yield
  finally: t.cancel(); signal.signal(signal.SIGUSR1, old)

def _kernel(spec:str="gemm:m=32:k=64:n=32:fp32") -> Kernel:
  ast = kernel_asts(*parse_variant(spec).build("CPU"))[0]
  return Kernel(ast.key.hex(), ast, spec, "t", "t")

def _alive(pid:int) -> bool:
  try: return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError: return False

def test_a_hung_compile_is_cut_off_and_the_search_goes_on(monkeypatch):
  import search.measure as M
  from search.context import Context
  from search.strategies import STRATEGIES, finish
  monkeypatch.setattr(M, "HUNG_S", 4.0)
  monkeypatch.setattr(M, "POLL_S", 0.2)
  k = _kernel()
  m = M.Measurer(k, "CPU", M.Budget(), workers=2)
  base = scheduler(k.ast, renderer_for("CPU"))
  stuck, ok = [(a,) for a, _ in children(base)[:2]]
  old = m.pool
  for f in [old.submit(time.sleep, 0.5) for _ in range(2)]: f.result()   # both workers started: a start (imports) is no hang
  m._ahead[stuck], m.compiled = m.pool.submit(hang), m.compiled + 1   # its compile never returns
  procs = list(old._processes)
  st = time.perf_counter()
  with within(60): ts = m.measure([stuck, ok])   # not cut: the old code waited for it forever
  assert ts[0] == math.inf and "did not finish" in m.errors[stuck] and ts[1] < math.inf
  assert time.perf_counter() - st < 30
  # its worker is stuck for good: the pool is replaced, its workers killed (a hung one would also hold up this process's exit)
  assert m.pool is not old and M.shared_pool("CPU", 2) is m.pool
  deadline = time.time() + 10
  while any(_alive(p) for p in procs) and time.time() < deadline: time.sleep(0.1)
  assert not any(_alive(p) for p in procs)
  # the verification's reference compile hangs too: it is cut off and the plain unoptimized kernel is the reference
  m._ahead[m.ref_opts] = m.pool.submit(hang)
  ctx = Context(base, m, None, random.Random(0))
  m.budget.measurements = m.timed + 3
  with within(90):
    STRATEGIES["random"]().run(ctx)
    o = finish(ctx, "random", m.elapsed)
  assert o.verified and o.time_s < math.inf and o.opts != stuck
  m.close()

def test_a_hung_run_is_recorded_as_timeout_and_the_search_goes_on(monkeypatch):
  from search.measure import Budget, Measurer
  from search.context import Context
  from search.strategies import finish
  k = _kernel()
  m = Measurer(k, "CPU", Budget(), workers=0)
  m.bench.limit_s = 1.0
  base = scheduler(k.ast, renderer_for("CPU"))
  stuck, ok = [(a,) for a, _ in children(base)[:2]]
  bad = m._compile([stuck])[0].prg.key
  timer, sleep = m.bench._timer, ctypes.CDLL(None).sleep
  def fake(prg, bufs=None):
    if prg.key != bad: return timer(prg, bufs)
    def run():   # the run never returns, as a C kernel in an endless loop (a native call: no signal ends it, no thread kill)
      while True: yield sleep(3600)
    return run()
  m.bench._timer = fake
  first = m.bench.bufs
  with within(30): ts = m.measure([stuck, ok])
  assert ts[0] == math.inf and m.errors[stuck].startswith("timeout") and ts[1] < math.inf and m.timed == 2
  assert len(m.bench.hung) == 1 and m.bench.hung[0] is first and m.bench.bufs is not first and m.bench.wedged is None   # the CPU goes on, with new buffers
  ctx = Context(base, m, None, random.Random(0))
  with within(60): o = finish(ctx, "random", m.elapsed)
  assert o.verified and o.opts != stuck   # the reference on the new buffers: the same inputs
  m.close()

def test_a_hung_run_wedges_a_gpu(monkeypatch):
  # on a GPU every later operation waits behind a kernel that never ends: nothing more runs, and everything is answered at once
  import dataset.timing as T
  from dataset.timing import Bench, RunTimeout
  from dataset.device import L2Flush
  monkeypatch.setattr(T, "WEDGED", {})
  k = _kernel()
  b = Bench(k.ast, "CPU", L2Flush("CPU"), limit_s=0.5)
  b.device = "CUDA"   # as on a GPU: only the watchdog's reaction differs
  never = iter(lambda: time.sleep(3600), None)
  with within(10), pytest.raises(RunTimeout): b._run(never)
  assert b.wedged is not None and b.bufs is b.hung[0]
  with within(2), pytest.raises(RunTimeout): b.time(None)
  b.release()   # frees nothing: the hung kernel still uses the buffers
  # the next kernel's Bench on that device (tune-model goes on) allocates nothing, which would block behind the hung kernel, and
  # refuses at once; another device is unaffected
  later = Bench(k.ast, "CUDA", L2Flush("CPU"), limit_s=0.5)
  assert later.wedged == b.wedged and later.bufs == []
  with within(2), pytest.raises(RunTimeout): later.time(None)
  assert Bench(k.ast, "CPU", L2Flush("CPU")).wedged is None

@pytest.mark.slow   # waits out a 15 s hang limit (a hung search compile and a hung retime compile are cut off in the default run)
def test_generate_counts_a_hung_compile_worker(tmp_path, monkeypatch):
  import dataset.generate as G
  from dataset.store import Store
  monkeypatch.setattr(G, "hang_limit", lambda t: 15.0)   # past the workers' start (imports) and a compile or two
  store = Store(tmp_path / "h.sqlite")
  variants = select("softmax:rows=16:cols=64:log=0:fp32", "CPU")
  g = G.Generator(store, variants, "CPU", samples=4, workers=2, progress=False)
  submit, hung = g._submit, []
  def stuck(task):   # the kernel's unoptimized config: its compile never returns
    if task.kind == "fixed" and task.parent == () and not hung: hung.append(task); return g.pool.submit(hang)
    return submit(task)
  monkeypatch.setattr(g, "_submit", stuck)
  with within(120): summary = g.run()   # the old loop kept beating, waiting on the hung worker for good
  assert hung and summary["hung_compiles"] == 1 and summary["pool_restarts"] == 1
  rows = store.db.execute("SELECT opts, error FROM measurements WHERE status='timeout' AND error LIKE 'compile hung%'").fetchall()
  assert rows == [("[]", "compile hung: no result in 15 s")]   # that config alone: the others compiled again in the new pool
  store.close()

def compile_or_hang(task):   # in a spawned compile worker: the config named by KERNTUNE_TEST_HANG never finishes compiling
  import json, os
  from dataset.compile import run_task
  from dataset.kernel import opts_to_json
  if json.dumps(opts_to_json(task.parent)) == os.environ.get("KERNTUNE_TEST_HANG"): hang()
  return run_task(task)

def test_retime_cuts_off_a_hung_compile(monkeypatch, tmp_path):
  """retime's compiles run ahead in a pool: one that hangs is a timeout, its pool is replaced, and every other config is timed."""
  import base64, json
  import dataset.compile as C
  from dataset import retime
  from dataset.device import device_info
  from dataset.kernel import opts_to_json
  monkeypatch.setattr(retime, "COMPILE_S", 1)
  monkeypatch.setattr(C, "HANG_GRACE_S", 2.0)
  monkeypatch.setattr(C, "run_task", compile_or_hang)
  ks = [_kernel(), _kernel("gemm:m=16:k=32:n=16:fp32")]
  configs = [[(a,) for a, _ in children(scheduler(k.ast, renderer_for("CPU")))[:2]] for k in ks]
  monkeypatch.setenv("KERNTUNE_TEST_HANG", json.dumps(opts_to_json(configs[0][0])))
  sel = {"device": device_info("CPU")[0], "kernels": [{"key": k.key, "name": k.name, "ast": base64.b64encode(k.blob()).decode(),
         "configs": [{"opts": opts_to_json(o)} for o in cs]} for k, cs in zip(ks, configs)]}
  with within(60): res = retime.run(sel, tmp_path / "r.json", device="CPU", workers=2, log=lambda s: None)
  rows = [c for k in sel["kernels"] for c in res["kernels"][k["key"]]["configs"]]
  assert rows[0]["new"] is None and "compile hung" in rows[0]["error"]
  assert all(r["new"] and len(r["new"]) == 3 for r in rows[1:])
