"""Compile workers: each task proposes one opt sequence for a kernel (dataset.sampler) and lowers and compiles it, off the
process that owns the device. A worker never opens a device: it only renders and compiles (clang, NVRTC)."""
from __future__ import annotations
import copy, hashlib, importlib, os, random, signal, sys, threading, time, traceback, types
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any
from threadpoolctl import threadpool_limits
import multiprocessing
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.helpers import Context
from tinygrad.renderer import Renderer
from tinygrad.uop.ops import UOp, Ops
import tinygrad.codegen as cg
from dataset.kernel import Kernel, opts_set, scheduler
from dataset.sampler import model_children, propose, replay, shuffled_children

ONE_TRY = ("fixed", "hand", "tinygrad-beam")   # kinds whose one proposal is given (or deterministic): no retries

@dataclass(frozen=True)
class Task:
  key: str                       # kernel key
  kind: str                      # 'fixed' | 'hand' | 'random' | 'expand' | 'beam' | 'mutate' | 'model' | 'tinygrad-beam'
  parent: tuple[Opt, ...] = ()
  avoid: frozenset = frozenset()      # opt sequences already measured
  avoid_asts: frozenset = frozenset() # optimized-AST keys already measured: other opts, same kernel code
  seed: int = 0
  score: Any = None                   # 'model': the cost model's scorer (it pickles as the model file's path)

@dataclass
class Compiled:
  task: Task
  opts: tuple[Opt, ...]|None     # None: no valid proposal, nothing to record
  status: str                    # 'ok' | 'compile_error' | 'timeout' | 'none'
  prg: UOp|None = None
  compile_s: float = 0.0
  error: str|None = None
  lib_hash: str|None = None
  ast_key: str|None = None

# A compile still running this long after its worker's alarm should have ended it is hung in native code, which the alarm cannot
# interrupt (NVRTC: a ResNet-50 b32 fp16 kernel compiled for 250 s on the H200 host): its worker is stuck, and only killing it frees it
HANG_GRACE_S = 10.0
def hang_limit(timeout_s:float) -> float:
  """Seconds after which a compile seen running (Overdue) is hung: a pool marks one call more than it has workers running, which
  then waits for a worker's compile (at most timeout_s, the alarm) before its own."""
  return 2*timeout_s + HANG_GRACE_S

class Overdue:
  """Which compiles have run longer than limit_s. A future does not say when it started: this counts from when the waiting side
  first saw it running (see hang_limit)."""
  def __init__(self, limit_s:float): self.limit_s, self.since = limit_s, {}
  def __call__(self, futs) -> list[Future]:
    now = time.perf_counter()
    self.since = {f: t for f, t in self.since.items() if not f.done()}
    for f in futs:
      if f.running(): self.since.setdefault(f, now)
    return [f for f in futs if not f.done() and now - self.since.get(f, now) > self.limit_s]

def kill_pool(pool:ProcessPoolExecutor):
  """Shut the pool down now: its workers are killed, a hung one too (shutdown alone waits for it, and so does this process's exit);
  what was still in it fails with BrokenProcessPool."""
  procs, t = list((getattr(pool, "_processes", None) or {}).values()), getattr(pool, "_executor_manager_thread", None)
  pool.shutdown(wait=False, cancel_futures=True)
  for p in procs: p.kill()
  # its manager thread notices and closes the pool's pipes: at exit, concurrent.futures would race it writing to them
  if t is not None: t.join(5)

def die_with_parent():
  """A subprocess' preexec_fn: it is killed when the thread that started it exits (PR_SET_PDEATHSIG), a killed parent's included."""
  try:
    import ctypes
    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
  except OSError: pass

class CompileTimeout(Exception): pass
def _alarm(*_):
  signal.alarm(1)  # raised inside a __del__ the exception is swallowed: fire again until it lands; run_task's finally disarms
  raise CompileTimeout()

def _die_with(parent:int):
  # a worker outlives a parent killed with SIGKILL: it holds both ends of the pool's call queue, so it waits on it forever (and
  # keeps multiprocessing's resource_tracker alive with it). PR_SET_PDEATHSIG would not do: it fires when the *thread* that
  # spawned the worker exits, and the pool spawns workers from whichever thread submits. Polling the parent PID works for all.
  while os.getppid() == parent: time.sleep(0.5)
  os._exit(1)

