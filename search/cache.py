"""The tuned-kernel cache, and injecting it into any tinygrad program.

Entries are keyed by (raw-AST key, device, tinygrad version). While enabled, every LINEAR tinygrad runs gets `opts_to_apply` set
on each kernel that has an entry (dataset.kernel.with_opts); kernels without one keep tinygrad's default. Enable it with the
context manager `tuned()`, with `enable()`, or for a whole program with the environment: `KERNTUNE_TUNED=1` (or a cache path)
and `tuned-run prog.py ARGS`. Drop-in tuning (search.dropin) also tunes every kernel the cache lacks, at first sight:
`tuned(tune=True)`, `tuned-run --tune prog.py ARGS`, or `KERNTUNE=1`. Either variable works in a program that never imports
kerntune once kerntune.pth is installed (search.hook), and in one that imports search.cache early."""
from __future__ import annotations
import contextlib, fcntl, json, os, sys, tempfile, threading
from pathlib import Path
from dataset.check import VERSION as CHECK, low_dtype
from dataset.kernel import TINYGRAD_VERSION, opts_from_json, with_opts

DEFAULT = Path(os.environ.get("KERNTUNE_CACHE", Path.home() / ".cache" / "kerntune" / "tuned.json"))
VERSION = 2   # an entry's format: 2 has times in us (time_us, hand_coded_us); 1 (no "v") had the search CLI's seconds

class CacheError(RuntimeError): pass

def _key(ast_key:str, device:str) -> str: return f"{ast_key}|{device}|{TINYGRAD_VERSION}"

def _entry(e:dict) -> dict:
  """An entry in the current format: seconds (time_s, hand_time_s) become microseconds (time_us, hand_coded_us)."""
  e = dict(e)
  for s, us in (("time_s", "time_us"), ("hand_time_s", "hand_coded_us")):
    if s in e: t = e.pop(s); e.setdefault(us, None if t is None else t*1e6)
  return {**e, "v": VERSION}

class TunedCache:
  """A JSON file of entries, shared by every process that tunes: each put merges into what is on disk under an exclusive lock on
  PATH.lock, and replaces the file atomically, so concurrent writers keep each other's entries and a reader never sees half a file."""
  def __init__(self, path:str|os.PathLike=DEFAULT):
    self.path = Path(path)
    self.lock = threading.Lock()
    self.entries: dict[str, dict] = self._read()
    self._opts: dict[str, dict] = {}   # opts_for's tables, until the entries change
    self._stale: dict[tuple, bool] = {}  # stale()'s verdicts, until the entries change

  def _read(self) -> dict[str, dict]:
    try: raw = json.loads(self.path.read_text()) if self.path.exists() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as e: raise CacheError(f"tuned-kernel cache {self.path} is corrupt: {e}") from e
    except OSError as e: raise CacheError(f"cannot read tuned-kernel cache {self.path}: {e.strerror or e}") from e
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
      raise CacheError(f"tuned-kernel cache {self.path} is corrupt: not a JSON object of entries")
    return {k: _entry(v) for k, v in raw.items()}

  def get(self, ast_key:str, device:str) -> dict|None: return self.entries.get(_key(ast_key, device))
  def put(self, ast_key:str, device:str, opts:list, **info):
    """Store `opts` with `info` (times as time_us and hand_coded_us; seconds are converted), keeping every entry another process
    has put meanwhile. Raises CacheError if the cache cannot be written."""
    with self.lock:
      try:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
          fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
          self.entries, self._opts, self._stale = {**self._read(), _key(ast_key, device): _entry({"opts": opts, "check": CHECK, **info})}, {}, {}
          fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
          try:
            with os.fdopen(fd, "w") as f: json.dump(self.entries, f, indent=1); f.flush(); os.fsync(f.fileno())
            os.replace(tmp, self.path)
          except BaseException:
            with contextlib.suppress(OSError): os.unlink(tmp)
            raise
      except OSError as e: raise CacheError(f"cannot write tuned-kernel cache {self.path}: {e.strerror or e}") from None
  def opts_for(self, device:str) -> dict:
    """ast key -> opts for this device and tinygrad version (kept until the next put: every LINEAR a program runs asks)."""
    if device not in self._opts:
      suffix = f"|{device}|{TINYGRAD_VERSION}"
      self._opts[device] = {k[:-len(suffix)]: opts_from_json(v["opts"]) for k, v in self.entries.items() if k.endswith(suffix)}
    return self._opts[device]

  def stale(self, ast, device:str) -> bool:
    """Whether the kernel's entry is a low-precision kernel's config that an older check verified (dataset.check.VERSION): it may
    compute wrong. tune-model and drop-in search it again; replay runs tinygrad's default in its place. tinygrad BEAM's picks in a
    comparison's cache (search.beam_compare; scripts/bench_dropin's "beam2") are the baseline as tinygrad runs them, never stale: in
    their place the default would stand for BEAM."""
    if (bad := self._stale.get(k := (ast.key.hex(), device))) is None:
      e = self.get(*k) or {}
      bad = self._stale[k] = (bool(e) and e.get("check", 1) < CHECK and e.get("status") != "rejected"
                              and not str(e.get("strategy", "")).startswith(("tinygrad BEAM", "beam2")) and low_dtype(ast) is not None)
    return bad
  def current(self, linear, device:str) -> dict:
    """opts_for(device) less the stale entries of `linear`'s kernels (they run at tinygrad's default). Said once a process."""
    table = self.opts_for(device)
    stale = [k for c in linear.src if (a := c.src[0]).op.name == "SINK" and (k := a.key.hex()) in table and self.stale(a, device)]
    if not stale: return table
    if not _said_stale:
      _said_stale.append(self.path)
      print(f"kerntune: {self.path}: fp16/bf16 configs verified by an older check run at tinygrad's default until searched again "
            "(KERNTUNE=1, tuned-run --tune)", file=sys.stderr, flush=True)
    return {k: v for k, v in table.items() if k not in stale}

