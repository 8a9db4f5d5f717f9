"""Do two runs of SWAPs that permute a kernel's axes the same way build the same program on sm_90? SWAP(a, b) exchanges the ranges
at positions a and b (tinygrad's postrange: their ids swap, and the ranges stay sorted by id), so a run of SWAPs composes into one
permutation of positions. For the H200 store's configs (each under 2 s to compile) holding a run of two or more SWAPs: the run
replaced by the fewest SWAPs that make the same permutation (none where it is the identity), both compiled to sm_90 CUBIN with
NVRTC (no GPU) and their binaries compared. They match (swap_runs_sm90.txt), and for a reason that needs no rule in search.commute:
such runs schedule the very same AST (the same ast.key), and the beam already drops a child whose AST key it has seen.
  NVRTC_PATH=.../libnvrtc.so.12 python results/logs/compile/swap_runs.py 150 > results/logs/compile/swap_runs_sm90.txt"""
import gzip, hashlib, json, random, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tinygrad.codegen.opt import Opt, OptOps
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
from dataset.compile import optimized_ast, compile_ast
from dataset.store import Store
from dataset.sampler import replay

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

ren = renderer_for("CUDA", arch="sm_90"); ren.compiler.ptx, ren.compiler.cachekey = False, None
rs = [json.loads(l) for l in gzip.open("dataset/data/cuda.resources.jsonl.gz", "rt")]
random.Random(0).shuffle(rs)
s = Store("dataset/data/cuda.sqlite", readonly=True)
cands = []
for r in rs:
  if r.get("compile_s", 99) > 2: continue
  o = opts_from_json(json.loads(r["opts"]) if isinstance(r["opts"], str) else r["opts"])
  if any(o[j].op is OptOps.SWAP and o[j+1].op is OptOps.SWAP for j in range(len(o)-1)) and (w := swap_runs_canonical(o)) != o:
    cands.append((r["key"], o, w))
  if len(cands) >= int(sys.argv[1]): break
asts = {r["key"]: r["ast"] for r in s.kernels() if r["key"] in {c[0] for c in cands}}
lib = lambda p: hashlib.sha1(next(u.arg for u in p.src if isinstance(u.arg, bytes))).hexdigest()
same = diff = bad = ast_same = 0; shorter = [0, 0]
for key, o, w in cands:
  base = scheduler(Kernel.ast_from_blob(asts[key]), ren)
  try: a, b = lib(compile_ast(optimized_ast(base, o), ren)), lib(compile_ast(optimized_ast(base, w), ren))
  except Exception: bad += 1; continue
  same += a == b; diff += a != b; shorter[a != b] += len(w) < len(o)
  ast_same += replay(base, o).ast.key == replay(base, w).ast.key   # the key Beam's seen set holds (search.context)
print(f"{len(cands)} configs with a run of SWAPs, the run replaced by the fewest SWAPs of the same permutation: same binary {same}, "
      f"different {diff}, invalid {bad}; of them fewer opts: {shorter[0]} same, {shorter[1]} different; the same scheduled AST (ast.key): {ast_same}")
