"""generate-dataset --ray [ADDRESS]: the generator as a Ray job, one worker per GPU (each with its compile processes), across the GPUs
of a host or of a Ray cluster of hosts. The driver owns the store: it deals the unfinished kernels out to the workers, seeds each
worker's shard store with its kernels and their measurements, and merges what the shards finish into the store as they go.

A worker runs the local generate-dataset (its supervisor: a config that crashes, hangs or poisons the device is handled as it is
locally) on its shard in the run directory <store>.ray on its node. A worker that dies is started again on its shard, which it
resumes; a driver that dies leaves the shards, which the next run merges before it deals the work out again. Rows merge by (kernel,
opts, device): merging one twice adds it once, and a finished row replaces only a pending one (dataset.store). On a cluster of hosts,
each host needs kerntune importable, the run directory's path writable, and --model's file at the driver's path.

  python -m dataset.ray_generate --report ray_scaling.json   # the scaling job's table (scripts/gpu_ray.sh)"""
from __future__ import annotations
import json, os, random, subprocess, sys, tempfile, time
from dataclasses import dataclass, field
from pathlib import Path
from tqdm import tqdm
from typing import Callable
from dataset.compile import die_with_parent
from dataset.corpus import ShapeError, extract_into, select
from dataset.errors import one_line
from dataset.kernel import opts_from_json
from dataset.paths import cannot_write
from dataset.plan import KernelPlan, MIX, MODEL_MIX
from dataset.store import Store, StoreError, writer_lock

PULL_S = 5.0         # how often the driver merges what the shards finished
PULL_ROWS = 20_000   # rows of one pull
START_S = 600.0      # a worker waits this long for its GPU (or CPU) to be free
MAX_FAILS = 3        # a worker that dies this often in a row without a row gained is given up
LOCK_WAIT_S = 60.0   # a shard's supervisor outlives its dead worker by as long as it takes to be killed
NAMESPACE = "kerntune"
LoadScorer = Callable[[str, str, dict], Callable]   # dataset.generate's: models.generate passes it in

def fail(msg:str) -> int:
  print(f"generate-dataset: error: {msg}", file=sys.stderr)
  return 2

def _probe(device:str, model:str|None, load_scorer:LoadScorer|None) -> tuple[str, str, dict]|str:
  """On a worker's node: the device's (name, arch, properties), or why it cannot serve (no such device, a model for another arch)."""
  from dataset.device import DeviceError, device_info
  try:
    info = device_info(device)
    if model is not None and load_scorer is not None: load_scorer(model, *info[1:])
    return info
  except (DeviceError, ValueError) as e: return str(e)

def _wait_unlocked(store:Path, wait_s:float) -> bool:
  """Whether no generate-dataset holds the store's writer lock, waiting up to wait_s for one to let go."""
  deadline = time.time() + wait_s
  while (lock := writer_lock(store)) is None:
    if time.time() > deadline: return False
    time.sleep(0.5)
  lock.close()
  return True

