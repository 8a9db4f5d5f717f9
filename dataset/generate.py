"""generate-dataset: measure opt sequences of corpus kernels on a device, into a crash-safe, resumable store.

The process that owns the device runs under a supervisor: a config that crashes it (a segfaulting CPU kernel, a CUDA error that
poisons the context) or hangs it (no heartbeat for --hang-timeout) is killed, recorded from its pending row, and the run resumes."""
from __future__ import annotations
import argparse, json, math, os, random, subprocess, sys, time
from dataclasses import replace
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable
from tqdm import tqdm
from dataset.argtypes import at_least, count, natural, positive
from dataset.corpus import ShapeError, Variant, extract_into, list_corpus, select
from dataset.kernel import TINYGRAD_VERSION, Kernel, opts_to_json, opts_from_json
from dataset.plan import KernelPlan, MIX, MODEL_MIX
from dataset.compile import ONE_TRY, Task, Compiled, Overdue, die_with_parent, hang_limit, kill_pool, make_pool
from dataset.paths import cannot_write
from dataset.store import Store, StoreError, writer_lock
from dataset.device import DeviceError, default_device, device_info, open_device, renderer_for, L2Flush
from dataset.timing import Bench, RunTimeout

EXIT_RESTART = 3   # the child asks to be restarted (device context unusable)
# --model's loader: (model path, arch, device props) -> a scorer (Schedulers in, scores out, higher = predicted faster) that pickles
# to the compile workers; ValueError with a one-line message for a model it cannot use. models.generate passes it in: dataset
# imports nothing from models
LoadScorer = Callable[[str, str, dict], Callable]