_said_stale: list = []

# *** injection ***

_active: list[TunedCache] = []
_tuners: list = []   # search.dropin.Tuner of each enable(tune=True), None for a replay-only enable
_stats = {"tuned": 0, "default": 0}

def _apply(linear, captured:bool=False, again=None):
  """`linear` with the active cache's opts set on every kernel the cache has (counted in stats); with drop-in tuning on, the kernels
  it lacks are searched first (search.dropin), and where `again` can run it (not under a TinyJit capture, where what it reads is
  not computed yet), checked against tinygrad's defaults on the program's data (search.guard.check_tuned). captured: TinyJit is
  capturing it."""
  if not _active or (dev := _linear_device(linear)) is None: return linear
  table = _active[-1].current(linear, dev)
  if (t := _tuners[-1]) is not None:
    t.tune(linear, dev, table, _active[-1], captured)
    if again is not None and getattr(t, "guard", False):
      from search.guard import check_tuned
      check_tuned(t, linear, dev, table, _active[-1], again)
  kernels = [c.src[0].key.hex() for c in linear.src if c.src[0].op.name == "SINK"]
  _stats["tuned"] += sum(k in table for k in kernels); _stats["default"] += sum(k not in table for k in kernels)
  return with_opts(linear, table)

def _patched(run_linear):
  def run(linear, *args, **kwargs):
    # the guard's runs of the same LINEAR: as the program's, leaving tinygrad's counters alone (update_stats is the 4th argument)
    again = lambda lin: run_linear(lin, *args, **(kwargs if len(args) > 2 else {**kwargs, "update_stats": False}))
    return run_linear(_apply(linear, again=again), *args, **kwargs)
  run.__wrapped__ = run_linear
  return run

def _patched_add(add_linear):
  # TinyJit captures through add_linear, not run_linear: without this a jitted function would replay default kernels
  def add(self, linear, var_vals): return add_linear(self, _apply(linear, captured=True), var_vals)
  add.__wrapped__ = add_linear
  return add