class Worker:
  """One device's generator: the local generate-dataset on a shard in the run directory of this node, seeded with the driver's rows
  of its kernels. A shard left here by a worker that died keeps its rows (those the driver has not merged yet too)."""
  def __init__(self, shard:str, seed:bytes, cmd:list[str], workers:int|None, gpu:bool, cwd:str):
    import ray
    self.shard, self.cwd = Path(shard), cwd if os.path.isdir(cwd) else None
    self.node = ray.get_runtime_context().get_node_id()
    if not workers:   # on a GPU, its share of the node's cores, less the process that times; on the CPU, one beside it
      res = next(n["Resources"] for n in ray.nodes() if n["NodeID"] == self.node)
      workers = max(1, int(res.get("CPU", 2) // max(1, res.get("GPU", 1))) - 1) if gpu else 1
    self.cmd, self.workers = [*cmd, "--workers", str(workers)], workers
    self.shard.parent.mkdir(parents=True, exist_ok=True)
    kept = self.shard.exists()
    fd, tmp = tempfile.mkstemp(dir=self.shard.parent, prefix=".seed-")
    try:
      with os.fdopen(fd, "wb") as f: f.write(seed)
      s = Store(self.shard)
      try: s.merge(tmp, pending=True); self.low = 0 if kept else s.low_mark()   # a kept shard's rows are sent again: the driver drops duplicates
      finally: s.close()
    finally: os.unlink(tmp)

  def info(self) -> tuple[str, int, int]: return self.node, self.low, self.workers

  def run(self, budget_s:float|None) -> tuple[int, dict|None, str|None]:
    """The generator on the shard until it is done or its budget spent: (exit status, its summary, its last error line)."""
    if not _wait_unlocked(self.shard, LOCK_WAIT_S): return 1, None, f"{self.shard} is still being written by an earlier worker"
    cmd = [*self.cmd, *(["--time-budget", f"{budget_s:.1f}"] if budget_s is not None else [])]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, cwd=self.cwd,
                         env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=die_with_parent)   # it dies with this worker
    summary = err = None
    assert p.stdout is not None
    for line in p.stdout:
      print(f"[{self.shard.stem}] {line}", end="", flush=True)
      if line.startswith('{"summary"'): summary = json.loads(line)["summary"]
      elif "error:" in line: err = line.strip()
    return p.wait(), summary, err

  def pull(self, low:int) -> tuple[list[tuple], int, dict]:
    """Finished rows after `low` (at most PULL_ROWS), the low mark to ask from next, and the shard's devices, picks and kernel flops."""
    s = Store(self.shard, readonly=True)
    try: return (*s.rows_after(low, PULL_ROWS), s.extras())
    finally: s.close()

def _leftovers(run_dir:str) -> list[tuple[str, bytes]]:
  """This node's shards of runs that ended without merging them (a driver that died), with their WALs folded in. One whose
  supervisor is still exiting is waited for, and left for a later run if it does not."""
  out = []
  for f in sorted(Path(run_dir).glob("*.sqlite")) if Path(run_dir).is_dir() else []:
    if not _wait_unlocked(f, LOCK_WAIT_S): continue
    try: s = Store(f); s.close(compact=True)
    except StoreError: continue   # a shard that died before its first write
    out.append((f.name, f.read_bytes()))
  return out

def _remove(run_dir:str, names:list[str]):
  for n in names:
    for suffix in ("", "-wal", "-shm"): Path(run_dir, n + suffix).unlink(missing_ok=True)
    for suffix in (".lock", ".heartbeat"): Path(run_dir, n).with_suffix(suffix).unlink(missing_ok=True)
  try: Path(run_dir).rmdir()
  except OSError: pass   # not empty, or gone

@dataclass
class Part:
  i: int
  keys: set[str]
  names: list[str]            # the variants of its kernels: the worker's --kernels
  actor: object = None
  ref: object = None          # the worker's run
  low: int = 0
  node: str|None = None
  starts: int = 0
  fails: int = 0
  gained: int = 0             # rows merged since its worker started
  status: int|None = None     # exit status once done
  drained: bool = False       # its run returned and every row of its shard is merged
  summaries: list = field(default_factory=list)

class Driver:
  def __init__(self, ray, a, device:str, n:int, out:Path, store:Store, dev:tuple[str, str, dict], entry:str):
    self.ray, self.a, self.device, self.n, self.out, self.store, self.entry = ray, a, device, n, out, store, entry
    self.dev_name, self.arch, _ = dev
    self.run_dir, self.run_id = out.resolve().with_suffix(".ray"), f"{int(time.time())}-{os.getpid()}"
    self.deadline = time.time() + a.time_budget if a.time_budget is not None else None
    self.Worker = ray.remote(max_concurrency=4)(Worker)   # run blocks while pull answers
    self.counts, self.restarts, self.compile_workers = {"ok": 0, "failed": 0}, 0, a.workers
    self.error: str|None = None

  def on_node(self, fn, node:str):
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    return self.ray.remote(num_cpus=0)(fn).options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))

  def merge_leftovers(self):
    """Shards that runs before this one left on any node: merged, then removed (a driver that dies between merges them again)."""
    nodes = [n["NodeID"] for n in self.ray.nodes() if n["Alive"]]
    for node, found in zip(nodes, self.ray.get([self.on_node(_leftovers, n).remote(str(self.run_dir)) for n in nodes])):
      with tempfile.TemporaryDirectory() as d:
        for name, blob in found:
          (f := Path(d) / name).write_bytes(blob)
          n = self.store.merge(f, pending=True)
          print(f"generate-dataset: merged {n} rows of {name}, left by an earlier run", file=sys.stderr)
      if found: self.ray.get(self.on_node(_remove, node).remote(str(self.run_dir), [n for n, _ in found]))

  def plan(self, variants) -> tuple[list[Part], int]:
    """The unfinished kernels dealt out to the workers by their work left, largest first, each to the least loaded part."""
    a, kernels = self.a, self.store.kernels(self.device, [v.name for v in variants])
    if a.only_kernels:
      only = set(a.only_kernels.split(","))
      if missing := only - {k["name"] for k in kernels}: raise ShapeError(f"--only-kernels: no such kernel in --kernels: {sorted(missing)}")
      kernels = [k for k in kernels if k["name"] in only]
    measured = self.store.measured(self.dev_name)
    picks = self.store.picks(self.dev_name, "tinygrad-beam") if a.tinygrad_beam else {}
    mix = a.mix or (MODEL_MIX if a.model else MIX)
    work = []
    for k in kernels:
      p = KernelPlan(k["key"], a.samples_per_kernel, random.Random(0), mix=mix)
      p.load([(opts_from_json(o), s, t, src) for o, s, t, src in measured.get(k["key"], [])])
      if not p.finished() or (a.tinygrad_beam and k["key"] not in picks): work.append((k, max(1, p.target - p.done)))
    parts = [Part(i, set(), []) for i in range(self.n)]
    load = [0]*self.n
    for k, w in sorted(work, key=lambda x: -x[1]):
      i = min(range(self.n), key=lambda j: load[j])
      load[i] += w; parts[i].keys.add(k["key"])
      if k["variant"] not in parts[i].names: parts[i].names.append(k["variant"])
    return [p for p in parts if p.keys], sum(w for _, w in work)

  def cmd(self, p:Part) -> list[str]:
    a = self.a
    return [sys.executable, "-m", self.entry, "--device", self.device, "--kernels", ",".join(p.names), "--out", str(self.shard(p)),
            "--samples-per-kernel", str(a.samples_per_kernel), "--seed", str(a.seed), "--check-frac", str(a.check_frac),
            "--hang-timeout", str(a.hang_timeout), "--no-progress", *(["--model", str(Path(a.model).resolve())] if a.model else []),
            *(["--mix", ",".join(f"{k}={w}" for k, w in a.mix.items())] if a.mix else []),
            *(["--tinygrad-beam", str(a.tinygrad_beam)] if a.tinygrad_beam else [])]

  def shard(self, p:Part) -> Path: return self.run_dir / f"{self.run_id}-w{p.i}.sqlite"

  def start(self, p:Part):
    """A worker for the part, seeded with the store's rows of its kernels, on the node of its last one if it can (its shard is there)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    with tempfile.TemporaryDirectory() as d:
      seed = Store(f := Path(d) / "seed.sqlite")
      try: seed.merge(self.store.path, kernels=p.keys, pending=True)
      finally: seed.close(compact=True)
      blob = f.read_bytes()
    opts: dict = {"num_gpus": 1, "num_cpus": 1} if self.device == "CUDA" else {"num_cpus": 1}
    if p.node is not None: opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(p.node, soft=True)
    p.starts, p.gained = p.starts + 1, 0
    p.actor = self.Worker.options(name=f"generate:{self.out.resolve()}:w{p.i}:{p.starts}", **opts).remote(
      str(self.shard(p)), blob, self.cmd(p), self.a.workers, self.device == "CUDA", os.getcwd())
    try: p.node, p.low, self.compile_workers = self.ray.get(p.actor.info.remote(), timeout=START_S)
    except self.ray.exceptions.GetTimeoutError:
      raise StoreError(f"--ray: worker {p.i} did not start in {START_S:g} s (are the cluster's {self.device} resources taken?)") from None
    p.ref = p.actor.run.remote(None if self.deadline is None else max(1.0, self.deadline - time.time()))

  def pull(self, live:list[Part]) -> int:
    """Every live worker's new rows merged into the store, until a pull comes back short. A worker found dead is left to its run's
    result; one whose run returned is drained."""
    refs, gained = {p.i: p.actor.pull.remote(p.low) for p in live}, 0
    for p in live:
      while True:
        try: rows, p.low, extras = self.ray.get(refs[p.i], timeout=120)
        except (self.ray.exceptions.RayActorError, self.ray.exceptions.GetTimeoutError, self.ray.exceptions.RayTaskError): break
        got = self.store.merge_rows(rows)
        self.store.merge_extras(extras)
        p.gained, gained = p.gained + len(got), gained + len(got)
        for st in got: self.counts["ok" if st == "ok" else "failed"] += 1
        if len(rows) < PULL_ROWS: break
        refs[p.i] = p.actor.pull.remote(p.low)
    return gained

  def done(self, p:Part):
    """A worker's run returned or its worker died: done, failed, or started again."""
    try: rc, summary, err = self.ray.get(p.ref)
    except self.ray.exceptions.RayActorError as e:
      p.fails = 1 if p.gained else p.fails + 1
      if p.fails >= MAX_FAILS: p.status, then = 1, "giving up on its kernels (its shard stays for the next run)"
      elif self.deadline is not None and time.time() > self.deadline: p.status, then = 0, "the time budget is spent"
      else: then = "starting it again on its shard"
      print(f"generate-dataset: worker {p.i} died ({one_line(e, 200)}); {then}", file=sys.stderr)
      if p.status is None: self.restarts += 1; self.start(p)
      return
    self.ray.kill(p.actor)   # the pull after the wait that found its run returned merged every row of its shard
    if summary is not None: p.summaries.append(summary)
    p.status, p.drained = rc, True
    if rc == 2: self.error = (err or f"worker {p.i} failed").split("error: ", 1)[-1]
    elif rc != 0: print(f"generate-dataset: worker {p.i} exited with {rc}: {err}", file=sys.stderr)

  def run(self, variants, progress:bool) -> int:
    self.merge_leftovers()
    extract_into(self.store, variants, self.device, progress, workers=os.cpu_count() or 1)   # the driver's host: nothing else runs yet
    parts, todo = self.plan(variants)
    st = last_log = time.perf_counter()
    bar = tqdm(total=todo, desc=f"measuring on {len(parts)} x {self.device} (Ray)", unit="cfg", disable=not progress, smoothing=0.05)
    try:
      for p in parts: self.start(p)
      while live := [p for p in parts if p.status is None]:
        ready, _ = self.ray.wait([p.ref for p in live], num_returns=len(live), timeout=PULL_S)
        bar.update(self.pull(live))   # after the wait: a run that returned has all its rows in its shard
        bar.set_postfix(ok=self.counts["ok"], failed=self.counts["failed"], ok_per_s=f"{self.counts['ok']/(time.perf_counter()-st):.1f}")
        for p in live:
          if p.ref in ready: self.done(p)
        if self.error is not None: break
        if not progress and time.perf_counter() - last_log > 30:
          last_log = time.perf_counter()
          print(json.dumps({"t": round(last_log-st), **self.counts, "ok_per_s": round(self.counts["ok"]/(last_log-st), 2),
                            "workers": len(live), "restarts": self.restarts}), flush=True)
    finally:
      bar.close()
      for p in parts:
        if p.actor is not None: self.ray.kill(p.actor)
    if self.error is not None: return fail(self.error)   # the shards stay: the next run merges them
    # merged shards go; one whose worker was given up on stays, for the next run to merge what the driver could not pull
    self.ray.get([self.on_node(_remove, p.node).remote(str(self.run_dir), [self.shard(p).name]) for p in parts if p.drained])
    secs = time.perf_counter() - st
    print(json.dumps({"summary": {**self.counts, "seconds": round(secs, 1), "ok_per_s": round(self.counts["ok"]/secs, 2) if secs else 0.0,
                                  "device": self.dev_name, "arch": self.arch, "ray_workers": len(parts), "workers": self.compile_workers,
                                  "restarts": self.restarts, "per_worker": [p.summaries for p in parts]}}), flush=True)
    return max((p.status or 0 for p in parts), default=0)

