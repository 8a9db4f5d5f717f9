"""Which orders of a config's opts build the same binary? Configs of a store, each under 2 s to compile, with one order changed;
both orders compiled and their binaries compared (search.commute's rules come from this). Modes (the second argument):
- (none): on sm_90 (NVRTC, no GPU), the H200 store's compile-label sample (dataset/data/cuda.resources.jsonl.gz): an adjacent pair of
  a reduce-axis op (UNROLL, GROUP, GROUPTOP) and a global-axis op (UPCAST, LOCAL) swapped (the learned beam's duplicates are such
  reorderings: duplicates_cpu.py).   NVRTC_PATH=.../libnvrtc.so.12 python results/logs/compile/commute.py 120 > commute_sm90.txt
- all: any other adjacent pair of two different opts, e.g. two UPCASTs on different axes (the CPU's remaining duplicates are such:
  duplicates_cpu.txt).   ... commute.py 200 all > results/logs/compile/commute_all_sm90.txt
- cpu: on the CPU device (clang), the CPU store's configs with THREAD (the CPU's threads) next to an UPCAST or an UNROLL, the rest of
  the CPU's duplicates.   python results/logs/compile/commute.py 200 cpu > results/logs/compile/commute_thread_cpu.txt
- swaps: on sm_90, a run of two or more SWAPs replaced by the fewest SWAPs that permute the axes the same way (none for the
  identity). SWAP(a, b) exchanges the ranges at positions a and b (tinygrad's postrange: their ids swap, and the ranges stay sorted
  by id), so a run composes into one permutation. Such runs schedule the very same AST (ast.key), which the beam's seen set drops
  already: no rule needed.   ... commute.py 150 swaps > results/logs/compile/swap_runs_sm90.txt"""
import gzip, hashlib, json, random, sqlite3, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tinygrad.codegen.opt import Opt, OptOps
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
from dataset.compile import optimized_ast, compile_ast
from dataset.sampler import replay
from dataset.store import Store

def swap_runs_canonical(opts:tuple[Opt, ...]) -> tuple[Opt, ...]:
  """Each run of adjacent SWAPs replaced by the fewest SWAPs that permute the axes the same way (none for the identity)."""
  out, i = [], 0
  while i < len(opts):
    if opts[i].op is not OptOps.SWAP: out.append(opts[i]); i += 1; continue
    j = i
    while j < len(opts) and opts[j].op is OptOps.SWAP: j += 1
    p = list(range(1 + max(max(o.axis, o.arg) for o in opts[i:j])))
    for o in opts[i:j]: p[o.axis], p[o.arg] = p[o.arg], p[o.axis]
    q = list(range(len(p)))
    for a in range(len(p)):
      if q[a] != p[a]:
        b = q.index(p[a]); out.append(Opt(OptOps.SWAP, a, b)); q[a], q[b] = q[b], q[a]
    i = j
  return tuple(out)

RED, GLB = {OptOps.UNROLL, OptOps.GROUP, OptOps.GROUPTOP}, {OptOps.UPCAST, OptOps.LOCAL}
MODE = sys.argv[2] if len(sys.argv) > 2 else ""
rg = lambda x, y: (x.op in RED and y.op in GLB) or (x.op in GLB and y.op in RED)
th = lambda x, y: OptOps.THREAD in (x.op, y.op) and {x.op, y.op} & {OptOps.UPCAST, OptOps.UNROLL}
PAIR = {"": rg, "all": lambda x, y: x != y and not rg(x, y), "cpu": th}
if MODE == "cpu":
  ren, s = renderer_for("CPU"), Store("dataset/data/cpu.sqlite", readonly=True)
  rs = [{"key": k, "opts": o, "compile_s": c or 0} for k, o, c in
        sqlite3.connect("dataset/data/cpu.sqlite").execute("SELECT kernel, opts, compile_s FROM measurements WHERE status='ok'")]
else:
  ren = renderer_for("CUDA", arch="sm_90"); ren.compiler.ptx, ren.compiler.cachekey = False, None
  rs, s = [json.loads(l) for l in gzip.open("dataset/data/cuda.resources.jsonl.gz", "rt")], Store("dataset/data/cuda.sqlite", readonly=True)
random.Random(0).shuffle(rs)
cands = []   # (kernel key, opts, the other order, what was changed)
for r in rs:
  if r.get("compile_s", 99) > 2: continue
  o = opts_from_json(json.loads(r["opts"]) if isinstance(r["opts"], str) else r["opts"])
  if MODE == "swaps":
    if any(o[j].op is OptOps.SWAP and o[j+1].op is OptOps.SWAP for j in range(len(o)-1)) and (w := swap_runs_canonical(o)) != o:
      cands.append((r["key"], o, w, "fewer opts" if len(w) < len(o) else "as many opts"))
  elif js := [j for j in range(len(o)-1) if PAIR[MODE](o[j], o[j+1])]:
    j = random.Random(len(cands)).choice(js)
    cands.append((r["key"], o, o[:j] + (o[j+1], o[j]) + o[j+2:], f"{o[j].op.name} then {o[j+1].op.name} (same axis index {o[j].axis == o[j+1].axis})"))
  if len(cands) >= int(sys.argv[1]): break
asts = {r["key"]: r["ast"] for r in s.kernels() if r["key"] in {c[0] for c in cands}}
lib = lambda p: hashlib.sha1(next(u.arg for u in p.src if isinstance(u.arg, bytes))).hexdigest()
same = diff = bad = ast_same = 0; kinds: dict[str, list[int]] = {}
for key, o, w, kind in cands:
  base = scheduler(Kernel.ast_from_blob(asts[key]), ren)
  try: a, b = lib(compile_ast(optimized_ast(base, o), ren)), lib(compile_ast(optimized_ast(base, w), ren))
  except Exception: bad += 1; continue
  kinds.setdefault(kind, [0, 0])[a != b] += 1
  same += a == b; diff += a != b
  ast_same += replay(base, o).ast.key == replay(base, w).ast.key   # the key the beam's seen set holds (search.context)
what = {"": "an adjacent reduce/global pair swapped", "all": "an adjacent pair of different opts (not reduce/global) swapped",
        "cpu": "an adjacent THREAD and UPCAST/UNROLL pair swapped", "swaps": "a run of SWAPs replaced by the fewest of the same permutation"}[MODE]
print(f"{len(cands)} configs with {what}: same binary {same}, different {diff}, other order invalid {bad}; the same scheduled AST (ast.key) {ast_same}")
for k, v in sorted(kinds.items()): print(f"  {k}: same {v[0]}, different {v[1]}")