class Generator:
  def __init__(self, store:Store, variants:list[Variant], device:str, samples:int, seed:int=0, workers:int|None=None,
               deadline:float=math.inf, check_frac:float=0.1, early_factor:float=4.0, cap_s:float=1.0, compile_timeout:int=20,
               heartbeat:Path|None=None, progress:bool=True, model:str|None=None, mix:dict[str, float]|None=None,
               only:set[str]|None=None, tinygrad_beam:int=0, load_scorer:LoadScorer|None=None):
    self.store, self.device, self.samples, self.deadline, self.heartbeat = store, device, samples, deadline, heartbeat
    self.check_frac, self.early_factor, self.cap_s, self.progress = check_frac, early_factor, cap_s, progress
    self.rng = random.Random(seed)
    self.workers = workers or max(1, (os.cpu_count() or 2) - 1)
    self.compile_timeout = compile_timeout
    self.tg_version = TINYGRAD_VERSION
    open_device(device)
    self.dev_name, self.arch, props = device_info(device)
    store.add_device(self.dev_name, self.arch, props)
    self.score = None
    if model is not None:   # the compile workers score with it (the scorer pickles as the model's path; each loads it once)
      if load_scorer is None: raise ValueError("--model needs a loader for the cost model (models.generate)")
      self.score = load_scorer(model, self.arch, props)
    self.variants, self.mix, self.only = variants, mix or (MODEL_MIX if self.score is not None else MIX), only
    self.tinygrad_beam = tinygrad_beam
    self.stats = {"ok": 0, "failed": 0, "duplicates": 0, "empty": 0, "pool_restarts": 0}
    self.phase = {k: 0.0 for k in ("wait", "bench", "time", "check")}  # main-process seconds: wait = compile-bound

  def beat(self):
    if self.heartbeat is not None: self.heartbeat.touch()

  def run(self) -> dict:
    extract_into(self.store, self.variants, self.device, self.progress, self.beat, self.workers)
    kernels = self.store.kernels(self.device, [v.name for v in self.variants])
    if self.only is not None:   # --only-kernels: these of the variants' kernels, by name
      if missing := self.only - {k["name"] for k in kernels}: raise ShapeError(f"--only-kernels: no such kernel in --kernels: {sorted(missing)}")
      kernels = [k for k in kernels if k["name"] in self.only]
    measured = self.store.measured(self.dev_name)
    plans = {}
    for k in kernels:
      p = plans[k["key"]] = KernelPlan(k["key"], self.samples, random.Random(self.rng.getrandbits(32)),
                                       mix=self.mix)
      p.load([(opts_from_json(o), s, t, src) for o, s, t, src in measured.get(k["key"], [])])
    self.retry = {}
    for key, opts, source in self.store.recover_pending(self.dev_name):
      if key in plans:
        o = opts_from_json(opts)
        plans[key].seen.discard(o); plans[key].queue.insert(0, Task(key, "fixed", o, seed=0)); self.retry[(key, o)] = source
    order = [k["key"] for k in kernels]
    self.rng.shuffle(order)  # families interleave, so a budget-limited run still covers the whole corpus
    # --tinygrad-beam: a kernel without BEAM's pick runs BEAM as it becomes active, one at a time, each after the last one's pick
    # is measured (a deadline then loses none; one BEAM may run past it); the unmeasured prefixes of a stopped run's picks go first
    picks = self.store.picks(self.dev_name, "tinygrad-beam") if self.tinygrad_beam else {}
    self.unseeded = {k["key"] for k in kernels if self.tinygrad_beam and k["key"] not in picks}
    for key, o in picks.items():
      if key in plans: self._queue_pick(plans[key], opts_from_json(o))
    order = [k for k in order if not plans[k].finished() or k in self.unseeded]
    todo = sum(max(0, plans[k].target - plans[k].done) for k in order)
    if not order: return self._summary(0.0)
    self.pool, self.kernels = make_pool(self.workers, renderer_for(self.device), kernels, self.compile_timeout), kernels
    overdue = Overdue(hang_limit(self.compile_timeout))   # the loop goes on beating while a worker hangs: hung compiles count here
    self.flush, self.benches, self.backlog = L2Flush(self.device), {}, {}
    futures: dict = {}
    active: list[str] = []
    max_active, max_inflight = max(4, self.workers), 2*self.workers
    st = last_log = time.perf_counter()
    bar = tqdm(total=todo, desc=f"measuring on {self.device}", unit="cfg", disable=not self.progress, smoothing=0.05)
    try:
      while True:
        self.beat()
        if time.time() > self.deadline: break
        while len(active) < max_active and order:
          # the next BEAM waits until the last one's pick is measured: the loop times nothing while BEAM runs
          if order[0] in self.unseeded and self._beam_pending(futures, [plans[k] for k in active]): break
          if not (p := plans[order.pop(0)]).finished() or p.key in self.unseeded:
            active.append(p.key)
            if p.done and () in p.seen: p.queue.insert(0, Task(p.key, "fixed", (), seed=0))  # resumed: rebuild the reference
            if p.key in self.unseeded: self._seed_tinygrad_beam(p); break
        # keep the pool busy: round-robin over active kernels
        stalled = 0
        while len(futures) < max_inflight and active and stalled < len(active):
          key = active[len(futures) % len(active)] if stalled == 0 else active[(len(futures)+stalled) % len(active)]
          if (task := plans[key].next_task()) is None: stalled += 1; continue
          plans[key].inflight += 1
          futures[self._submit(task)] = task
        if not futures and not any(self.backlog.values()):
          if not order and all(plans[k].inflight == 0 for k in active): break
        t0 = time.perf_counter()
        done, _ = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED) if futures else (set(), None)
        self.phase["wait"] += time.perf_counter() - t0
        for f in done:
          task = futures.pop(f)
          plans[task.key].inflight -= 1
          try: c = f.result()
          except BrokenProcessPool:
            self._restart_pool(futures, plans); break
          before = plans[task.key].done
          self._handle(plans[task.key], c)
          bar.update(plans[task.key].done - before)
          bar.set_postfix(ok=self.stats["ok"], failed=self.stats["failed"], ok_per_s=f"{self.stats['ok']/(time.perf_counter()-st):.1f}")
        if hung := overdue(futures): self._hung(hung, futures, plans)
        if not self.progress and time.perf_counter() - last_log > 30:
          last_log = time.perf_counter()
          print(json.dumps({"t": round(last_log-st), **self.stats, "ok_per_s": round(self.stats["ok"]/(last_log-st), 2),
                            "active": len(active), "left": len(order), **{k: round(v, 1) for k, v in self.phase.items()}}), flush=True)
        for key in [k for k in active if plans[k].finished() and plans[k].inflight == 0 and not self.backlog.get(k)]:
          active.remove(key)
          if (b := self.benches.pop(key, None)) is not None: b.release()
    finally:
      bar.close()
      kill_pool(self.pool)
      if self.tinygrad_beam:
        from tinygrad.engine.worker import terminate_worker_pool
        terminate_worker_pool()   # BEAM's compile pool
    return self._summary(time.perf_counter() - st)

  def _seed_tinygrad_beam(self, p:KernelPlan):
    """Run tinygrad's BEAM on the kernel, keep its pick in the store and queue it with every prefix: the trajectory into BEAM's
    region, which the store's own climbs may never reach (dataset.tinygrad_beam)."""
    from dataset.kernel import scheduler
    from dataset.tinygrad_beam import tinygrad_beam
    self.unseeded.discard(p.key)
    row, st = next(k for k in self.kernels if k["key"] == p.key), time.perf_counter()
    try: opts = tinygrad_beam(scheduler(Kernel_ast(row), renderer_for(self.device)), self.device, self.tinygrad_beam, on_timed=self.beat)
    except Exception as e:   # a BEAM that fails is this kernel's loss, not the run's
      print(f"tinygrad-beam: {row['name']}: {type(e).__name__}: {e}", file=sys.stderr); return
    secs = time.perf_counter() - st
    self.store.add_pick(p.key, self.dev_name, "tinygrad-beam", opts_to_json(opts), secs)
    self._queue_pick(p, opts)
    self.stats["tinygrad_beam_s"] = round(self.stats.get("tinygrad_beam_s", 0.0) + secs, 1)
    if not self.progress: print(json.dumps({"tinygrad_beam": row["name"], "opts": opts_to_json(opts), "s": round(secs, 1)}), flush=True)

  def _beam_pending(self, futures:dict, active:list[KernelPlan]) -> bool:
    """A BEAM pick's config is queued, compiling, or compiled and waiting for its kernel's reference."""
    tasks = [*futures.values(), *(t for p in active for t in p.queue), *(c.task for cs in self.backlog.values() for c in cs)]
    return any(t.kind == "tinygrad-beam" for t in tasks)

  @staticmethod
  def _queue_pick(p:KernelPlan, opts:tuple):
    p.queue += [Task(p.key, "tinygrad-beam", opts[:i], seed=i) for i in range(1, len(opts)+1) if opts[:i] not in p.seen]

  def _summary(self, secs:float) -> dict:
    return {**self.stats, **{f"main_{k}_s": round(v, 1) for k, v in self.phase.items()}, "seconds": round(secs, 1), "ok_per_s": round(self.stats["ok"]/secs, 2) if secs else 0.0,
            "device": self.dev_name, "arch": self.arch, "workers": self.workers}

  def _submit(self, task:Task):
    from dataset.compile import run_task
    return self.pool.submit(run_task, replace(task, score=self.score) if task.kind == "model" else task)

  def _restart_pool(self, futures:dict, plans:dict):
    """A worker died (a compiler crash): every task in flight is lost; requeue the fixed ones, start a new pool."""
    self.stats["pool_restarts"] += 1
    for t in futures.values():
      plans[t.key].inflight -= 1
      if t.kind in ONE_TRY and self.stats["pool_restarts"] < 5: plans[t.key].queue.insert(0, t)
    futures.clear()
    kill_pool(self.pool)   # a hung worker is freed by nothing else
    self.pool = make_pool(self.workers, renderer_for(self.device), self.kernels, self.compile_timeout)

  def _hung(self, hung:list, futures:dict, plans:dict):
    """Compiles hung past their alarm (native code): each is recorded as a timeout where its config is known (a given one; a
    proposal's is made in the worker), and the pool, whose stuck workers nothing else frees, is restarted."""
    for f in hung:
      task = futures.pop(f)
      plans[task.key].inflight -= 1
      self.stats["hung_compiles"] = self.stats.get("hung_compiles", 0) + 1
      if task.kind in ("fixed", "tinygrad-beam"):
        self._handle(plans[task.key], Compiled(task, task.parent, "timeout", error=f"compile hung: no result in {hang_limit(self.compile_timeout):g} s"))
      else: plans[task.key].on_empty(task)
    self._restart_pool(futures, plans)

  def _bench(self, key:str) -> Bench:
    if key not in self.benches:
      ast = next(Kernel_ast(k) for k in self.kernels if k["key"] == key)
      self.benches[key] = Bench(ast, self.device, self.flush, seed=self.rng.getrandbits(32))
    return self.benches[key]

  def _handle(self, p:KernelPlan, c:Compiled):
    if c.opts is None:
      p.on_empty(c.task); self.stats["duplicates" if c.ast_key else "empty"] += 1; return
    given = c.task.kind in ONE_TRY   # a row even where it builds a measured config's code: BEAM's pick often reorders hand-coded
    if c.ast_key in p.asts and not given: p.misses += 1; self.stats["duplicates"] += 1; return
    t0 = time.perf_counter()
    b = self._bench(p.key)
    self.phase["bench"] += time.perf_counter() - t0
    if c.opts == () and b.ref is None:
      # the unoptimized kernel is the correctness reference: set it before anything of this kernel is checked
      b.ref = {}
      if c.status == "ok":
        try: b.set_reference(c.prg)
        except Exception as e: print(f"\nreference run failed for {p.key[:12]}: {e}", file=sys.stderr)
        if (est := c.prg.src[0].arg.estimates) is not None:
          self.store.db.execute("UPDATE kernels SET flops=?, bytes=? WHERE key=?", (_num(est.ops), _num(est.mem), p.key))
      for cc in self.backlog.pop(p.key, []): self._handle(p, cc)
    elif c.status == "ok" and b.ref is None:
      self.backlog.setdefault(p.key, []).append(c); return
    if c.opts in p.seen and (p.key, c.opts) not in self.retry: p.misses += 1; self.stats["duplicates"] += 1; return
    if c.status == "ok" and c.lib_hash in p.libs and not given: p.misses += 1; self.stats["duplicates"] += 1; return
    p.misses = 0
    p.seen.add(c.opts)
    if c.ast_key: p.asts.add(c.ast_key)
    if c.task.kind == "hand": p.on_hand(c.opts)
    source = self.retry.pop((p.key, c.opts), None) or c.task.kind
    meta = dict(kernel=p.key, opts=opts_to_json(c.opts), device=self.dev_name, arch=self.arch, tinygrad=self.tg_version, source=source)
    if c.status != "ok":
      if (rid := self.store.retry(p.key, meta["opts"], self.dev_name)) is not None: self.store.finish(rid, c.status, compile_s=c.compile_s, error=c.error)
      else: self.store.record(**meta, status=c.status, compile_s=c.compile_s, error=c.error)
      p.done += 1; self.stats["failed"] += 1; return
    p.libs.add(c.lib_hash)
    rid = self.store.retry(p.key, meta["opts"], self.dev_name) or self.store.begin(**meta)
    if rid is None: return
    try:
      t0 = time.perf_counter()
      times, early = b.time(c.prg, early_stop=min(self.early_factor*p.best, self.cap_s))
      t1 = time.perf_counter()
      self.phase["time"] += t1 - t0
      t = min(times)
      checked, err = None, None
      if c.opts == (): checked = bool(b.ref)
      elif b.ref and (t < p.best or p.rng.random() < self.check_frac):
        err = b.check(c.prg); checked = err is None
      self.phase["check"] += time.perf_counter() - t1
    except Exception as e:   # a run that hangs is a timeout: on the CPU the Bench goes on with new buffers (timing.Bench)
      self.store.finish(rid, "timeout" if isinstance(e, RunTimeout) else "runtime_error", compile_s=c.compile_s, error=f"{type(e).__name__}: {e}")
      p.done += 1; self.stats["failed"] += 1
      if self.device != "CPU": sys.exit(EXIT_RESTART)  # a device error can leave the context unusable: restart clean
      return
    status = "wrong" if err is not None else "ok"
    self.store.finish(rid, status, t, times, early, c.compile_s, checked, err)
    p.done += 1
    if status == "ok": p.on_ok(t, c.opts, c.task.kind)
    self.stats["ok" if status == "ok" else "failed"] += 1

