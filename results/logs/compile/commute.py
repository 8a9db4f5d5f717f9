"""Which adjacent opts commute in sm_90 code? For configs of the H200 store's compile-label sample (dataset/data/cuda.resources.jsonl.gz,
each under 2 s to compile) that hold an adjacent pair of a reduce-axis op (UNROLL, GROUP, GROUPTOP) and a global-axis op (UPCAST,
LOCAL), one such pair swapped: both orders compiled to sm_90 CUBIN with NVRTC (no GPU) and their binaries compared. A search that
knew which pairs commute could skip compiling a reordering of a config it has (the learned beam's duplicates are such reorderings:
duplicates_cpu.py).   NVRTC_PATH=.../libnvrtc.so.12 python results/logs/compile/commute.py 120 > results/logs/compile/commute_sm90.txt
With `all`: any adjacent pair of two different opts outside those, e.g. two UPCASTs on different axes (the CPU device's remaining
duplicates are such: duplicates_cpu.txt):   ... commute.py 200 all > results/logs/compile/commute_all_sm90.txt
With `cpu`: on the CPU device (clang), the CPU store's configs with THREAD (the CPU's threads) next to an UPCAST or an UNROLL, the
rest of the CPU's duplicates:   python results/logs/compile/commute.py 200 cpu > results/logs/compile/commute_thread_cpu.txt"""
import gzip, hashlib, json, random, sqlite3, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tinygrad.codegen.opt import OptOps
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
from dataset.compile import optimized_ast, compile_ast
from dataset.store import Store
RED, GLB = {OptOps.UNROLL, OptOps.GROUP, OptOps.GROUPTOP}, {OptOps.UPCAST, OptOps.LOCAL}
ALL, CPU = sys.argv[2:] == ["all"], sys.argv[2:] == ["cpu"]
if CPU:
  ren, s = renderer_for("CPU"), Store("dataset/data/cpu.sqlite", readonly=True)
  rs = [{"key": k, "opts": o, "compile_s": c or 0} for k, o, c in
        sqlite3.connect("dataset/data/cpu.sqlite").execute("SELECT kernel, opts, compile_s FROM measurements WHERE status='ok'")]
else:
  ren = renderer_for("CUDA", arch="sm_90"); ren.compiler.ptx, ren.compiler.cachekey = False, None
  rs, s = [json.loads(l) for l in gzip.open("dataset/data/cuda.resources.jsonl.gz", "rt")], Store("dataset/data/cuda.sqlite", readonly=True)
random.Random(0).shuffle(rs)
cands = []
for r in rs:
  if r.get("compile_s", 99) > 2: continue
  o = opts_from_json(json.loads(r["opts"]) if isinstance(r["opts"], str) else r["opts"])
  rg = lambda x, y: (x.op in RED and y.op in GLB) or (x.op in GLB and y.op in RED)
  th = lambda x, y: OptOps.THREAD in (x.op, y.op) and {x.op, y.op} & {OptOps.UPCAST, OptOps.UNROLL}
  js = [j for j in range(len(o)-1) if (th(o[j], o[j+1]) if CPU else rg(o[j], o[j+1]) if not ALL else o[j] != o[j+1] and not rg(o[j], o[j+1]))]
  if js: cands.append((r["key"], o, random.Random(len(cands)).choice(js)))
  if len(cands) >= int(sys.argv[1]): break
asts = {r["key"]: r["ast"] for r in s.kernels() if r["key"] in {c[0] for c in cands}}
lib = lambda p: hashlib.sha1(next(u.arg for u in p.src if isinstance(u.arg, bytes))).hexdigest()
same = diff = bad = 0; pairs = {}
for key, o, j in cands:
  base = scheduler(Kernel.ast_from_blob(asts[key]), ren)
  w = o[:j] + (o[j+1], o[j]) + o[j+2:]
  try: a, b = lib(compile_ast(optimized_ast(base, o), ren)), lib(compile_ast(optimized_ast(base, w), ren))
  except Exception: bad += 1; continue
  k = (o[j].op.name, o[j+1].op.name, o[j].axis == o[j+1].axis)
  pairs.setdefault(k, [0, 0])[a != b] += 1
  same += a == b; diff += a != b
print(f"{len(cands)} configs with an adjacent {'THREAD and UPCAST/UNROLL pair' if CPU else 'pair of different opts (not reduce/global)' if ALL else 'reduce/global pair'} swapped: same binary {same}, different {diff}, swapped order invalid {bad}")
for k, v in sorted(pairs.items()): print(f"  {k[0]} then {k[1]} (same axis index {k[2]}): same {v[0]}, different {v[1]}")