def run(a, entry:str="dataset.generate", load_scorer:LoadScorer|None=None) -> int:
  """generate-dataset --ray: checks, the Ray cluster, then the driver."""
  if a.out and (why := cannot_write(a.out)): return fail(why)   # before the cluster: an --out default waits for the device
  if a.model is not None:
    if load_scorer is None: return fail("--model: run generate-dataset (python -m models.generate), which loads cost models")
    if not Path(a.model).is_file(): return fail(f"no cost model file {a.model}: no such file")
  if a.mix is not None and a.mix.get("model", 0) > 0 and a.model is None: return fail("--mix model=... needs --model")
  try: select(a.kernels, a.device or "CUDA")   # an unknown kernel or a bad shape is one for every device: said before the cluster starts
  except ShapeError as e: return fail(str(e))
  except KeyError as e: return fail(e.args[0])
  try: import ray
  except ImportError: return fail("--ray needs Ray: pip install kerntune[ray]")
  own = not ray.is_initialized()
  if own:
    try: ray.init(address=None if a.ray == "local" else a.ray, include_dashboard=False, namespace=NAMESPACE, log_to_driver=a.no_progress,
                  logging_level="WARNING")
    except Exception as e: return fail(f"--ray {a.ray}: no Ray cluster ({one_line(e, 200)})")
  try:
    res = ray.cluster_resources()
    gpus, cpus = int(res.get("GPU", 0)), int(res.get("CPU", 0))
    device = a.device or ("CUDA" if gpus else "CPU")
    have = gpus if device == "CUDA" else cpus
    n = a.ray_workers or (gpus if device == "CUDA" else max(1, cpus // 2))
    if have < 1 or n > have: return fail(f"--ray: {n if have else 'a'} worker(s) on {device} need as many {'GPUs' if device == 'CUDA' else 'CPUs'}; the Ray cluster has {have}")
    out = Path(a.out or f"out/{device.lower()}.sqlite")
    if not a.out and (why := cannot_write(out)): return fail(why)
    try: variants = select(a.kernels, device)
    except ShapeError as e: return fail(str(e))
    except KeyError as e: return fail(e.args[0])
    if (lock := writer_lock(out)) is None: return fail(f"another generate-dataset is writing {out}")
    probe = ray.remote(num_gpus=1 if device == "CUDA" else 0, num_cpus=1, max_calls=1)(_probe)   # max_calls: its process exits, freeing the GPU
    try: dev = ray.get(probe.remote(device, a.model, load_scorer), timeout=START_S)
    except ray.exceptions.GetTimeoutError: return fail(f"--ray: no {device} of the cluster was free for {START_S:g} s")
    if isinstance(dev, str): return fail(dev)
    try:
      store = Store(out)
      try: return Driver(ray, a, device, n, out, store, dev, entry).run(variants, not a.no_progress)
      finally: store.close(compact=True)
    except (StoreError, ShapeError) as e: return fail(str(e))
    finally: lock.close()
  finally:
    if own: ray.shutdown()

# *** the scaling job's table (scripts/gpu_ray.sh writes ray_scaling.json) ***

def report(res:dict) -> str:
  """results/ray_scaling.md: ok measurements per second of the local path and of the Ray path on 1 and on N GPUs, for the same seconds."""
  lines = [f"# Ray scaling: generate-dataset on {res['device']}, {res['date']}", "",
           (f"Each run measures for {res['seconds']} s (--time-budget) on its own third of the kernels (disjoint, each family dealt "
            f"evenly), resuming from the store" if len(res["runs"]) > 1 else f"One run (FULL=1) of {res['seconds']} s (--time-budget) "
            f"over every kernel selected, resuming from the store") + f"; ok/s counts the ok rows it added. Command: `{res['command']}`", "",
           "| run | GPUs | ok | ok/s | ok/s per GPU |", "|---|---:|---:|---:|---:|"]
  for r in res["runs"]:
    lines.append(f"| {r['name']} | {r['gpus']} | {r['ok']} | {r['ok_per_s']:.2f} | {r['ok_per_s']/r['gpus']:.2f} |")
  lines += ["", *(f"- {k}: {v:.3f}" for k, v in res.get("ratios", {}).items())]
  if (m := res.get("merge")) is not None:
    lines += ["", f"Merge of the new rows into the store: {m['before']} + {m['delta']} = {m['after']} finished rows "
                  f"({'nothing lost or duplicated' if m['ok'] else 'MISMATCH'})."]
  return "\n".join(lines) + "\n"

def main(argv=None) -> int:
  import argparse
  ap = argparse.ArgumentParser("dataset.ray_generate", description="the Ray scaling job's table (generate-dataset --ray runs the generator)")
  ap.add_argument("--report", required=True, metavar="JSON", help="ray_scaling.json of scripts/gpu_ray.sh: its markdown table on stdout")
  a = ap.parse_args(argv)
  try: res = json.loads(Path(a.report).read_text())
  except (OSError, ValueError) as e: print(f"dataset.ray_generate: error: {a.report}: {one_line(e)}", file=sys.stderr); return 2
  print(report(res), end="")
  return 0

if __name__ == "__main__": sys.exit(main())