def Kernel_ast(row:dict): return Kernel.ast_from_blob(row["ast"])

def _num(x) -> float|None:
  try: return float(x)
  except (TypeError, ValueError): return None

# *** command line ***

def parse_mix(s:str) -> dict[str, float]:
  try: mix = {k: float(w) for k, w in (kv.split("=") for kv in s.split(","))}
  except ValueError: raise argparse.ArgumentTypeError(f"--mix {s!r}: expected KIND=WEIGHT,... (e.g. expand=0.5,mutate=0.5)") from None
  if bad := set(mix) - {"random", "expand", "beam", "mutate", "model"}: raise argparse.ArgumentTypeError(f"--mix: unknown kinds {sorted(bad)}")
  if not any(w > 0 for w in mix.values()) or any(w < 0 for w in mix.values()): raise argparse.ArgumentTypeError("--mix: weights must be >= 0, one > 0")
  return mix

def parse_args(argv=None) -> argparse.Namespace:
  ap = argparse.ArgumentParser("generate-dataset", description=__doc__.split("\n")[0])
  ap.add_argument("--device", choices=["CUDA", "CPU"], default=None, help="default: CUDA if present, else CPU")
  ap.add_argument("--kernels", default="default", help="comma list of variant names, workloads, families, tiers: 'default' (the "
                  "fixed grid: 'grid' on a GPU, 'small' on the CPU), 'networks' (every network, forward and training step), 'sampled' or "
                  "'sampled:N:SEED' (seeded single-op shapes), 'all' (every full-size variant)")
  ap.add_argument("--list", action="store_true", help="list the corpus (or the --kernels given) by group, family and network, with counts, and exit")
  ap.add_argument("--count-kernels", action="store_true", help="with --list: also each row's distinct kernels (scheduled, nothing runs; slow for the whole corpus)")
  ap.add_argument("--extract-only", action="store_true", help="only extract the selected kernels into --out (needs no device)")
  ap.add_argument("--samples-per-kernel", type=natural, default=100)
  ap.add_argument("--time-budget", type=positive, default=None, help="seconds; stop cleanly when spent (resumable)")
  ap.add_argument("--out", default=None, help="SQLite store (default: out/<device>.sqlite)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--workers", type=count, default=None, help="compile processes (default: cores - 1)")
  ap.add_argument("--check-frac", type=at_least(0.0, float), default=0.1, help="share of configs checked against the unoptimized kernel "
                  "(every new best is checked regardless)")
  ap.add_argument("--model", help="a cost model (models/cost_model_*.txt) that proposes half the configs: its favourite unmeasured "
                  "children of each kernel's best measured ones (active learning: its mistakes become training data)")
  ap.add_argument("--mix", type=parse_mix, default=None, metavar="KIND=W,...", help="proposal kinds and weights once a kernel has "
                  f"measured configs (default {','.join(f'{k}={v}' for k, v in MIX.items())}; with --model "
                  f"{','.join(f'{k}={v}' for k, v in MODEL_MIX.items())}); e.g. expand=0.5,mutate=0.5: a measured climb from the best; "
                  "beam=1: a measured climb from the root, BEAM-style (dataset.plan)")
  ap.add_argument("--tinygrad-beam", type=count, default=0, metavar="N", help="first run tinygrad's BEAM=N on each kernel, once (the "
                  "store keeps its pick: a resumed run measures what is left of it) and measure its pick and every prefix, as source 'tinygrad-beam'")
  ap.add_argument("--only-kernels", default=None, metavar="NAME,...", help="measure only these of the --kernels' kernels (names as "
                  "dataset-stats lists them, e.g. resnet50:batch=32:fp32#26)")
  ap.add_argument("--hang-timeout", type=positive, default=120.0, help="seconds without progress before the run is restarted")
  ap.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS", help="run as a Ray job (pip install kerntune[ray]): "
                  "one worker per GPU, each with its compile processes, on a Ray cluster at ADDRESS ('auto', host:port, ray://...) or, "
                  "without one, a local cluster of this host's GPUs; the workers' rows are merged into --out as they come (dataset.ray_generate)")
  ap.add_argument("--ray-workers", type=natural, default=None, metavar="N", help="--ray's workers (default: one per GPU of the cluster; "
                  "on the CPU one per 2 cores); --workers is then each one's compile processes (default: its share of its host's cores, less one)")
  ap.add_argument("--no-progress", action="store_true")
  ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
  ap.add_argument("--_deadline", type=float, default=math.inf, help=argparse.SUPPRESS)
  a = ap.parse_args(argv)
  if a.ray_workers is not None and a.ray is None: ap.error("--ray-workers takes --ray")
  return a

