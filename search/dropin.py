"""Drop-in tuning: every kernel a tinygrad program runs that the tuned-kernel cache lacks is searched at first sight with the learned
beam, where tinygrad's BEAM=2 would search it at first compile; the verified answer goes to the cache and runs at once, so a second
run of the program replays the cache and searches nothing. Backward and optimizer kernels, and kernels captured by TinyJit, pass
through the same hook (search.cache._apply). A kernel with a symbolic shape (a Variable) keeps tinygrad's default: its runtime
depends on a value the search cannot see.

  with tuned(tune=True): out = model(x).realize()     # or: tuned-run --tune prog.py ARGS, or KERNTUNE=1 with search.cache imported"""
from __future__ import annotations
import atexit, math, os, sys, time
from dataclasses import dataclass, field
from tinygrad.uop.ops import Ops, UOp

@dataclass
class Tuner:
  budget: int = 24                  # timed candidates per kernel at most (the learned beam usually stops sooner)
  kernel_s: float = 60.0            # seconds per kernel at most
  total_s: float|None = None        # seconds for the whole program; once spent, kernels the cache lacks keep their default
  workers: int|None = None          # compile processes (None: every core but one on a GPU, none on the CPU)
  model: str|None = None            # cost model (None: the shipped one for the device)
  quiet: bool = False
  spent_s: float = 0.0
  rows: list[dict] = field(default_factory=list)   # one per kernel met: name, status, search_s, us, hand_us
  _seen: set[str] = field(default_factory=set)
  _scorers: dict = field(default_factory=dict)
  _busy: bool = False

  def _scorer(self, device:str):
    if device not in self._scorers:
      from dataset.device import device_info
      from search.api import load_model
      name, arch, props = device_info(device)
      self._scorers[device] = load_model(self.model, device, name, arch, False)[0].scorer(props)
    return self._scorers[device]

  def tune(self, linear:UOp, device:str, table:dict, cache) -> None:
    """Search the kernels of `linear` that `table` (ast key -> opts) lacks; put the verified answers in `cache` and `table`."""
    if self._busy: return   # a search's own runs are not tuned
    asts = [c.src[0] for c in linear.src if c.src[0].op is Ops.SINK]
    new = [a for a in asts if (k := a.key.hex()) not in table and k not in self._seen]
    if not new: return
    from dataset.kernel import Kernel, opts_to_json
    from search.api import search_kernels
    from search.measure import Budget
    todo = []
    for a in new:
      self._seen.add(key := a.key.hex())
      name = f"kernel {len(self._seen)}"
      if _symbolic(a, device): self.rows.append({"name": name, "key": key, "status": "symbolic"}); continue
      if self.total_s is not None and self.spent_s >= self.total_s: self.rows.append({"name": name, "key": key, "status": "over budget"}); continue
      todo.append(Kernel(key, a, name, "dropin", "dropin"))
    if not todo: return
    workers = self.workers if self.workers is not None else (0 if device == "CPU" else max(0, (os.cpu_count() or 1) - 1))
    self._busy, st = True, time.perf_counter()
    try:
      if not self.quiet: print(f"kerntune: tuning {len(todo)} new kernel(s) on {device}", file=sys.stderr, flush=True)
      found = search_kernels(todo, device, "beam", Budget(self.budget, self.kernel_s), self._scorer(device), 0, workers)
    except Exception as e:   # a search that breaks leaves the program running with tinygrad's defaults
      self.rows += [{"name": k.name, "key": k.key, "status": f"failed: {type(e).__name__}: {e}"} for k in todo]
      return
    finally: self._busy, dt = False, time.perf_counter() - st
    self.spent_s += dt
    for k, (o, m) in zip(todo, found):
      m.close()
      row = {"name": k.name, "key": k.key, "search_s": round(dt/len(todo), 3), "us": o.time_s*1e6, "hand_us": o.hand_time_s*1e6, "timed": o.timed}
      if not o.verified: self.rows.append({**row, "status": f"default: {o.check}"}); continue
      cache.put(k.key, device, opts_to_json(o.opts), time_us=o.time_s*1e6, hand_coded_us=o.hand_time_s*1e6, name=k.name, strategy="dropin",
                tune_s=row["search_s"], timed=o.timed, compiled=o.compiled)
      table[k.key] = o.opts
      self.rows.append({**row, "status": "tuned"})

  def summary(self, replayed:int, default:int, cache_path) -> str:
    tuned = [r for r in self.rows if r["status"] == "tuned"]
    left = {s: sum(r["status"].startswith(s) for r in self.rows) for s in ("symbolic", "over budget", "default", "failed")}
    gain = math.exp(sum(math.log(r["hand_us"]/r["us"]) for r in tuned)/len(tuned)) if tuned else 1.0
    lines = [f"kerntune: {len(tuned)} kernel(s) tuned in {self.spent_s:.1f} s (geomean {gain:.2f}x over tinygrad's default), "
             f"{replayed} kernel run(s) replayed from the cache, {default} kernel run(s) left default"
             + "".join(f", {n} {s}" for s, n in left.items() if n) + f"; cache {cache_path}"]
    lines += [f"  {r['name']}: {r['hand_us']:.1f} -> {r['us']:.1f} us ({r['hand_us']/r['us']:.2f}x), {r['search_s']:.1f} s, {r['timed']} timed" for r in tuned]
    lines += [f"  {r['name']}: {r['status']}" for r in self.rows if r["status"] != "tuned"]
    return "\n".join(lines)

def _symbolic(ast:UOp, device:str) -> bool:
  """Whether the kernel's loop shape holds a Variable (its size is known only at run time)."""
  from dataset.device import renderer_for
  from dataset.kernel import scheduler
  try: return not all(isinstance(s, int) for s in scheduler(ast, renderer_for(device, compiler=False)).full_shape)
  except Exception: return True   # a kernel the Scheduler cannot take is not searched either

def from_env() -> Tuner:
  """A Tuner with its budgets from KERNTUNE_BUDGET (timed per kernel), KERNTUNE_KERNEL_S and KERNTUNE_TOTAL_S (seconds)."""
  env = os.environ.get
  return Tuner(budget=int(env("KERNTUNE_BUDGET", 24)), kernel_s=float(env("KERNTUNE_KERNEL_S", 60)),
               total_s=float(env("KERNTUNE_TOTAL_S")) if env("KERNTUNE_TOTAL_S") else None, model=env("KERNTUNE_MODEL"))

def report_at_exit(tuner:Tuner, stats, cache_path):
  def say():
    if tuner.rows or stats()["tuned"]: print(tuner.summary(stats()["tuned"], stats()["default"], cache_path), file=sys.stderr, flush=True)
  atexit.register(say)