_W: dict = {}
def _init(ren:Renderer, blobs:dict[str, bytes], timeout_s:int, preload:tuple[str, ...]=(), parent:int|None=None):
  if parent is not None: threading.Thread(target=_die_with, args=(parent,), daemon=True, name="die-with-parent").start()
  Context(ALLOW_DEVICE_USAGE=0, VIZ=0, TRACK_MATCH_STATS=0).__enter__()
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  # one BLAS thread: the workers score too (a blend's MLP is numpy matmuls), and 15 workers with an OpenBLAS thread per core each
  # spin 240 threads on 16 cores (H200 host: CvT-13's model descents took 22.1 s with a blend, 6.2 s with this, the
  # ranker alone 6.7 s)
  threadpool_limits(1, user_api="blas")
  configure(ren, blobs, timeout_s)
  # modules a later job will need, imported in the background while the worker already compiles (import locks make a job that
  # needs one wait for it, never import it twice)
  if preload: threading.Thread(target=lambda: [importlib.import_module(m) for m in preload], daemon=True).start()

def configure(ren:Renderer, blobs:dict[str, bytes], timeout_s:int):
  """This process compiles for `ren` the kernels in `blobs` (key -> AST blob). `ren` is copied: the device's own renderer
  keeps its settings."""
  ren = copy.copy(ren)
  if ren.compiler is not None: ren.compiler = copy.copy(ren.compiler)
  # no shared disk cache: 15 processes would contend on one SQLite file, and compile_s must measure a real compile
  ren.compiler.cachekey = None
  # CUBIN, not PTX: otherwise the driver JIT-compiles PTX to SASS at module load, serially, in the process that owns the GPU
  if hasattr(ren.compiler, "ptx"): ren.compiler.ptx = False
  _W.update(ren=ren, blobs=blobs, asts={}, timeout=timeout_s)

def _base(key:str) -> Scheduler:
  if key not in _W["asts"]: _W["asts"][key] = Kernel.ast_from_blob(_W["blobs"][key])
  return scheduler(_W["asts"][key], _W["ren"])

def optimized_ast(base:Scheduler, opts:tuple[Opt, ...]) -> UOp:
  """The kernel after `opts`, with its PARAMs on the renderer's device, as BEAM's _try_compile builds it. Raises on invalid opts."""
  if (k := replay(base, opts)) is None: raise ValueError(f"opts do not apply: {opts}")
  ast, dev = k.get_optimized_ast(), base.ren.target.device
  return ast.substitute({p: p.replace(arg=replace(p.arg, device=dev)) for p in ast.toposort() if p.op is Ops.PARAM})

def compile_ast(ast:UOp, ren:Renderer) -> UOp:
  # a worker compiles thousands of programs, so the cache would only grow: its own entry goes; in the process that runs the
  # program (workers=0), what that program compiled, or what precompiled put there, stays
  fresh = (key := cg.to_program_key(ast, ren)) not in cg.to_program_cache
  try: return cg.to_program(ast, ren)
  finally:
    if fresh: cg.to_program_cache.pop(key, None)

def precompiled(ast:UOp, opts:tuple[Opt, ...], prg:UOp|None, device:str) -> None:
  """A search's compile `prg` of kernel `ast` at `opts` put in tinygrad's compile cache, where a real run of `ast` with those opts
  (dataset.kernel.with_opts) looks it up: that run compiles nothing, and runs the very binary the search timed and verified."""
  from tinygrad import Device
  if prg is not None: cg.to_program_cache[cg.to_program_key(opts_set(ast, opts), Device[device].renderer)] = prg