def _linear_device(linear) -> str|None:
  from tinygrad.uop.ops import Ops
  for c in linear.src:
    if c.src[0].op is Ops.SINK:
      for u in c.src[0].toposort():
        if u.op is Ops.PARAM and getattr(u.arg, "device", None): return str(u.arg.device).split(":")[0]
  return None

def _install():
  import tinygrad.engine.realize as R, tinygrad.tensor as T, tinygrad.engine.jit as J
  for mod in (R, T, J):
    if hasattr(mod, "run_linear") and not hasattr(mod.run_linear, "__wrapped__"): mod.run_linear = _patched(mod.run_linear)
  if not hasattr(J._TinyJit.add_linear, "__wrapped__"): J._TinyJit.add_linear = _patched_add(J._TinyJit.add_linear)

def enable(path:str|os.PathLike|None=None, tune:bool=False, tuner=None) -> TunedCache:
  """Replay the cache; with tune (or a search.dropin.Tuner), also search every kernel it lacks at first sight."""
  if tune and tuner is None:   # first: a bad setting leaves nothing half enabled
    from search.dropin import from_env
    tuner = from_env()
  _install()
  _active.append(c := TunedCache(path or DEFAULT))
  _tuners.append(tuner)
  from tinygrad.helpers import DEV
  if DEV.device == "CUDA" and hasattr(tuner, "pool_workers"):   # its compile pool starts while the program builds its model
    from search.measure import prestart
    prestart(tuner.pool_workers("CUDA"))
  return c
def disable():
  if _active: _active.pop(); _tuners.pop()

@contextlib.contextmanager
def tuned(path:str|os.PathLike|None=None, tune:bool=False, tuner=None):
  """Inside, tinygrad runs every kernel the cache has tuned with its tuned opts; with tune=True, kernels the cache lacks are tuned
  first (search.dropin), and the summary is printed on leaving."""
  c = enable(path, tune, tuner)
  t = _tuners[-1]
  try: yield c
  finally:
    disable()
    if t is not None and not t.quiet and t.rows: print(t.summary(c.path), file=sys.stderr, flush=True)

def stats() -> dict[str, int]: return dict(_stats)
def active_tuner():
  """The search.dropin.Tuner of the innermost enable(tune=True), or None."""
  return _tuners[-1] if _tuners else None

def _from_env():
  """KERNTUNE=1 (or a cache path): drop-in tuning for the whole program; KERNTUNE_TUNED=1 (or a cache path): replay only."""
  for var, tune in (("KERNTUNE", True), ("KERNTUNE_TUNED", False)):
    if (env := os.environ.get(var)) and env != "0":
      c = enable(None if env == "1" else env, tune)
      if tune:
        from search.dropin import report_at_exit
        report_at_exit(_tuners[-1], c.path)
      return
_from_env()

def run_main(argv=None) -> int:
  """tuned-run [--tune [--retune]] PROG.py ARGS: run a Python program with the tuned-kernel cache enabled; --tune also tunes every
  kernel the cache lacks at first sight (search.dropin; budgets from KERNTUNE_BUDGET, KERNTUNE_KERNEL_S, KERNTUNE_TOTAL_S,
  KERNTUNE_TOTAL), --retune also searches further the cached kernels whose search stopped on its budget."""
  import runpy
  argv = sys.argv[1:] if argv is None else list(argv)
  flags = set()
  while argv and argv[0] in ("--tune", "--retune"): flags.add(argv.pop(0))
  tune, retune = bool(flags), "--retune" in flags
  if not argv or argv[0].startswith("-"):
    print("usage: tuned-run [--tune [--retune]] PROG.py [ARGS...]", file=sys.stderr); return 2
  if not Path(argv[0]).is_file(): print(f"tuned-run: error: no such program {argv[0]}", file=sys.stderr); return 2
  if not _active or (tune and _tuners[-1] is None):
    from search.dropin import from_env, report_at_exit
    c = enable(None, tune, from_env() if tune else None)
    if tune: report_at_exit(_tuners[-1], c.path)
  if retune and _tuners[-1] is not None: _tuners[-1].retune = True
  sys.argv = argv
  runpy.run_path(argv[0], run_name="__main__")
  return 0