def fail(msg:str) -> int:
  print(f"generate-dataset: error: {msg}", file=sys.stderr)
  return 2

def main(argv=None, load_scorer:LoadScorer|None=None, entry:str="dataset.generate") -> int:
  """entry: the module whose main the supervised child runs (models.generate passes itself, with load_scorer)."""
  a = parse_args(argv)
  if a.list:
    device = a.device or "CPU"   # a selection's device-dependent tiers, and where --count-kernels schedules (no device opened)
    try: print(list_corpus(None if a.kernels == "default" else select(a.kernels, device), device, a.count_kernels))
    except ShapeError as e: return fail(str(e))
    except KeyError as e: return fail(e.args[0])
    return 0
  if a.ray is not None and not a.extract_only:   # the cluster's devices, not this host's: the driver opens none
    from dataset.ray_generate import run as ray_run
    return ray_run(a, entry, load_scorer)
  device = a.device or default_device()
  out = Path(a.out or f"out/{device.lower()}.sqlite")
  if a._child: return child(a, device, out, load_scorer)
  if why := cannot_write(out): return fail(why)
  if a.extract_only:
    try:
      store = Store(out)
      try: extract_into(store, select(a.kernels, device), device, not a.no_progress, workers=a.workers or max(1, (os.cpu_count() or 2) - 1))
      finally: store.close(compact=True)
    except (StoreError, ShapeError) as e: return fail(str(e))
    except KeyError as e: return fail(e.args[0])
    return 0
  try:
    open_device(device)
    select(a.kernels, device)
    if a.mix is not None and a.mix.get("model", 0) > 0 and a.model is None: return fail("--mix model=... needs --model")
    if a.model is not None:   # a missing, corrupt or other-arch model: an error now, not a child that fails to start three times
      if load_scorer is None: return fail("--model: run generate-dataset (python -m models.generate), which loads cost models")
      try: load_scorer(a.model, *device_info(device)[1:])
      except ValueError as e: return fail(str(e))
    Store(out).close()
  except (DeviceError, StoreError, ShapeError) as e: return fail(str(e))
  except KeyError as e: return fail(e.args[0])
  except OSError as e: return fail(f"cannot write {out}: {e.strerror or e}")
  return supervise(a, device, out, argv if argv is not None else sys.argv[1:], entry)