def run_task(task:Task) -> Compiled:
  rng = random.Random(task.seed)
  try: base = _base(task.key)
  except Exception as e: return Compiled(task, None, "none", error=f"kernel setup failed: {e}")
  # propose until the kernel code is new: different opt sequences often lower to the same code, and compiling is the cost
  try:   # 'model': the cost model's favourite children first; 'beam': every child, in random order, until one is new code
    kids = (model_children(base, task.parent, task.score, task.avoid) if task.kind == "model" else
            shuffled_children(base, task.parent, rng, task.avoid) if task.kind == "beam" else None)
  except Exception as e: return Compiled(task, None, "none", error=f"{task.kind} proposal failed: {type(e).__name__}: {e}")
  # every child of this parent is measured: a model proposal becomes a mutation of it, so that the round trip still measures
  # something new; a beam step comes back empty, and the climb widens to its next parent (dataset.plan)
  if kids == [] and task.kind == "model": task = replace(task, kind="mutate")
  if kids == [] and task.kind == "beam": return Compiled(task, None, "none")
  ranked = iter(kids) if kids else None
  for _ in range(1 if task.kind in ONE_TRY else len(kids) if task.kind == "beam" else 8 if ranked is not None else 4):
    try:
      opts = next(ranked, None) if ranked is not None else propose(base, task.kind, rng, task.parent, task.avoid)
      if opts is None: return Compiled(task, None, "none")
      ast = optimized_ast(base, opts)
    except Exception as e: return Compiled(task, None, "none", error=f"proposal failed: {type(e).__name__}: {e}")
    if (akey := ast.key.hex()[:20]) not in task.avoid_asts: break
  else: return Compiled(task, None, "none", ast_key=akey)
  signal.signal(signal.SIGALRM, _alarm)
  signal.alarm(_W["timeout"])
  st = time.perf_counter()
  try:
    prg = compile_ast(ast, base.ren)
    return Compiled(task, opts, "ok", prg, time.perf_counter()-st, lib_hash=hashlib.sha1(prg.src[3].arg).hexdigest(), ast_key=akey)
  except CompileTimeout: return Compiled(task, opts, "timeout", compile_s=time.perf_counter()-st, error=f"compile exceeded {_W['timeout']} s", ast_key=akey)
  except Exception as e:
    return Compiled(task, opts, "compile_error", compile_s=time.perf_counter()-st, ast_key=akey,
                    error=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-2)}")
  finally: signal.alarm(0)

def run_kernel_task(args:tuple[bytes, Task]) -> Compiled:
  """run_task in a pool shared by many kernels (search): the task brings its kernel's AST blob."""
  blob, task = args
  _W["blobs"].setdefault(task.key, blob)
  return run_task(task)

def worker_base(blob:bytes, key:str) -> Scheduler:
  """The unoptimized Scheduler of a kernel, in a compile worker (search's seed batches are computed there too)."""
  _W["blobs"].setdefault(key, blob)
  return _base(key)

class _Worker(multiprocessing.context.SpawnProcess):
  """A spawned process that starts without the program's __main__. Spawn runs the parent's main script again in every child (as
  __mp_main__), so a tinygrad program without an `if __name__ == "__main__"` guard, tuned by drop-in (KERNTUNE=1), ran its whole body
  once more in each compile worker, on the device, before the worker's initializer could forbid it. A worker needs nothing of
  __main__: what it runs is named by module (run_kernel_task, seed_batch, a scorer that pickles as its model's path)."""
  @staticmethod
  def _Popen(process_obj):
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")   # no __file__, no __spec__: spawn's preparation data names no main
    try: return multiprocessing.context.SpawnProcess._Popen(process_obj)
    finally: sys.modules["__main__"] = main

class _WorkerContext(multiprocessing.context.SpawnContext): Process = _Worker

def make_pool(workers:int, ren:Renderer, kernels:list[dict], timeout_s:int=10, preload:tuple[str, ...]=()) -> ProcessPoolExecutor:
  """A spawned pool (forking a process that holds a device context is unsafe) that knows every kernel's AST up front; its workers
  import the `preload` modules in the background, and exit when this process dies, even by SIGKILL."""
  blobs = {k["key"]: k["ast"] for k in kernels}
  return ProcessPoolExecutor(workers, mp_context=_WorkerContext(), initializer=_init,
                             initargs=(ren, blobs, timeout_s, preload, os.getpid()))
