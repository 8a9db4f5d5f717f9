"""Compile-side labels of measured configs: registers per thread and stack frame (local memory, i.e. spills) of the config's
sm_90 CUBIN. They need NVRTC but no GPU, so any machine can produce them; the cost model learns them as an auxiliary target
(register pressure is what its features see worst: one opt past a kernel's best can spill and run 4-6x slower).

  python -m dataset.resources export dataset/data/cuda.sqlite tasks.json.gz --per 16     # a sample of each kernel's configs
  NVRTC_PATH=.../libnvrtc.so.12 python -m dataset.resources run tasks.json.gz dataset/data/cuda.resources.jsonl.gz --procs 2
Output (appended; a run resumes where the file stops): one JSON line per config: kernel key, opts (the store's JSON), regs, frame,
compile seconds; or an error. load_labels reads them back for models.resources."""
from __future__ import annotations
import argparse, base64, gzip, json, os, random, struct, time
from multiprocessing import Pool
from pathlib import Path
import numpy as np

def labels_path(store:str|os.PathLike) -> Path:
  """Where a store's compile labels live: dataset/data/cuda.sqlite -> dataset/data/cuda.resources.jsonl.gz"""
  return Path(store).with_suffix(".resources.jsonl.gz")

def load_labels(path:str|os.PathLike, kernel:np.ndarray, opts:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """(regs, frame) per row of a dataset (kernel keys, opts JSON), NaN where the labels file has none."""
  got = {}
  with gzip.open(path, "rt") as f:
    for line in f:
      r = json.loads(line)
      if "regs" in r: got[(r["key"], r["opts"])] = (r["regs"], r.get("frame", 0))
  a = np.array([got.get((k, o), (np.nan, np.nan)) for k, o in zip(kernel.tolist(), opts.tolist())], dtype=np.float64).reshape(-1, 2)
  return a[:, 0], a[:, 1]

def resources(cubin:bytes) -> dict[str, int]:
  """Registers per thread (EIATTR_REGCOUNT, 0x2f) and stack frame bytes (EIATTR_FRAME_SIZE, 0x11) from a cubin's .nv.info."""
  shoff, = struct.unpack_from("<Q", cubin, 0x28)
  shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3a)
  sh = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i*shentsize) for i in range(shnum)]
  strs = sh[shstrndx][4]
  name = lambda off: cubin[strs+off:cubin.index(b"\0", strs+off)].decode()
  out = {}
  for h in sh:
    if name(h[0]) != ".nv.info": continue
    off, end = h[4], h[4] + h[5]
    while off < end:   # records: format byte, attribute byte, u16 (a size for format 0x04, else the value itself)
      fmt, attr, size = struct.unpack_from("<BBH", cubin, off)
      if fmt == 0x04 and size == 8 and attr in (0x2f, 0x11): out["regs" if attr == 0x2f else "frame"] = struct.unpack_from("<II", cubin, off+4)[1]
      off += 4 + (size if fmt == 0x04 else 0)
  return out

def export(store_path:str, out:str, per:int, seed:int):
  """`per` random ok configs of every kernel (of the store with its shards, dataset.shard), interleaved across kernels so that a run
  cut short still covers them all."""
  from dataset.shard import resolve
  from dataset.store import Store
  s = Store(resolve(store_path).path, readonly=True)
  by: dict[str, list[str]] = {}
  for k, o in s.db.execute("SELECT kernel, opts FROM measurements WHERE status='ok'"): by.setdefault(k, []).append(o)
  rng, cols = random.Random(seed), []
  for k in sorted(by):
    os_ = sorted(by[k]); rng.shuffle(os_); cols.append([(k, o) for o in os_[:per]])
  tasks = [c[i] for i in range(per) for c in cols if i < len(c)]
  asts = {r["key"]: base64.b64encode(r["ast"]).decode() for r in s.kernels() if r["key"] in by}
  with gzip.open(out, "wt") as f: json.dump(dict(asts=asts, tasks=tasks), f)
  print(f"{out}: {len(tasks)} configs of {len(asts)} kernels")

_W: dict = {}
def _init(asts:dict[str, str]):
  from dataset.device import renderer_for
  ren = renderer_for("CUDA", arch="sm_90")
  ren.compiler.ptx, ren.compiler.cachekey = False, None   # SASS: registers and frame are known only after ptxas
  _W.update(ren=ren, asts=asts, base={})

def _one(task:tuple[str, str]) -> dict:
  from dataset.kernel import Kernel, scheduler, opts_from_json
  from dataset.compile import optimized_ast, compile_ast
  key, opts = task
  try:
    if key not in _W["base"]: _W["base"] = {key: scheduler(Kernel.ast_from_blob(base64.b64decode(_W["asts"][key])), _W["ren"])}
    st = time.perf_counter()
    prg = compile_ast(optimized_ast(_W["base"][key], opts_from_json(json.loads(opts))), _W["ren"])
    lib = next(u.arg for u in prg.src if isinstance(u.arg, bytes))
    return dict(key=key, opts=opts, compile_s=round(time.perf_counter() - st, 3), **resources(lib))
  except Exception as e: return dict(key=key, opts=opts, error=f"{type(e).__name__}: {str(e)[:300]}")

class ResourcesError(RuntimeError): pass

def run(tasks_path:str, out:str, procs:int, seconds:float):
  from dataset.device import renderer_for
  try: renderer_for("CUDA", arch="sm_90")   # here, once: a pool whose initializer fails restarts its workers forever
  except Exception as e: raise ResourcesError(f"no NVRTC to compile sm_90 with ({type(e).__name__}: {e}); set NVRTC_PATH to a libnvrtc.so.12") from None
  with gzip.open(tasks_path, "rt") as f: d = json.load(f)
  done, opener = set(), gzip.open if out.endswith(".gz") else open   # appending to a .gz adds a gzip member: still one readable file
  if os.path.exists(out):
    with opener(out, "rt") as f: done = {(r["key"], r["opts"]) for r in map(json.loads, f)}
  todo = [tuple(t) for t in d["tasks"] if tuple(t) not in done]
  print(f"{len(todo)} of {len(d['tasks'])} configs to compile, {procs} processes", flush=True)
  st, n = time.perf_counter(), 0
  with Pool(procs, _init, (d["asts"],)) as p, opener(out, "at") as f:
    for r in p.imap_unordered(_one, todo, chunksize=2):
      f.write(json.dumps(r) + "\n"); n += 1
      if n % 500 == 0: f.flush(); print(f"{n} compiled, {time.perf_counter() - st:.0f} s", flush=True)
      if time.perf_counter() - st > seconds: break   # leaving the with-block terminates the pool; the file keeps every line
  print(f"{n} compiled in {time.perf_counter() - st:.0f} s", flush=True)

if __name__ == "__main__":
  ap = argparse.ArgumentParser("dataset.resources")
  sub = ap.add_subparsers(dest="cmd", required=True)
  e = sub.add_parser("export"); e.add_argument("store"); e.add_argument("out"); e.add_argument("--per", type=int, default=16); e.add_argument("--seed", type=int, default=0)
  r = sub.add_parser("run"); r.add_argument("tasks"); r.add_argument("out"); r.add_argument("--procs", type=int, default=os.cpu_count()); r.add_argument("--seconds", type=float, default=float("inf"))
  a = ap.parse_args()
  try:
    if a.cmd == "export": export(a.store, a.out, a.per, a.seed)
    else: run(a.tasks, a.out, a.procs, a.seconds)
  except (ResourcesError, OSError) as e: raise SystemExit(f"dataset.resources: error: {e}")