def child(a, device:str, out:Path, load_scorer:LoadScorer|None=None) -> int:
  store = Store(out)
  try:
    g = Generator(store, select(a.kernels, device), device, a.samples_per_kernel, a.seed, a.workers, a._deadline,
                  a.check_frac, heartbeat=out.with_suffix(".heartbeat"), progress=not a.no_progress, model=a.model, mix=a.mix,
                  only=set(a.only_kernels.split(",")) if a.only_kernels else None, tinygrad_beam=a.tinygrad_beam,
                  load_scorer=load_scorer)
    summary = g.run()
  except ShapeError as e: return fail(str(e))   # the supervisor passes it on (exit 2) instead of resuming
  finally: store.close(compact=True)
  print(json.dumps({"summary": summary}))
  return 0

OVERRUN_S = 30.0   # how long a run may go on past --time-budget (its last timings, closing the store) before it is killed

def supervise(a, device:str, out:Path, argv:list[str], entry:str="dataset.generate") -> int:
  if (lock := writer_lock(out)) is None: return fail(f"another generate-dataset is writing {out}")
  deadline = time.time() + a.time_budget if a.time_budget is not None else math.inf
  hb, fails = out.with_suffix(".heartbeat"), 0
  while True:
    before = _progress(out)
    cmd = [sys.executable, "-m", entry, *argv, "--_child", "--_deadline", str(deadline), "--device", device, "--out", str(out)]
    hb.touch()
    proc = subprocess.Popen(cmd, preexec_fn=die_with_parent)
    while (rc := proc.poll()) is None:
      time.sleep(1.0)
      if time.time() - hb.stat().st_mtime > a.hang_timeout:
        print(f"\ngenerate-dataset: no progress for {a.hang_timeout:.0f} s: killing the run, recording the config as hung, resuming", file=sys.stderr)
        proc.kill(); proc.wait(); rc = -9; break
      if time.time() > deadline + OVERRUN_S:   # every finished row is committed: a run stuck past its budget loses none of them
        print(f"\ngenerate-dataset: still running {OVERRUN_S:.0f} s after the time budget: stopped", file=sys.stderr)
        proc.kill(); proc.wait(); hb.unlink(missing_ok=True); return 0
    if rc in (0, 2): hb.unlink(missing_ok=True); return rc   # 2: the child's one-line error (e.g. --only-kernels)
    fails = 0 if _progress(out) > before else fails + 1
    if fails >= 3: print("generate-dataset: error: the run keeps failing without progress; giving up", file=sys.stderr); return 1
    if time.time() > deadline: return 0
    print(f"generate-dataset: run exited with {rc}; resuming", file=sys.stderr)

def _progress(out:Path) -> int:
  try:
    s = Store(out, readonly=True)
    try: return s.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
    finally: s.close()
  except StoreError: return 0

if __name__ == "__main__": sys.exit(main())
